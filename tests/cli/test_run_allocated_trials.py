"""``evalkit run --until-verdict --allocate-trials`` on the demo suite (simulated agent)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import evalkit
from evalkit.stats import NeymanAllocation, allocation_plan
from tests.cli.test_run_until_verdict import _sequential
from tests.conftest import evalkit_cli, until_verdict_args as _args


@pytest.mark.slow
def test_allocated_run_draws_pairs_replays_them_and_reads_back(tmp_path: Path) -> None:
    done = evalkit_cli(*_args(tmp_path, "al", "--allocate-trials", "--json"))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    record = _sequential(tmp_path / "al")
    assert record["allocation"] == {"floor": 0.7, "prior_pairs": 2.0, "round_pairs": 5, "seed": 0}
    rows = evalkit.read_run(tmp_path / "al")
    # every look is a round of 5 pairs (2 items each); the items on disk are those pairs
    looks = record["looks"]
    assert [look["n_cases"] for look in looks] == [5 * k for k in range(1, len(looks) + 1)]
    assert len(rows) == out["items"] == 2 * looks[-1]["n_cases"]
    # trials went to particular cases: some case ran more trials than another
    per_case = rows[rows["condition"] == "none"].groupby("case_id")["trial"].nunique()
    assert per_case.max() > per_case.min() or len(per_case) < len(record["order"])
    # the results alone replay the run's draws, and the looks are those of the weighted pairs
    plan = allocation_plan(rows, record["order"], ("none", "preloaded"),
                           NeymanAllocation(round_pairs=5, seed=0))  # fmt: skip
    assert plan.rounds == len(looks)
    last = looks[-1]
    weighted = float(np.clip(np.mean(plan.increments), last["ci_low"], last["ci_high"]))
    assert weighted == pytest.approx(last["estimate"], abs=1e-12)
    assert out["method"].endswith("(Neyman allocation of trials)")
    # compare --sequential reads the run with its own design: the same looks
    shown = evalkit_cli("compare", tmp_path / "al", "--sequential", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["looks"] == out["looks"]
    text = evalkit_cli("compare", tmp_path / "al", "--sequential")
    assert f"look at {looks[0]['n_cases']} pairs:" in text.stdout
    printed = evalkit_cli(*_args(tmp_path, "al", "--allocate-trials", "--resume"))
    assert f"look 1: {looks[0]['n_cases']} pairs," in printed.stdout
    # a resumed run replays the same draws: nothing new is run, the same verdict
    resumed = evalkit_cli(*_args(tmp_path, "al", "--allocate-trials", "--json", "--resume"))
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads(resumed.stdout)
    assert again["looks"] == out["looks"] and again["items"] == out["items"]


def test_allocate_and_adaptive_trials_together_are_refused(tmp_path: Path) -> None:
    done = evalkit_cli(*_args(tmp_path, "x", "--allocate-trials", "--adaptive-trials"))
    assert done.returncode == 2
    assert "--allocate-trials and --adaptive-trials" in done.stderr
    assert "Traceback" not in done.stderr


def test_allocate_trials_needs_until_verdict(tmp_path: Path) -> None:
    done = evalkit_cli("run", "cases/demo", "--allocate-trials", "--runs-dir", tmp_path)
    assert done.returncode == 2
    assert "--allocate-trials: only with --until-verdict" in done.stderr


def test_a_budget_below_one_round_of_pairs_is_refused(tmp_path: Path) -> None:
    done = evalkit_cli(*_args(tmp_path, "b", "--allocate-trials", "--max-items", "6"))
    assert done.returncode == 2
    assert "--max-items 6 is smaller than one round (10 items: 5 pairs" in done.stderr
    assert "Traceback" not in done.stderr
