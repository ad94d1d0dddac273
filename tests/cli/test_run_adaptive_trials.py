"""``evalkit run --until-verdict --adaptive-trials`` on the demo suite (simulated agent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit.stats import (
    AdaptiveTrials,
    as_frame,
    sequential_compare_tables as sequential_compare,
    stage_two_draw,
)
from tests.cli.test_run_until_verdict import _sequential
from tests.conftest import evalkit_cli, until_verdict_args as _args


def _compare_json(run_dir: Path) -> dict[str, Any]:
    shown = evalkit_cli("compare", run_dir, "--sequential", "--json")
    assert shown.returncode == 0, shown.stderr
    out: dict[str, Any] = json.loads(shown.stdout)
    return out


@pytest.mark.slow
def test_adaptive_trials_run_stage_two_only_where_needed_and_correct_the_estimate(
    tmp_path: Path,
) -> None:
    done = evalkit_cli(*_args(tmp_path, "ad", "--adaptive-trials", "--json"))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    record = _sequential(tmp_path / "ad")
    adaptive = record["adaptive"]
    assert {k: adaptive[k] for k in ("total_trials", "first_trials", "seed")} == {
        "total_trials": 3,
        "first_trials": 1,
        "seed": 0,
    }
    assert adaptive["probability"] == 2 / 3
    design = AdaptiveTrials(3, 1, adaptive["probability"], 0)
    rows = evalkit.read_run(tmp_path / "ad")
    frame = as_frame(rows, required=("case_id", "condition", "trial"))
    n_cases = out["stopped_at"] or out["looks"][-1]["n_cases"]
    assert set(adaptive["cases"]) == set(record["order"][:n_cases]) == set(rows["case_id"])
    for case, entry in adaptive["cases"].items():
        trials = frame[frame["case_id"] == case].groupby("condition")["trial"].nunique()
        first = frame[(frame["case_id"] == case) & (frame["trial"] == 0)]["passed"]
        differs = first.nunique() > 1
        assert entry["drawn"] == stage_two_draw(design, case)
        assert entry["stage_two"] == (differs or entry["drawn"])
        assert entry["probability"] == (1.0 if differs else 2 / 3)
        assert trials.to_dict() == {
            c: 3 if entry["stage_two"] else 1 for c in ("none", "preloaded")
        }
    assert any(not e["stage_two"] for e in adaptive["cases"].values())  # trials were saved
    assert len(rows) == out["items"] < n_cases * 2 * 3
    assert out["adaptive"]["bound"] == 1.0 and "unbiased" in out["adaptive"]["estimator"]
    # the looks are the library's corrected sequence over the run on disk
    again = sequential_compare(
        rows,
        conditions=("none", "preloaded"),
        order=record["order"],
        look_at=[5 * k for k in range(1, out["rounds"] + 1)],
        adaptive=design,
    )
    assert [(x.n_cases, x.ci_low, x.ci_high) for x in again.looks] == [
        (x["n_cases"], x["ci_low"], x["ci_high"]) for x in out["looks"]
    ]
    # compare --sequential reads the run with its design: the same looks and the design
    read_back = _compare_json(tmp_path / "ad")
    assert read_back["looks"] == out["looks"]
    assert read_back["adaptive"] == out["adaptive"]
    # a resumed run plans the same items: nothing is run again, the looks are the same
    resumed = evalkit_cli(*_args(tmp_path, "ad", "--adaptive-trials", "--json", "--resume"))
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["looks"] == out["looks"]
    assert len(evalkit.read_run(tmp_path / "ad")) == len(rows)


def test_without_the_flag_every_case_runs_every_trial_and_no_design_is_recorded(
    tmp_path: Path,
) -> None:
    done = evalkit_cli(*_args(tmp_path, "off", "--json", "--max-rounds", "1"))
    assert done.returncode == 0, done.stderr
    assert "adaptive" not in json.loads(done.stdout)
    assert _sequential(tmp_path / "off").get("adaptive") is None
    assert len(evalkit.read_run(tmp_path / "off")) == 5 * 2 * 3


def test_bad_adaptive_options_are_refused_with_the_fix(tmp_path: Path) -> None:
    one = evalkit_cli(*_args(tmp_path, "one", "--adaptive-trials", "--trials", "1"))
    assert one.returncode == 2
    assert "--adaptive-trials needs at least 2 trials" in one.stderr and "--trials 3" in one.stderr
    alone = evalkit_cli(*_args(tmp_path, "alone", "--stage-two-probability", "0.5"))
    assert alone.returncode == 2
    assert "--stage-two-probability: only with --adaptive-trials" in alone.stderr
    wrong = evalkit_cli(
        *_args(tmp_path, "wrong", "--adaptive-trials", "--stage-two-probability", "0")
    )
    assert wrong.returncode == 2 and "(0, 1]" in wrong.stderr
    plain = [a for a in _args(tmp_path, "plain") if a not in ("--until-verdict",)]
    refused = evalkit_cli(*plain, "--adaptive-trials")
    assert refused.returncode == 2 and "only with --until-verdict" in refused.stderr
    for done in (one, alone, wrong, refused):
        assert "Traceback" not in done.stderr
