"""No practical difference: the equivalence claim on compare's interval, and its plan.

Seeded simulations of the real paired procedure (``paired_compare``): an A/A comparison at the
cases planned for an equivalence claim reports it at the planned power, and a true change
exactly at the threshold is called equivalent at most at the test's level.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq
from scipy.special import expit

from evalkit.stats import (
    CompareOptions,
    equivalence,
    equivalence_cases,
    equivalence_power,
    estimate_variance_components,
    paired_compare,
)

SPREAD = 1.5  # case difficulty (logit scale), shared by both arms
TRIALS = 3
MARGIN = 0.05


def _draw(n_cases: int, shift: float, rng: np.random.Generator) -> tuple[pd.DataFrame, ...]:
    difficulty = rng.normal(0.0, SPREAD, n_cases)
    sides = []
    for move in (0.0, shift):
        chance = np.repeat(expit(difficulty + move), TRIALS)
        sides.append(pd.DataFrame({
            "case_id": np.repeat([f"c{i}" for i in range(n_cases)], TRIALS),
            "condition": "c",
            "trial": np.tile(np.arange(TRIALS), n_cases),
            "passed": rng.random(n_cases * TRIALS) < chance,
        }))
    return tuple(sides)


def _shift_for(effect: float) -> float:
    """The logit shift whose mean change in pass rate is ``effect`` (over the case law)."""
    grid = np.random.default_rng(99).normal(0.0, SPREAD, 400_000)
    return float(brentq(lambda s: np.mean(expit(grid + s) - expit(grid)) - effect, 0.0, 3.0))


@pytest.fixture(scope="module")
def planned() -> int:
    pilot = estimate_variance_components(*_draw(3000, 0.0, np.random.default_rng(1)))
    plan = equivalence_cases(MARGIN, TRIALS, components=pilot)
    assert plan.n_cases is not None and plan.power >= 0.8
    return plan.n_cases


def _equivalent_share(n_cases: int, shift: float, draws: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    hits = 0
    for i in range(draws):
        result = paired_compare(*_draw(n_cases, shift, rng),
                                options=CompareOptions(n_resamples=1000, seed=i))
        hits += equivalence(result)["equivalent"]
    return hits / draws


@pytest.mark.slow
def test_an_aa_comparison_at_the_planned_cases_shows_no_practical_difference(
    planned: int,
) -> None:
    share = _equivalent_share(planned, 0.0, 300, seed=2)
    # planned for 0.80; the Monte Carlo standard error of 300 draws is 0.023
    assert share >= 0.80 - 2 * 0.023, share


@pytest.mark.slow
def test_a_change_at_the_threshold_is_rarely_called_equivalent(planned: int) -> None:
    share = _equivalent_share(planned, _shift_for(MARGIN), 300, seed=3)
    # the 95 % interval inside +-5 pp is two one-sided tests at 2.5 % each: at most 5 %
    # (the bound), expected about 2.5 %; Monte Carlo error 0.013 at 300 draws
    assert share <= 0.05, share


def test_the_equivalence_power_formula_matches_its_definition() -> None:
    rng = np.random.default_rng(5)
    omega, n = 0.3, 400
    se = omega / np.sqrt(n)
    estimates = rng.normal(0.01, se, 200_000)
    from scipy import stats

    half = stats.t.isf(0.025, n - 1) * se
    share = np.mean((estimates - half > -MARGIN) & (estimates + half < MARGIN))
    assert equivalence_power(0.01, MARGIN, omega, n, 0.05) == pytest.approx(share, abs=0.004)


def test_equivalence_reads_the_printed_interval() -> None:
    base, cand = _draw(400, 0.0, np.random.default_rng(8))
    result = paired_compare(base, cand, options=CompareOptions(n_resamples=1000))
    said = equivalence(result)
    inside = -MARGIN < result.delta.ci_low and result.delta.ci_high < MARGIN
    assert said["equivalent"] == inside
    assert said["note"].startswith("no practical difference" if inside else "not shown")
    assert result.to_dict()["equivalence"] == said
