"""``evalkit.stats.compare_tables``: the compare JSON contract, run directories, conditions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalkit
from evalkit.errors import InputError, RunNotFoundError
from evalkit.stats import CompareOptions, compare_tables as compare

CASE_KEYS = {"case_id", "condition", "verdict", "estimate", "ci_low", "ci_high"}
TOP_KEYS = {
    "verdict",
    "metric",
    "delta",
    "wins",
    "losses",
    "ties",
    "n_cases",
    "cases",
    "regressed_cases",
    "improved_cases",
}


def _run(
    rates: dict[str, list[float]],
    trials: int = 3,
    seed: int = 0,
    cases: int = 20,
    provider: str | list[str] = "simulated",
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    providers = [provider] if isinstance(provider, str) else provider
    rows = []
    for condition, per_case in rates.items():
        for prov in providers:
            for i in range(cases):
                for t in range(trials):
                    rows.append(
                        {
                            "run_id": "r",
                            "item_key": f"prompt:c{i:02d}:{condition}:{prov}:{t}",
                            "item_hash": f"h{i}{condition}{prov}{t}",
                            "case_id": f"c{i:02d}",
                            "condition": condition,
                            "provider": prov,
                            "trial": t,
                            "status": "ok",
                            "passed": bool(rng.random() < per_case[i % len(per_case)]),
                            "score": float(rng.random()),
                        }
                    )
    return pd.DataFrame(rows)


def test_compare_to_dict_has_the_design_shape() -> None:
    base = _run({"none": [0.3]}, seed=1)
    cand = _run({"none": [0.9]}, seed=2)
    result = compare(base, cand, options=CompareOptions(n_resamples=2000))
    out = result.to_dict()
    extended = {"threshold", "unmatched", "baseline_label", "candidate_label"}
    extended |= {"sign_flip", "verdict_note"}
    extended |= {"reused_items", "reuse_note", "by_condition", "pooled", "scope"}
    extended |= {"judge_calibration"}  # null unless a compared row was judged
    extended |= {"by_provider", "pooled_providers", "heterogeneity"}  # empty/null: 1 provider
    extended |= {"ungraded_items", "ungraded_note"}  # items with no outcome yet, left out
    extended |= {"next_step"}  # null unless the verdict is inconclusive (evalkit.analysis)
    extended |= {"left_out_providers", "unmatched_summary"}  # why providers/items unpaired
    extended |= {"case_verdict_note"}  # why no case could be named (too few trials)
    extended |= {"equivalence"}  # "no practical difference" beside the three-way verdict
    extended |= {"named_cases", "case_summary", "case_screen", "case_interaction"}  # pooled
    extended |= {"failure_changes"}  # failing items by outcome and cause, baseline -> candidate
    extended |= {"report_metrics"}  # the compare_metric plugins: [{name, label, value, ...}]
    assert set(out) == TOP_KEYS | extended  # the contract's keys, extended
    assert (out["ungraded_items"], out["ungraded_note"]) == (0, "")
    assert (out["baseline_label"], out["candidate_label"]) == ("baseline", "candidate")
    assert set(out["delta"]) == {"estimate", "ci_low", "ci_high"}
    assert out["verdict"] == "improved"
    assert out["metric"] == "passed"
    assert out["n_cases"] == 20 == len(out["cases"])
    # each case extended with its raw and corrected p and the rule that decided it
    assert all(set(case) == CASE_KEYS | {"p_value", "p_adjusted", "decided_by"}
               for case in out["cases"])
    assert out["wins"] + out["losses"] + out["ties"] == 20
    assert all(type(v) is float for v in out["delta"].values())
    for key in ("wins", "losses", "ties", "n_cases"):
        assert type(out[key]) is int
    assert all(isinstance(c, str) for c in out["improved_cases"] + out["regressed_cases"])
    text = json.dumps(out, allow_nan=False)
    assert json.loads(text) == out


def test_compare_is_seeded_and_reports_regressions() -> None:
    base = _run({"none": [0.9]}, seed=3, trials=10)
    cand = _run({"none": [0.9] * 19 + [0.0]}, seed=4, trials=10)
    first = compare(base, cand, options=CompareOptions(n_resamples=2000, seed=5)).to_dict()
    second = compare(base, cand, options=CompareOptions(n_resamples=2000, seed=5)).to_dict()
    assert first == second
    assert first["regressed_cases"] == ["c19"]
    regressed = [c for c in first["cases"] if c["verdict"] == "regressed"]
    assert [c["case_id"] for c in regressed] == ["c19"]


def test_compare_two_conditions_of_one_run() -> None:
    run = _run({"none": [0.2], "preloaded": [0.8], "stale": [0.5]}, seed=6)
    result = compare(run, conditions=("none", "preloaded"),
        options=CompareOptions(n_resamples=2000))
    out = result.to_dict()
    assert {c["condition"] for c in out["cases"]} == {"preloaded vs none"}
    assert (out["baseline_label"], out["candidate_label"]) == ("none", "preloaded")
    assert out["n_cases"] == 20
    assert out["verdict"] == "improved"
    reverse = compare(run, conditions=("preloaded", "none"),
        options=CompareOptions(n_resamples=2000))
    assert reverse.delta.estimate == pytest.approx(-result.delta.estimate)
    assert reverse.verdict == "regressed"


def test_compare_two_runs_restricted_to_conditions() -> None:
    base = _run({"none": [0.5], "preloaded": [0.5]}, seed=7)
    cand = _run({"none": [0.5], "preloaded": [0.5]}, seed=8)
    result = compare(base, cand, conditions=["preloaded"], options=CompareOptions(n_resamples=500))
    assert set(result.cases["condition"]) == {"preloaded"}
    both = compare(base, cand, options=CompareOptions(n_resamples=500))
    assert len(both.cases) == 40  # one row per (case, condition)
    assert both.n_cases == 20  # the pooled figures count each case once
    assert both.pooled_conditions == ("none", "preloaded")


def test_compare_matches_on_provider_when_runs_hold_several() -> None:
    base = _run({"none": [0.5]}, seed=9, provider=["a", "b"])
    cand = _run({"none": [0.5]}, seed=10, provider=["a", "b"])
    result = compare(base, cand, options=CompareOptions(n_resamples=500))
    # the 20 cases are shared by both providers: each counts once (clustered by case), while
    # the per-unit table keeps one row per (case, provider)
    assert result.n_cases == 20
    assert len(result.to_dict()["cases"]) == 40
    assert all("provider" in case for case in result.to_dict()["cases"])
    assert set(result.to_dict()["by_provider"]) == {"a", "b"}
    # one provider per run (different ones): compared across providers, matched on case
    single = compare(_run({"none": [0.5]}, provider="a"), _run({"none": [0.5]}, provider="b"),
        options=CompareOptions(n_resamples=500))
    assert single.n_cases == 20
    assert "provider" not in single.to_dict()["cases"][0]


def test_compare_score_metric() -> None:
    base = _run({"none": [0.5]}, seed=11)
    cand = base.assign(score=np.clip(base["score"] + 0.3, 0, 1))
    out = compare(base, cand, options=CompareOptions(metric="score", n_resamples=1000)).to_dict()
    assert out["metric"] == "score"
    assert out["verdict"] == "improved"


def test_run_level_compare_reads_run_directories(tmp_path: Path) -> None:
    for name, seed, rate in (("before", 12, 0.3), ("after", 13, 0.9)):
        run_dir = tmp_path / name
        run_dir.mkdir()
        df = _run({"none": [rate]}, seed=seed)
        df.loc[0, "status"] = "error"
        df.loc[1, "status"] = "skipped"
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), run_dir / "results.parquet")
    by_path = evalkit.compare(tmp_path / "before", str(tmp_path / "after"), n_resamples=1000)
    by_id = evalkit.compare("before", "after", runs_dir=tmp_path, n_resamples=1000)
    assert by_path.to_dict() == by_id.to_dict()
    assert by_path.verdict == "improved"
    assert (by_path.baseline_label, by_path.candidate_label) == ("before", "after")
    # the skipped row is excluded: case c00 has 2 baseline trials
    row = by_path.cases.set_index("case_id").loc["c00"]
    assert row["n_baseline"] == 2 and row["n_candidate"] == 2
    with pytest.raises(RunNotFoundError):
        evalkit.compare("nope", "after", runs_dir=tmp_path)
    # statistics take tables: a path is refused with a pointer to the readers
    with pytest.raises(InputError, match="read_run"):
        compare(tmp_path / "before", tmp_path / "after")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "needs a candidate run"),
        ({"conditions": ("none",)}, "needs a candidate run"),
        ({"conditions": ("none", "none")}, "two different conditions"),
        ({"conditions": ("none", "oracle")}, "condition 'oracle' is not in the run"),
        ({"conditions": ("none", "preloaded"), "metric": "latency"}, "`metric` must be one of"),
    ],
)
def test_compare_rejects_bad_arguments(kwargs: dict[str, object], match: str) -> None:
    run = _run({"none": [0.5], "preloaded": [0.5]}, cases=3)
    settings = {k: kwargs.pop(k) for k in list(kwargs) if k in CompareOptions.model_fields}
    with pytest.raises(InputError, match=match):
        compare(run, **kwargs, options=CompareOptions(**settings))  # type: ignore[arg-type]


def test_compare_rejects_non_frame_input() -> None:
    with pytest.raises(InputError, match="must be a run directory"):
        evalkit.compare([1, 2, 3], [1, 2, 3])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="must be a pandas DataFrame, but a list"):
        compare([1, 2, 3], [1, 2, 3])  # type: ignore[arg-type]


def test_compare_keeps_lanes_apart_when_case_ids_repeat() -> None:
    prompt = _run({"none": [0.5]}, seed=14, cases=10).assign(lane="prompt")
    execution = _run({"none": [0.5]}, seed=15, cases=10).assign(lane="execution")
    run = pd.concat([prompt, execution], ignore_index=True)
    result = compare(run, run.assign(passed=~run["passed"]),
        options=CompareOptions(n_resamples=500))
    assert result.n_cases == 20
    assert {case["lane"] for case in result.to_dict()["cases"]} == {"prompt", "execution"}
