"""The interval where every pair ties: the exact bound of the discordance rate over the pairs.

References: statsmodels' Clopper-Pearson interval (``proportion_confint(x, n, method="beta")``)
for the bound itself; seeded simulations for its coverage. With ``N`` draws the Monte Carlo
standard error of a coverage near 95 % is ``sqrt(0.95 * 0.05 / N)``: 1.1 pp at N = 400, so the
floor of 92 % sits about three standard errors under nominal.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import evalkit
from evalkit.stats import CompareOptions, PairTies, pair_ties, paired_compare, row_pairs
from evalkit.stats._bootstrap import paired_delta_interval
from evalkit.stats._delta_interval import discordance_bound

N_DRAWS = 400
FLOOR = 0.92


def _tied_rows(n_cases: int, n_trials: int, seed: int, condition: str = "x") -> pd.DataFrame:
    """Rows of a run whose cases pass at their own rates (every case's trials vary)."""
    rng = np.random.default_rng(seed)
    rates = rng.uniform(0.2, 0.8, size=n_cases)
    return pd.DataFrame(
        [
            {"case_id": f"c{c:02d}", "condition": condition, "trial": t,
             "passed": bool(rng.random() < rates[c])}
            for c in range(n_cases) for t in range(n_trials)
        ]
    )


@pytest.mark.parametrize(("discordant", "pairs"), [(0, 494), (0, 38), (0, 2), (3, 80), (7, 7)])
def test_the_bound_is_statsmodels_clopper_pearson(discordant: int, pairs: int) -> None:
    expected = proportion_confint(discordant, pairs, alpha=0.05, method="beta")[1]
    bound = discordance_bound(PairTies(pairs, discordant), 0.95)
    assert bound == pytest.approx(expected, abs=1e-12)


def test_26_cases_of_19_tied_trials_are_not_35_9_pp() -> None:
    rows = _tied_rows(26, 19, seed=1)
    result = paired_compare(rows, rows.copy(), options=CompareOptions(n_resamples=1000))
    bound = proportion_confint(0, 26 * 19, alpha=0.05, method="beta")[1]  # 0.00744
    assert result.delta.estimate == 0.0
    assert result.delta.ci_low == pytest.approx(-bound)
    assert result.delta.ci_high == pytest.approx(bound)
    assert result.equivalence["equivalent"]  # the tied edit is settled: within +-5 pp
    # one trial per case: 26 pairs, and the rule is the exact bound at 26 (13.2 pp), which
    # the tied comparison at 19 trials narrows 18-fold
    first = rows[rows["trial"] == 0]
    one = paired_compare(first, first.copy(), options=CompareOptions(n_resamples=1000))
    assert one.delta.ci_high == pytest.approx(proportion_confint(0, 26, method="beta")[1])


def test_saturated_comparisons_use_the_pairs_too() -> None:
    rows = _tied_rows(26, 19, seed=2).assign(passed=True)
    result = paired_compare(rows, rows.copy(), options=CompareOptions(n_resamples=1000))
    assert result.delta.ci_high == pytest.approx(0.00744, abs=1e-5)
    assert result.delta.ci_low == pytest.approx(-0.00744, abs=1e-5)


def test_a_pair_that_differs_counts_and_a_moved_case_leaves_the_rule() -> None:
    rows = _tied_rows(10, 4, seed=3)
    other = rows.copy()
    # case c00 swaps a pass and a fail between two trials: its difference stays 0, but two of
    # the 40 pairs now differ, and the bound is Clopper-Pearson's at 2 of 40
    c0 = other.index[other["case_id"] == "c00"]
    other.loc[c0, "passed"] = [True, False, True, False]
    base = rows.copy()
    base.loc[c0, "passed"] = [False, True, True, False]
    swapped = paired_compare(base, other, options=CompareOptions(n_resamples=1000))
    assert swapped.delta.ci_high == pytest.approx(proportion_confint(2, 40, method="beta")[1])
    # a case that moved (+50 pp): the interval is the t interval of the differences (scipy),
    # not the pairs' bound
    moved = other.copy()
    moved.loc[c0, "passed"] = True
    result = paired_compare(base, moved, options=CompareOptions(n_resamples=1000))
    deltas = np.r_[0.5, np.zeros(9)]
    t_low, t_high = stats.t.interval(0.95, 9, loc=deltas.mean(), scale=stats.sem(deltas))
    assert result.delta.ci_low == pytest.approx(t_low)
    assert result.delta.ci_high >= t_high


def test_unequal_trials_count_the_fewest_pairs_of_a_case() -> None:
    base = np.ones((4, 6))
    base[0, 2:] = np.nan  # one case has 2 pairs: 4 cases x 2 = 8 pairs count
    counts = pair_ties(row_pairs(base, base.copy()))
    assert counts == PairTies(8, 0)
    # a case that is the mean of two conditions with 3 and 5 pairs carries 2 x 3 = 6 pairs
    rows = row_pairs(np.ones((4, 5)), np.ones((4, 5)))
    rows = rows._replace(pairs=np.array([3, 5, 5, 5]))
    assert pair_ties(rows, np.array([0, 0, 1, 1])) == PairTies(12, 0)
    # values outside [0, 1] have no bound
    assert pair_ties(row_pairs(np.full((2, 2), 3.0), np.full((2, 2), 3.0))) is None


def test_two_runs_of_two_conditions_pool_the_pairs_of_each_case() -> None:
    before = pd.concat([_tied_rows(12, 5, seed=4, condition=c) for c in ("none", "skill")])
    compared = evalkit.compare(before, before.copy(), n_resamples=1000)
    bound = proportion_confint(0, 12 * 2 * 5, method="beta")[1]
    assert compared.delta.ci_high == pytest.approx(bound)
    for _, part in compared.by_condition:
        assert part.delta.ci_high == pytest.approx(proportion_confint(0, 60, method="beta")[1])


def test_lift_prints_the_same_tied_interval_as_compare() -> None:
    none = _tied_rows(8, 6, seed=5, condition="none")
    preloaded = none.assign(condition="preloaded")
    lifted = evalkit.lift(pd.concat([none, preloaded], ignore_index=True), n_resamples=1000)
    metrics = lifted.metrics.set_index("metric")
    compared = paired_compare(none, preloaded.assign(condition="none"),
                              options=CompareOptions(n_resamples=1000))
    assert metrics.loc["oracle_lift", "ci_high"] == pytest.approx(compared.delta.ci_high)
    assert compared.delta.ci_high == pytest.approx(proportion_confint(0, 48, method="beta")[1])


def _truth(population: np.ndarray, effect: float) -> float:
    return float(np.mean(np.clip(population + effect, 0, 1) - population))


@pytest.mark.parametrize("n_cases", [2, 3, 5, 7])
@pytest.mark.parametrize("n_trials", [5, 19])
@pytest.mark.parametrize(("model", "effect"), [
    ("near-saturated", 0.02), ("near-saturated", -0.03), ("near-saturated", 0.0),
    ("saturated", -0.02),
])
def test_tied_comparisons_keep_their_coverage(
    n_cases: int, n_trials: int, model: str, effect: float
) -> None:
    # Cases drawn afresh each time. near-saturated: pass rates Beta(19, 1) (mean 95 %), every
    # case moved by `effect` (clipped to [0, 1]); saturated: the baseline always passes and each
    # case's candidate fails with its own chance (exponential, mean |effect|). The arms share
    # their random numbers (trial t passes in both unless the rate moved past it), so a case's
    # discordance rate is exactly its change: the tightest case for the bound.
    rng = np.random.default_rng(1000 * n_cases + 10 * n_trials + int(100 * effect) + len(model))
    population = rng.beta(19, 1, size=1_000_000)
    truth = _truth(population, effect) if model == "near-saturated" else effect
    covered = tied = 0
    for draw in range(N_DRAWS):
        if model == "near-saturated":
            a_rate = rng.beta(19, 1, size=n_cases)
            b_rate = np.clip(a_rate + effect, 0, 1)
        else:
            a_rate = np.ones(n_cases)
            b_rate = 1.0 - rng.exponential(-effect, size=n_cases)  # mean 1 + effect
        u = rng.random((n_cases, n_trials))
        a, b = (u < a_rate[:, None]).astype(float), (u < b_rate[:, None]).astype(float)
        ci = paired_delta_interval(a, b, n_resamples=200, confidence=0.95, seed=draw)
        covered += ci.ci_low <= truth <= ci.ci_high
        tied += bool(np.all(a == b))
    assert covered / N_DRAWS >= FLOOR
    assert tied > 0  # the rule acted in these draws


@pytest.mark.parametrize(("n_cases", "n_trials"), [(5, 19), (7, 19), (26, 19)])
def test_exact_for_the_compared_cases_even_when_the_change_is_concentrated(
    n_cases: int, n_trials: int
) -> None:
    # One fixed suite: 1 case in 10 drops 40 pp, the rest do not move. Over repeated runs of
    # these very cases, the interval of an all-tied run covers their mean change (the bound
    # is exact for the compared cases). Cases drawn afresh would not be covered when the
    # sample holds no affected case: see docs/statistics.md.
    rng = np.random.default_rng(n_cases)
    a_rate = rng.beta(19, 1, size=n_cases)
    hit = np.zeros(n_cases, dtype=bool)
    hit[: max(1, n_cases // 10)] = True
    b_rate = np.where(hit, np.clip(a_rate - 0.4, 0, 1), a_rate)
    truth = float(np.mean(b_rate - a_rate))
    covered = 0
    for draw in range(N_DRAWS):
        u = rng.random((n_cases, n_trials))
        a, b = (u < a_rate[:, None]).astype(float), (u < b_rate[:, None]).astype(float)
        ci = paired_delta_interval(a, b, n_resamples=200, confidence=0.95, seed=draw)
        covered += ci.ci_low <= truth <= ci.ci_high
    assert covered / N_DRAWS >= FLOOR
