"""Real runs of the simulated agent: cache copies and same-seed reruns are no evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evalkit import read_run
from evalkit.analysis import gate
from tests.conftest import TINY, evalkit_cli

CONDITIONS = ["none", "preloaded", "self-load", "stale"]


def _run(runs: Path, run_id: str, *extra: str, suite: Path = TINY) -> None:
    done = evalkit_cli("run", suite, "--runs-dir", runs, "--run-id", run_id, "--trials", "3",
                       "--no-progress", "--json", *extra)  # fmt: skip
    assert done.returncode == 0, done.stderr


def _json(argv: list[str]) -> dict[str, object]:
    done = evalkit_cli(*argv)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert isinstance(data, dict)
    return data


def test_cached_rerun_is_one_sample(runs_dir: Path) -> None:
    _run(runs_dir, "a")
    _run(runs_dir, "b")  # same suite, same seed: every outcome comes from the cache
    a, b = read_run(runs_dir / "a"), read_run(runs_dir / "b")
    assert not a["cache_hit"].any() and set(a["origin_run_id"]) == {"a"}
    assert b["cache_hit"].all() and set(b["origin_run_id"]) == {"a"}  # the producing run
    assert a["provider_deterministic"].all()
    n = len(a)

    out = _json(["compare", "a", "b", "--runs-dir", str(runs_dir), "--json",
                         "--resamples", "500"])
    assert out["verdict"] == "inconclusive" and out["n_cases"] == 0
    assert out["reused_items"] == n
    assert "--no-cache" in str(out["verdict_note"])
    parts = out["by_condition"]
    assert isinstance(parts, list)
    assert [p["condition"] for p in parts] == CONDITIONS
    assert sum(p["reused_items"] for p in parts) == n

    flips = _json(["flips", "a", "b", "--runs-dir", str(runs_dir), "--json"])
    assert flips["flip_rate"] is None and flips["n_pairs"] == 0 and flips["reused_items"] == n
    assert "--no-cache" in str(flips["message"]) and "--seed" in str(flips["message"])

    shown = evalkit_cli("flips", "a", "b", "--runs-dir", runs_dir)
    assert shown.returncode == 0
    text = shown.stdout
    assert f"{n} reused pairs left out" in text and "--no-cache" in text


def test_old_runs_count_cache_hits_as_reused(runs_dir: Path) -> None:
    """A run written before origin_run_id existed: its cache hits are copies of unknown origin."""
    _run(runs_dir, "a")
    _run(runs_dir, "b")
    for run_id in ("a", "b"):
        path = runs_dir / run_id / "results.parquet"
        table = pq.read_table(path)
        pq.write_table(table.drop(["origin_run_id", "provider_deterministic"]), path)
    b = read_run(runs_dir / "b")
    assert b["origin_run_id"].isna().all() and b["cache_hit"].all()
    result = gate(runs_dir / "a", runs_dir / "b", n_resamples=500, runs_dir=runs_dir)
    assert result.comparison["reused_items"] == len(b)
    assert result.ledger_row["reused_items"] == len(b) and result.ledger_row["n_cases"] == 0
    assert "no pair is evidence" in result.message
    assert f"{len(b)} reused item pair(s) left out" in result.message


def test_same_seed_no_cache_reruns_are_one_sample(
    runs_dir: Path
) -> None:
    """The simulated agent is deterministic given its seed: --no-cache alone draws nothing new."""
    _run(runs_dir, "a", "--no-cache")
    _run(runs_dir, "b", "--no-cache")
    b = read_run(runs_dir / "b")
    assert not b["cache_hit"].any() and set(b["origin_run_id"]) == {"b"}
    flips = _json(["flips", "a", "b", "--runs-dir", str(runs_dir), "--json"])
    assert flips["flip_rate"] is None and flips["reused_items"] == len(b)


def test_new_seed_without_cache_is_evidence(
    runs_dir: Path
) -> None:
    _run(runs_dir, "a", "--no-cache", "--seed", "1")
    _run(runs_dir, "b", "--no-cache", "--seed", "2")
    a, b = read_run(runs_dir / "a"), read_run(runs_dir / "b")
    assert set(a["seed"]).isdisjoint(set(b["seed"]))  # --seed gives every item a new seed
    flips = _json(["flips", "a", "b", "--runs-dir", str(runs_dir), "--json"])
    assert flips["reused_items"] == 0 and flips["n_pairs"] == len(a)
    assert isinstance(flips["flip_rate"], float) and flips["flip_rate"] > 0
    out = _json(["compare", "a", "b", "--runs-dir", str(runs_dir), "--json",
                         "--resamples", "500"])
    assert out["reused_items"] == 0
    cases = a["case_id"].nunique()
    assert out["n_cases"] == cases  # pooled over four conditions, each case counted once
    assert all(p["n_cases"] == cases for p in out["by_condition"])  # type: ignore[union-attr]


@pytest.mark.slow
def test_skill_edit_changes_two_conditions_only(
    runs_dir: Path, tmp_path: Path
) -> None:
    """Editing SKILL.md reruns self-load and preloaded; none and stale are cache copies."""
    _run(runs_dir, "before")
    edited = tmp_path / "SKILL.md"
    edited.write_text(
        (TINY / "skills" / "waiting" / "SKILL.md").read_text(encoding="utf-8")
        + "\nPoll the readiness endpoint in a loop with a deadline; never sleep blindly.\n",
        encoding="utf-8",
    )
    _run(runs_dir, "after", "--skill", f"waiting={edited}")
    after = read_run(runs_dir / "after")
    hits = after.groupby("condition")["cache_hit"].all().to_dict()
    assert hits == {"none": True, "preloaded": False, "self-load": False, "stale": True}

    out = _json(["compare", "before", "after", "--runs-dir", str(runs_dir), "--json",
                         "--resamples", "500"])
    parts = {p["condition"]: p for p in out["by_condition"]}  # type: ignore[union-attr]
    per_condition = int((after["condition"] == "none").sum())
    cases = after["case_id"].nunique()
    for name in ("none", "stale"):
        assert parts[name]["reused_items"] == per_condition and parts[name]["n_cases"] == 0
        assert parts[name]["verdict"] == "inconclusive"
    for name in ("preloaded", "self-load"):
        assert parts[name]["reused_items"] == 0 and parts[name]["n_cases"] == cases
    assert out["reused_items"] == 2 * per_condition
    assert out["n_cases"] == cases

    shown = evalkit_cli("compare", "before", "after", "--runs-dir", runs_dir, "--resamples", "500")
    assert shown.returncode == 0
    text = shown.stdout
    assert text.startswith("verdict by condition: ")
    # none and stale gave no case (every pair reused): named as left out, not as pooled
    assert "pooled over conditions preloaded, self-load, stratified by case" in text
    assert "left out as reused (every pair one sample, no case): none, stale" in text
    assert f"{per_condition} reused pair(s) left out" in text

    ledger = tmp_path / "ledger.jsonl"
    gated = evalkit_cli("gate", "--baseline", "before", "--candidate", "after", "--runs-dir",
                        runs_dir, "--ledger", ledger)  # fmt: skip
    assert gated.returncode in (0, 1)
    row = json.loads(ledger.read_text(encoding="utf-8").splitlines()[-1])
    assert row["n_cases"] == cases  # a case is counted once, not once per condition
    assert row["reused_items"] == 2 * per_condition
    assert set(row["condition_verdicts"]) == set(CONDITIONS)
