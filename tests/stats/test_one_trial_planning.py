"""Planning from a one-trial pilot uses the paired differences' measured variance.

With one trial per case the between-case variance cannot be split from the within-case one,
and before, the plan fell back to default variances and an arm correlation of 0.5. Data here
are drawn with strongly correlated arms (a case's difficulty moves both), as real agents'
are; the planned number of cases must reach its power when the real paired procedure is run
on fresh data drawn the same way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from evalkit.stats import (
    CompareOptions,
    PowerDesign,
    VarianceComponents,
    estimate_variance_components,
    paired_compare,
    required_cases,
)

SHIFT = 0.9  # the skill's effect on the logit of every case
SPREAD = 1.6  # case difficulty: the arms share it, so they correlate


def _draw(n_cases: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    difficulty = rng.normal(-0.3, SPREAD, n_cases)
    ids = [f"case-{i}" for i in range(n_cases)]
    baseline = rng.random(n_cases) < expit(difficulty)
    candidate = rng.random(n_cases) < expit(difficulty + SHIFT)
    return (
        pd.DataFrame({"case_id": ids, "condition": "c", "passed": baseline}),
        pd.DataFrame({"case_id": ids, "condition": "c", "passed": candidate}),
    )


def _truth(rng: np.random.Generator) -> tuple[float, float]:
    """The true effect and the true variance of one case's paired difference at one trial."""
    difficulty = rng.normal(-0.3, SPREAD, 2_000_000)
    a, b = expit(difficulty), expit(difficulty + SHIFT)
    effect = float(np.mean(b - a))
    # Var(Y_B - Y_A) for independent Bernoulli draws given the case
    variance = float(np.mean(a * (1 - a) + b * (1 - b)) + np.var(b - a))
    return effect, variance


def test_a_one_trial_pilot_measures_the_variance_of_the_difference() -> None:
    rng = np.random.default_rng(11)
    _, variance = _truth(rng)
    pilot = estimate_variance_components(*_draw(2000, rng))
    assert pilot.n_trials == 1
    assert np.isnan(pilot.var_between) and np.isnan(pilot.var_within)
    # its sampling error at 2,000 cases is about 2 %
    assert abs(pilot.var_difference - variance) / variance < 0.08


@pytest.mark.slow
def test_the_planned_cases_reach_their_power_on_one_trial_data() -> None:
    rng = np.random.default_rng(12)
    effect, variance = _truth(rng)
    pilot = estimate_variance_components(*_draw(400, rng))
    planned = required_cases(effect, 1, design=PowerDesign.from_components(pilot))
    oracle = required_cases(
        effect, 1, design=PowerDesign.from_components(pilot._replace(var_difference=variance))
    )
    assert planned.n_cases is not None and oracle.n_cases is not None
    assert abs(planned.n_cases - oracle.n_cases) / oracle.n_cases < 0.15
    # without the measured variance the plan fell back to defaults: far from the oracle
    split_less = VarianceComponents(*pilot[:6])
    fallback = required_cases(effect, 1, design=PowerDesign.from_components(split_less))
    assert fallback.n_cases is not None
    assert abs(fallback.n_cases - oracle.n_cases) / oracle.n_cases > 0.25
    draws = 300
    improved = sum(
        paired_compare(*_draw(planned.n_cases, rng),
                       options=CompareOptions(n_resamples=1000, seed=i)).verdict
        == "improved"
        for i in range(draws)
    )
    # planned for 0.80 (the Monte Carlo standard error of 300 draws is 0.023). At one trial
    # compare's bootstrap interval is a little more cautious than the t-test the plan
    # assumes: measured 0.76-0.77 at the oracle's cases over 400 draws (the t-test: 0.80 over
    # 4,000), so the bound allows that shortfall and the Monte Carlo error, no more.
    assert 0.80 - 0.04 - 2 * 0.023 <= improved / draws <= 0.80 + 3 * 0.023


def test_a_one_trial_run_says_why_it_has_no_flip_rate() -> None:
    from evalkit.stats import flip_rate_within

    baseline, _ = _draw(20, np.random.default_rng(3))
    within = flip_rate_within(baseline)
    assert within.n_pairs == 0 and np.isnan(within.flip_rate)
    assert within.message.startswith("one trial per case")
    assert "--trials 2" in within.message
    two = pd.concat([baseline.assign(trial=0), baseline.assign(trial=1)])
    assert flip_rate_within(two).message == ""
