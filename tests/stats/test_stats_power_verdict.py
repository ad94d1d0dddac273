"""Power plans for evalkit's own verdict rule (threshold included), checked by simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.analysis import power
from evalkit.stats import required_cases
from evalkit.stats._simulate import simulate_arms, simulate_power


def _pilot() -> pd.DataFrame:
    """A pilot run of 300 cases x 3 trials under Miller's model, two identical arms."""
    base, cand = simulate_arms(np.random.default_rng(3), 300, 3, 0.0, 0.5, 4.0)
    rows = [
        (f"c{i}", condition, t, bool(matrix[i, t]))
        for condition, matrix in (("none", base), ("self-load", cand))
        for i in range(300)
        for t in range(3)
    ]
    return pd.DataFrame(rows, columns=["case_id", "condition", "trial", "passed"])


def test_effect_at_the_threshold_has_no_plan_and_says_why() -> None:
    plan = required_cases(0.05, n_trials=3)
    assert plan.n_cases is None
    assert "no number of cases will show 'improved'" in plan.note
    assert plan.to_dict()["note"] == plan.note


@pytest.mark.timeout(90)
@pytest.mark.parametrize("effect", [0.065, 0.10])
def test_planned_from_a_run_the_verdict_improved_reaches_the_target(effect: float) -> None:
    plan = power(effect=effect, trials=3, from_run=_pilot(), conditions=["none", "self-load"])
    assert plan.n_cases is not None and plan.threshold == 0.05
    sim = simulate_power(plan.n_cases, 3, effect, n_sims=400, seed=5, n_resamples=400)
    # Measured: 6.5 pp -> 444 cases, 80.8 %; 10 pp -> 113 cases, 84.0 % (Miller alone: 48-70 %).
    assert sim.ci_high is not None and sim.ci_high >= 0.8
    assert sim.power >= 0.78


def test_simulation_uses_the_run_and_reports_the_target() -> None:
    result = power(
        cases=30,
        trials=3,
        effect=0.2,
        from_run=_pilot(),
        n_sims=40,
        power=0.9,
        conditions=["none", "self-load"],
    )
    assert result.method == "simulation"
    assert "target 0.9" in result.note


def test_minimum_detectable_effect_respects_the_threshold() -> None:
    from scipy import stats

    from evalkit.stats import minimum_detectable_effect

    small = minimum_detectable_effect(100, 3)  # interval-bound: Miller's eq. 9
    assert small.effect == pytest.approx(minimum_detectable_effect(100, 3, threshold=0).effect)
    large = minimum_detectable_effect(2000, 3)  # threshold-bound
    assert large.effect == pytest.approx(0.05 + stats.norm.ppf(0.8) * large.se)
    assert large.effect > minimum_detectable_effect(2000, 3, threshold=0).effect
