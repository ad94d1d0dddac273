"""The planned-effect futility boundary: its error rate under the planned effect, A/A, savings."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from evalkit.errors import InputError
from evalkit.stats import (
    FUTILE_PLANNED,
    AdaptiveTrials,
    PowerDesign,
    futility_log_wealth,
    required_cases,
    sequential_compare_tables,
    simulate_sequential,
)
from evalkit.stats._adaptive_power import AGENT_CONCENTRATION, simulate_case_differences
from evalkit.stats._sequential import run_looks
from evalkit.stats._simulate import model_components, simulate_arms


def _differences(rng: np.random.Generator, n_cases: int, effect: float, kappa: float) -> np.ndarray:
    base, cand = simulate_arms(rng, n_cases, 3, effect, 0.5, kappa)
    return np.asarray(cand.mean(axis=1) - base.mean(axis=1))


def test_wealth_is_the_product_of_the_betting_factors() -> None:
    """Checked against a plain loop over ``1 - lam_i (d_i - E)`` with the stated Kelly bet."""
    d = np.array([0.0, 1.0, -1.0, 1 / 3, -2 / 3, 0.0, 0.0, 1.0])
    effect = 0.2
    wealth, seen = 1.0, []
    expected = []
    for value in d:
        var = 1.0 if not seen else (1.0 + sum((x - m) ** 2 for x, m in _pairs(seen))) / len(seen)
        bet = min(effect / (var + effect**2), 0.75 / (1 - effect))
        wealth *= 1 - bet * (value - effect)
        expected.append(math.log(wealth))
        seen.append(float(value))
    np.testing.assert_allclose(futility_log_wealth(d, effect), expected, rtol=1e-12)


def _pairs(seen: list[float]) -> list[tuple[float, float]]:
    """Each observation with the running mean before it (0 before the first)."""
    means = [0.0] + [float(np.mean(seen[: i + 1])) for i in range(len(seen) - 1)]
    return list(zip(seen, means, strict=True))


@pytest.mark.parametrize(
    ("effect", "kappa", "beta"),
    [(0.10, 4.0, 0.2), (0.20, 4.0, 0.2), (0.10, 0.47, 0.2), (0.10, 4.0, 0.1)],
    ids=["10pp-beta22", "20pp-beta22", "10pp-agent-like", "10pp-beta0.1"],
)
def test_under_the_planned_effect_futility_is_reached_at_most_beta_of_the_time(
    effect: float, kappa: float, beta: float
) -> None:
    """2,000 suites whose true difference is exactly E, a look after every case up to 600.

    Continuous monitoring is the worst case of any look schedule; the wealth must reach
    1/beta in at most beta of them (Ville's inequality), and does so often when there is
    no effect at all (the boundary is not vacuous).
    """
    rng = np.random.default_rng(11)
    boundary = math.log(1 / beta)
    reached = [
        float(np.max(futility_log_wealth(_differences(rng, 600, effect, kappa), effect)))
        >= boundary
        for _ in range(2000)
    ]
    rate = float(np.mean(reached))
    # Ville's bound is nearly attained under continuous monitoring (small bets cross 1/beta
    # with little overshoot), so the simulated rate sits at beta up to Monte-Carlo noise:
    # it must not be significantly above it (one-sided exact binomial test at 1 %)
    excess = sps.binomtest(int(sum(reached)), len(reached), beta, alternative="greater")
    print(f"futile under the planned effect {effect}: {rate:.4f} (beta {beta}, "
          f"p of an excess {excess.pvalue:.3f})")
    assert excess.pvalue > 0.01
    assert rate <= beta + 0.015
    null = [
        float(np.max(futility_log_wealth(_differences(rng, 600, 0.0, kappa), effect)))
        >= boundary
        for _ in range(200)
    ]
    assert float(np.mean(null)) >= 0.9


def test_with_adaptive_trials_the_scaled_boundary_keeps_beta() -> None:
    """Corrected differences in [-B, B]: run_looks scales them, the rate stays at most beta."""
    design = AdaptiveTrials(total_trials=3, first_trials=1)
    rng = np.random.default_rng(5)
    marks = np.arange(5, 301, 5)
    reasons = []
    for _ in range(300):
        d, _items = simulate_case_differences(rng, 300, 0.1, design, concentration=0.47)
        looks = run_looks(
            d, marks, threshold=0.05, confidence=0.95, bound=design.bound, plan_effect=0.1,
            futility_beta=0.2,
        )
        reasons.append(looks[-1].reason)
    rate = reasons.count(FUTILE_PLANNED) / len(reasons)
    print(f"futile-planned with adaptive trials at the planned effect: {rate:.3f}")
    assert rate <= 0.2


def test_aa_false_verdict_rate_with_the_futility_boundary_is_at_most_alpha() -> None:
    """No effect, a look every 5 cases up to 200 (40 looks), futility planned at 10 pp."""
    plan = simulate_sequential(
        0.0, 3, max_cases=200, round_cases=5, n_sims=300, seed=3, plan_effect=0.1
    )
    false = plan.improved + plan.regressed
    print(f"A/A false verdicts with planned futility: {false:.3f}")
    assert false <= 0.05
    assert plan.futile_planned > 0.5  # and most of them stop at the new boundary


def test_the_futility_boundary_cuts_the_mean_items_under_aa() -> None:
    """Same seeds and suites: with the boundary the A/A comparisons stop far sooner."""
    design = AdaptiveTrials(total_trials=3, first_trials=1)
    settings = {"max_cases": 300, "round_cases": 5, "plan_cases": 60, "n_sims": 100, "seed": 9,
                "concentration": AGENT_CONCENTRATION}
    without = simulate_sequential(0.0, adaptive=design, **settings)  # type: ignore[call-overload]
    with_boundary = simulate_sequential(  # type: ignore[call-overload]
        0.0, adaptive=design, plan_effect=0.1, **settings
    )
    print(f"A/A mean items: {without.expected_items:.0f} -> {with_boundary.expected_items:.0f}")
    assert with_boundary.expected_items < 0.5 * without.expected_items
    assert with_boundary.improved + with_boundary.regressed <= without.improved + without.regressed


def _run(n_cases: int, candidate_pass: list[bool]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "case_id": [f"c{i:02d}" for i in range(n_cases)] * 2,
            "condition": ["none"] * n_cases + ["preloaded"] * n_cases,
            "passed": [i % 2 == 0 for i in range(n_cases)] + candidate_pass,
        }
    )


def test_sequential_compare_reports_the_boundary_only_when_asked() -> None:
    run = _run(60, [i % 2 == 0 for i in range(60)])  # no effect at all
    plain = sequential_compare_tables(run, conditions=("none", "preloaded"), round_cases=5)
    assert "futility" not in plain.to_dict()
    assert all("futility_wealth" not in look for look in plain.to_dict()["looks"])
    planned = sequential_compare_tables(
        run, conditions=("none", "preloaded"), round_cases=5, plan_effect=0.3
    )
    out = planned.to_dict()
    assert planned.futile and planned.looks[-1].reason == FUTILE_PLANNED
    assert planned.verdict == "inconclusive" and planned.stopped_at == planned.looks[-1].n_cases
    assert out["futility"]["plan_effect"] == 0.3 and out["futility"]["beta"] == 0.2
    assert out["futility"]["wealth"] >= 5.0 > out["looks"][-2]["futility_wealth"]
    assert planned.stopped_at is not None and planned.stopped_at < 60
    assert "planned effect is excluded" in planned.verdict_note


@pytest.mark.parametrize(("effect", "beta"), [(0.0, 0.2), (1.0, 0.2), (0.1, 0.0), (0.1, 1.0)])
def test_bad_futility_settings_are_refused(effect: float, beta: float) -> None:
    run = _run(10, [True] * 10)
    with pytest.raises(InputError, match="plan_effect|futility_beta"):
        sequential_compare_tables(
            run, conditions=("none", "preloaded"), plan_effect=effect, futility_beta=beta
        )


@pytest.mark.slow
def test_one_trial_per_case_spends_40_percent_fewer_items_than_a_fixed_design_of_equal_error_rates(
) -> None:
    """Agent-like suite, +20 pp: one trial per case and arm, a look every 5 cases, the
    planned-effect boundary at beta 0.02. Its baseline is the cheapest fixed design (1, 2, 3 or
    5 trials per case) at alpha 0.05 and the power the sequential design showed, credited
    with no more than the lower 95 % Wilson bound of the simulated power."""
    effect, kappa, sims = 0.2, AGENT_CONCENTRATION, 2000
    components = model_components(0.5, effect, kappa)
    planned = required_cases(effect, 1, design=PowerDesign.from_components(components)).n_cases
    assert planned is not None
    design = functools.partial(
        simulate_sequential, n_trials=1, concentration=kappa, max_cases=4 * planned,
        round_cases=5, plan_cases=planned, n_sims=sims, plan_effect=effect, futility_beta=0.02,
    )
    plan, null = design(effect, seed=0), design(0.0, seed=1)
    power = proportion_confint(round(plan.improved * sims), sims, method="wilson")[0]
    false = null.improved + null.regressed
    fixed_items = {}
    for trials in (1, 2, 3, 5):
        n = required_cases(effect, trials,
                           design=PowerDesign.from_components(components, power=power)).n_cases
        assert n is not None
        fixed_items[trials] = n * 2 * trials
    cheapest = min(fixed_items.values())
    items = 2 * plan.expected_cases
    print(f"power {plan.improved:.3f} (credited {power:.3f}), A/A false {false:.3f}, "
          f"items {items:.0f} vs the cheapest fixed {cheapest} ({items / cheapest:.2f} x), "
          f"A/A items {2 * null.expected_cases:.0f}")
    assert power >= 0.8 and false <= 0.05  # error rates at least the fixed design's
    assert cheapest >= 2 * planned  # the fixed design at that power costs more than at 80 %
    assert items <= 0.6 * cheapest
    assert 2 * null.expected_cases <= 0.6 * cheapest
