"""Power and planning (Miller 2024 eq. 9-10), checked against statsmodels' normal power."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.power import NormalIndPower, TTestPower

from evalkit.errors import InputError
from evalkit.stats import (
    PowerDesign,
    VarianceComponents,
    estimate_variance_components,
    minimum_detectable_effect,
    required_cases,
    required_trials,
    simulate_power,
)
from evalkit.stats._simulate import model_components, simulate_arms

# Defaults at baseline 0.5: var_between = 0.25 / 5 = 0.05, var_within = 0.25 - 0.05 = 0.2,
# correlation 0.5, so with K = 3: omega^2 = 2 * 0.05 * 0.5 + 2 * 0.2 / 3.
OMEGA2_K3 = 2 * 0.05 * 0.5 + 2 * 0.2 / 3


def test_required_cases_normal_matches_statsmodels_normal_power() -> None:
    plan = required_cases(0.10, n_trials=3, design=PowerDesign(method="normal"))
    # statsmodels: NormalIndPower().solve_power(effect_size=0.10 / sqrt(omega2), nobs1=None,
    #   alpha=0.025, power=0.8, ratio=0, alternative="larger") -> 143.89612846340472
    # (one-sample, one tail at alpha/2: exactly Miller's eq. 10)
    exact = NormalIndPower().solve_power(
        effect_size=0.10 / math.sqrt(OMEGA2_K3),
        nobs1=None,
        alpha=0.025,
        power=0.8,
        ratio=0,
        alternative="larger",
    )
    assert exact == pytest.approx(143.89612846340472)
    assert plan.n_cases == math.ceil(exact) == 144
    assert plan.power >= 0.8
    assert plan.se == pytest.approx(math.sqrt(OMEGA2_K3 / 144))
    assert (plan.var_between, plan.var_within, plan.correlation) == pytest.approx((0.05, 0.2, 0.5))
    assert plan.method == "normal"


def test_required_cases_t_matches_statsmodels_t_power() -> None:
    plan = required_cases(0.10, n_trials=3)
    # statsmodels: TTestPower().solve_power(effect_size=0.10 / sqrt(omega2), nobs=None,
    #   alpha=0.05, power=0.8, alternative="two-sided") -> 145.82816348834
    assert plan.method == "t"
    assert plan.n_cases == math.ceil(145.82816348834) == 146
    # statsmodels: TTestPower().power(0.10 / sqrt(omega2), nobs=146, alpha=0.05)
    #   -> 0.8004678585508644
    assert plan.power == pytest.approx(0.8004678585508644, rel=1e-9)
    reference = TTestPower().power(
        effect_size=0.10 / math.sqrt(OMEGA2_K3), nobs=145, alpha=0.05, alternative="two-sided"
    )
    assert reference < 0.8  # so 146 is the smallest integer


def test_minimum_detectable_effect_matches_statsmodels() -> None:
    mde = minimum_detectable_effect(100, 3, design=PowerDesign(method="normal"))
    # statsmodels: NormalIndPower().solve_power(effect_size=None, nobs1=100, alpha=0.025,
    #   power=0.8, ratio=0, alternative="larger") * sqrt(omega2) -> 0.1199569...
    standardized = NormalIndPower().solve_power(
        effect_size=None, nobs1=100, alpha=0.025, power=0.8, ratio=0, alternative="larger"
    )
    assert mde.effect == pytest.approx(standardized * math.sqrt(OMEGA2_K3), rel=1e-5)
    assert mde.power == 0.8
    t_mde = minimum_detectable_effect(100, 3)
    # statsmodels: TTestPower().solve_power(effect_size=None, nobs=100, alpha=0.05, power=0.8)
    #   -> 0.2829117119690806 (standardized)
    assert t_mde.effect == pytest.approx(0.2829117119690806 * math.sqrt(OMEGA2_K3), rel=1e-5)
    # and statsmodels' power at evalkit's MDE is the target, to solver precision
    power = TTestPower().power(
        effect_size=t_mde.effect / math.sqrt(OMEGA2_K3), nobs=100, alpha=0.05
    )
    assert power == pytest.approx(0.8, abs=1e-9)
    assert t_mde.effect > mde.effect


def test_planning_functions_are_consistent() -> None:
    kwargs = {"design": PowerDesign(baseline_rate=0.7, var_between=0.03, correlation=0.8)}
    plan = required_cases(0.08, n_trials=5, **kwargs)
    assert minimum_detectable_effect(plan.n_cases, 5, **kwargs).effect <= 0.08
    assert minimum_detectable_effect(plan.n_cases - 1, 5, **kwargs).effect > 0.08
    trials = required_trials(0.08, plan.n_cases, **kwargs)
    assert trials.n_trials is not None and trials.n_trials <= 5
    assert trials.power >= 0.8
    # default var_within = p(1-p) - var_between
    assert plan.var_within == pytest.approx(0.7 * 0.3 - 0.03)


def test_more_trials_cannot_fix_too_few_cases() -> None:
    result = required_trials(0.05, n_cases=50)
    assert result.n_trials is None
    assert result.power < 0.8
    out = result.to_dict()
    assert out["n_trials"] is None and out["se"] is None
    json.dumps(out, allow_nan=False)


def test_power_inputs_from_components() -> None:
    components = VarianceComponents(0.6, 0.02, 0.2, 0.9, 100, 3)
    plan = required_cases(0.1, 3, design=PowerDesign.from_components(components))
    assert (plan.baseline_rate, plan.var_between, plan.var_within, plan.correlation) == (
        0.6,
        0.02,
        0.2,
        0.9,
    )
    override = required_cases(0.1, 3,
                              design=PowerDesign.from_components(components, correlation=0.0))
    assert override.correlation == 0.0 and override.n_cases > plan.n_cases


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: required_cases(0.0), "`effect` must be non-zero"),
        (lambda: required_cases(1.5), "`effect`"),
        (lambda: required_cases(0.1, n_trials=0), "`n_trials`"),
        (lambda: minimum_detectable_effect(1), "`n_cases`"),
        (lambda: required_cases(0.1, design=PowerDesign(correlation=1.2)), "`correlation`"),
        (lambda: required_cases(0.1, design=PowerDesign(power=1.0)),
         r"--power / power must be a number in \(0, 1\), e.g. 0.8, but 1.0 was passed"),
        (lambda: simulate_power(30, 3, 0.6, baseline_rate=0.5), "`effect`"),
        (lambda: required_cases(0.1,
                                design=PowerDesign(method="exact")),
         "^method must be one of t, normal, but 'exact' was passed$"),
    ],
)
def test_power_rejects_bad_arguments(call: object, match: str) -> None:
    with pytest.raises(InputError, match=match):
        call()  # type: ignore[operator]


def test_model_components_are_exact() -> None:
    rng = np.random.default_rng(0)
    base, cand = simulate_arms(rng, 400_000, 1, 0.15, 0.5, 4.0)
    assert cand.mean() - base.mean() == pytest.approx(0.15, abs=0.005)
    rng = np.random.default_rng(1)
    p = rng.beta(2, 2, 400_000)
    q = p + 0.15 * (1 - p) / 0.5
    exact = model_components(0.5, 0.15)
    assert exact.var_between == pytest.approx((p.var() + q.var()) / 2, rel=0.02)
    cov = np.cov(p, q)[0, 1]
    assert exact.correlation == pytest.approx(cov / ((p.var() + q.var()) / 2), rel=0.01)
    within = (np.mean(p * (1 - p)) + np.mean(q * (1 - q))) / 2
    assert exact.var_within == pytest.approx(within, rel=0.01)
    assert q.mean() - p.mean() == pytest.approx(0.15, abs=0.002)


def _frames(base: np.ndarray, cand: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    cases, trials = base.shape
    ids = np.repeat([f"c{i:05d}" for i in range(cases)], trials)
    t = np.tile(np.arange(trials), cases)
    a = pd.DataFrame({"case_id": ids, "condition": "x", "trial": t, "passed": base.ravel() > 0})
    b = pd.DataFrame({"case_id": ids, "condition": "x", "trial": t, "passed": cand.ravel() > 0})
    return a, b


def test_estimate_variance_components_recovers_the_model() -> None:
    rng = np.random.default_rng(2)
    base, cand = simulate_arms(rng, 6000, 3, 0.15, 0.5, 4.0)
    a, b = _frames(base, cand)
    estimated = estimate_variance_components(a, b)
    exact = model_components(0.5, 0.15)
    assert estimated.n_cases == 6000 and estimated.n_trials == 3
    assert estimated.baseline_rate == pytest.approx(0.5, abs=0.01)
    assert estimated.var_between == pytest.approx(exact.var_between, abs=0.004)
    assert estimated.var_within == pytest.approx(exact.var_within, abs=0.005)
    assert estimated.correlation == pytest.approx(exact.correlation, abs=0.08)
    # two conditions of one run give the same numbers
    run = pd.concat([a.assign(condition="none"), b.assign(condition="preloaded")])
    same = estimate_variance_components(run, conditions=("none", "preloaded"))
    assert same == estimated
    # one arm: no correlation
    single = estimate_variance_components(a)
    assert math.isnan(single.correlation)
    assert single.var_between == pytest.approx(0.05, abs=0.004)
    json.dumps(single.to_dict(), allow_nan=False)


def test_estimate_variance_components_single_trial_cannot_split() -> None:
    df = pd.DataFrame({"case_id": list("abcd"), "condition": "x", "passed": [1, 0, 1, 1]})
    components = estimate_variance_components(df)
    assert math.isnan(components.var_between) and math.isnan(components.var_within)
    # the power functions then fall back to their defaults
    plan = required_cases(0.1, 1, design=PowerDesign.from_components(components))
    assert plan.baseline_rate == 0.75
    assert plan.var_between == pytest.approx(0.75 * 0.25 / 5)


def test_simulate_power_is_seeded_and_reports_the_model() -> None:
    first = simulate_power(30, 3, 0.2, n_sims=40, seed=3, n_resamples=300)
    again = simulate_power(30, 3, 0.2, n_sims=40, seed=3, n_resamples=300)
    assert first == again
    assert first.method == "simulation" and first.n_sims == 40
    assert first.ci_low is not None and first.ci_high is not None
    assert first.ci_low <= first.power <= first.ci_high
    exact = model_components(0.5, 0.2)
    assert first.var_between == pytest.approx(exact.var_between)
    json.dumps(first.to_dict(), allow_nan=False)


def test_simulate_power_negative_effect_counts_regressions() -> None:
    loss = simulate_power(60, 3, -0.25, n_sims=40, seed=4, n_resamples=500)
    assert loss.power > 0.8


def test_required_cases_says_so_when_the_variance_components_are_zero() -> None:
    # Runs where no outcome varied give zero components; the plan must not divide by them.
    plan = required_cases(0.2, 3, design=PowerDesign(var_between=0.0, var_within=0.0))
    assert plan.n_cases is None
    assert "variance components are zero" in plan.note
