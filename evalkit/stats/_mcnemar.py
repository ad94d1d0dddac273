"""McNemar's test and the arms' correlation: reference figures of a paired comparison."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: Below this many discordant pairs McNemar's test is exact (binomial), else chi-squared.
MCNEMAR_EXACT_BELOW = 25


class McNemarResult(NamedTuple):
    """McNemar's test on matched pass bits (trials that line up).

    Attributes:
        statistic: Test statistic (for the exact test, the smaller discordant count).
        pvalue: Two-sided p-value.
        exact: True when the exact binomial version was used.
        n_pairs: Number of matched (case, trial) pairs.
        baseline_only: Pairs passing in the baseline only.
        candidate_only: Pairs passing in the candidate only.
    """

    statistic: float
    pvalue: float
    exact: bool
    n_pairs: int
    baseline_only: int
    candidate_only: int


def mcnemar_test(baseline: np.ndarray, candidate: np.ndarray) -> McNemarResult | None:
    """McNemar's test on (case, trial) cells present in both arms, or None if there are none."""
    both = np.isfinite(baseline) & np.isfinite(candidate)
    if not both.any():
        return None
    b = baseline[both] > 0.5
    c = candidate[both] > 0.5
    table = np.array([[np.sum(b & c), np.sum(b & ~c)], [np.sum(~b & c), np.sum(~b & ~c)]])
    discordant = int(table[0, 1] + table[1, 0])
    exact = discordant < MCNEMAR_EXACT_BELOW
    # imported here: statsmodels' contingency tables cost about 2 s of start-up, and McNemar is
    # a reference test that only some paths ask for
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    result = sm_mcnemar(table, exact=exact, correction=True)
    return McNemarResult(
        statistic=float(result.statistic),
        pvalue=float(result.pvalue),
        exact=exact,
        n_pairs=int(both.sum()),
        baseline_only=int(table[0, 1]),
        candidate_only=int(table[1, 0]),
    )


def arm_correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation, NaN when either side is constant or there are < 2 points."""
    if len(x) < 2:
        return float("nan")
    dx, dy = x - x.mean(), y - y.mean()
    denominator = float(np.sqrt(np.sum(dx**2) * np.sum(dy**2)))
    if denominator <= 0.0:
        return float("nan")
    return float(np.clip(np.sum(dx * dy) / denominator, -1.0, 1.0))
