"""``power --from-run`` plans at the pilot's trials unless told otherwise, and says so."""

from __future__ import annotations

from pathlib import Path

import evalkit

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "runs"


def test_a_pilot_of_three_trials_is_planned_at_three_trials() -> None:
    pilot = evalkit.read_run("demo-a", RUNS)
    assert pilot.groupby(["case_id", "condition"])["trial"].nunique().median() == 3
    planned = evalkit.power(from_run=pilot, effect=0.1)
    stated = evalkit.power(from_run=pilot, effect=0.1, trials=3)
    assert planned.n_trials == 3
    assert planned.n_cases == stated.n_cases
    assert "planned at the pilot's 3 trials per case" in planned.note
    assert "pilot" not in stated.note
    one = evalkit.power(from_run=pilot, effect=0.1, trials=1)
    assert one.n_trials == 1 and one.n_cases is not None and planned.n_cases is not None
    assert one.n_cases > planned.n_cases  # one trial per case needs more cases


def test_the_minimum_detectable_effect_is_read_at_the_pilot_trials_too() -> None:
    pilot = evalkit.read_run("demo-a", RUNS)
    planned = evalkit.power(from_run=pilot, cases=40)
    assert planned.n_trials == 3
    assert planned.effect == evalkit.power(from_run=pilot, cases=40, trials=3).effect


def test_asking_for_the_trials_needed_is_not_overridden_by_the_pilot() -> None:
    pilot = evalkit.read_run("demo-a", RUNS)
    planned = evalkit.power(from_run=pilot, cases=40, effect=0.2)
    assert "pilot" not in planned.note
