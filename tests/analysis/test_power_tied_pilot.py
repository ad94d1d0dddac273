"""``evalkit power --from-run RUN --equivalence`` on a pilot whose every pair tied.

A saturated pilot (every item passes in both conditions) measured no variance. Planned from
its variances, "2 cases at 2 trials" was printed for a design whose interval is ±60 pp; the
plan is made with compare's own tied-pairs rule instead, and the planned design, run tied,
shows no practical difference in compare.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.analysis import compare, power
from tests.conftest import evalkit_cli


def _tied_rows(cases: int, trials: int, passed: bool = True) -> pd.DataFrame:
    return pd.DataFrame(
        [{"case_id": f"c{c}", "condition": cond, "trial": t, "passed": passed}
         for c in range(cases) for cond in ("none", "skill") for t in range(trials)]
    )


def test_a_saturated_pilot_is_planned_with_the_tied_pairs_rule_and_the_plan_settles() -> None:
    plan = power(from_run=_tied_rows(2, 2), conditions=["none", "skill"], equivalence=True)
    # 72 tied pairs put the 95 % exact bound inside +-5 pp: 36 cases at the pilot's 2 trials
    assert plan.n_cases == 36 and plan.n_trials == 2 and plan.method == "tied pairs"
    assert "36 trials at the pilot's 2 cases" in plan.note
    settled = compare(_tied_rows(plan.n_cases, plan.n_trials), conditions=["none", "skill"])
    assert settled.equivalence["equivalent"], settled.delta
    short = compare(_tied_rows(plan.n_cases - 1, plan.n_trials), conditions=["none", "skill"])
    assert not short.equivalence["equivalent"]  # the fewest cases that do it, not more


def test_the_plan_at_other_trials_and_the_old_plan_that_could_not_settle() -> None:
    plan = power(from_run=_tied_rows(3, 2), conditions=["none", "skill"], equivalence=True,
                 trials=8)
    assert (plan.n_cases, plan.n_trials) == (9, 8)  # 9 x 8 = 72 tied pairs
    assert compare(_tied_rows(9, 8), conditions=["none", "skill"]).equivalence["equivalent"]
    # what the variance plan used to print for this pilot: 2 cases at 2 trials, +-60 pp
    old = compare(_tied_rows(2, 2), conditions=["none", "skill"])
    assert not old.equivalence["equivalent"] and old.delta.ci_high > 0.5


def test_a_tied_pilot_cannot_plan_for_a_change_it_never_saw() -> None:
    plan = power(from_run=_tied_rows(4, 3, passed=False), conditions=["none", "skill"],
                 equivalence=True, effect=0.02)
    assert plan.n_cases is None and "cannot plan for a true change of +2.0 pp" in plan.note


def test_a_pilot_whose_pairs_differ_keeps_the_variance_plan() -> None:
    rows = _tied_rows(20, 3)
    rng = np.random.default_rng(0)
    rows["passed"] = rng.random(len(rows)) < 0.7
    plan = power(from_run=rows, conditions=["none", "skill"], equivalence=True)
    assert plan.method != "tied pairs"


def test_the_command_line_plans_an_imported_saturated_run(tmp_path: Path) -> None:
    table = tmp_path / "results.csv"
    with table.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["case_id", "condition", "passed", "trial"])
        for row in _tied_rows(2, 2).itertuples():
            writer.writerow([row.case_id, row.condition, "true", row.trial])
    runs = tmp_path / "runs"
    done = evalkit_cli("import", table, "--format", "csv", "--run-id", "full",
                       "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    text = evalkit_cli("power", "--from-run", "full", "--conditions", "none,skill",
                       "--equivalence", "--runs-dir", runs)
    assert text.returncode == 0, text.stderr
    assert "cases needed to show no practical difference (within ±5 pp): 36" in text.stdout
    assert "2 cases" not in text.stdout.split("note:")[0]
    as_json = evalkit_cli("power", "--from-run", "full", "--conditions", "none,skill",
                          "--equivalence", "--runs-dir", runs, "--json")
    payload = json.loads(as_json.stdout)
    assert payload["n_cases"] == 36 and payload["method"] == "tied pairs"
