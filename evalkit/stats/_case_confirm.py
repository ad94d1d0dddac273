"""Confirming named cases: the trials a per-case test needs, and the family-wise verdicts.

A screen (the per-case rows of a comparison, at a false discovery rate) names the cases that
seem to have moved. Confirming them is a second, separate experiment: fresh trials of just
those cases, each case tested on the new trials alone with the same exact test the per-case
rows use (two-sided Fisher on the case's 2x2 table of passes), Holm-corrected over the cases
confirmed. :func:`fisher_power` is that test's exact power at a given number of trials per
side, :func:`trials_to_confirm` the fewest trials that reach a target power, and
:func:`confirm_case_table` the verdicts on the new trials.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
import pandas as pd

from evalkit._settings import ALPHA, CONFIDENCE, POWER, THRESHOLD
from evalkit.stats._types import Verdict
from evalkit.stats._verdicts import (
    adjust_pvalues,
    case_verdicts,
    fisher_pvalue,
    newcombe_interval,
)

#: Relative tolerance of "as extreme as" in the two-sided Fisher p-value (scipy's rule).
_FISHER_TOLERANCE = 1 + 1e-7


@lru_cache(maxsize=256)
def _fisher_matrix(trials: int) -> np.ndarray:
    """Two-sided Fisher p-values of every table ``[[x, n - x], [y, n - y]]``: ``P[x, y]``.

    The hypergeometric chances are read off log binomial coefficients (one ``gammaln`` over
    0..n), not one ``scipy.stats.hypergeom.pmf`` call per margin: the per-call overhead made
    the matrices of a 200-trial plan take seconds.
    """
    from scipy.special import gammaln

    n = trials
    x = np.arange(n + 1)
    log_choose = gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1)  # log C(n, x)
    out = np.ones((n + 1, n + 1))
    for total in range(1, 2 * n):
        k = np.arange(max(0, total - n), min(n, total) + 1)
        log_margin = gammaln(2 * n + 1) - gammaln(total + 1) - gammaln(2 * n - total + 1)
        pmf = np.exp(log_choose[k] + log_choose[total - k] - log_margin)
        # A table's p-value sums the chances of its margins' tables no more likely than it;
        # sorted once, each such sum is a prefix of the cumulative sums.
        ordered = np.sort(pmf)
        sums = np.concatenate(([0.0], np.cumsum(ordered)))
        p = sums[np.searchsorted(ordered, pmf * _FISHER_TOLERANCE, side="right")]
        out[k, total - k] = np.minimum(p, 1.0)
    return out


def fisher_power(
    baseline_rate: float,
    candidate_rate: float,
    trials: int,
    alpha: float = ALPHA.default,
    threshold: float = THRESHOLD.default,
) -> float:
    """Exact chance that a case's Fisher test names the change in the true direction.

    With ``trials`` independent trials per side at the true pass rates, the chance that the
    two-sided Fisher p-value is below ``alpha`` and the observed difference has the true
    sign and reaches ``threshold`` in size (either direction): the verdict ``regressed`` or
    ``improved`` of :func:`evalkit.stats.confirm_case_table`.

    Args:
        baseline_rate: True baseline pass rate.
        candidate_rate: True candidate pass rate.
        trials: Trials per side.
        alpha: Level of the test (already divided for the multiplicity correction).
        threshold: Practical threshold the observed change must reach in size.

    Returns:
        The power, in [0, 1].

    Examples:
        >>> round(fisher_power(0.9, 0.3, 20, alpha=0.05), 3)
        0.979
    """
    from scipy.stats import binom

    n = int(trials)
    x = np.arange(n + 1)
    cand = binom.pmf(x, n, candidate_rate)[:, None]
    base = binom.pmf(x, n, baseline_rate)[None, :]
    diff = (x[:, None] - x[None, :]) / n
    significant = _fisher_matrix(n) < alpha
    if candidate_rate < baseline_rate:  # the threshold binds a regression alike
        hit = significant & (diff < 0) & (diff <= -threshold + 1e-9)
    else:
        hit = significant & (diff > 0) & (diff >= threshold - 1e-9)
    return float(np.sum(cand * base * hit))


class TrialsPlan(NamedTuple):
    """The trials per side that confirm one case.

    Attributes:
        trials: Trials per side.
        power: The exact power at those trials (:func:`fisher_power`).
        capped: True when ``max_trials`` was reached before the target power.
    """

    trials: int
    power: float
    capped: bool


@lru_cache(maxsize=4096)  # a plan is a pure function of its rates: screens repeat them
def trials_to_confirm(
    baseline_rate: float,
    candidate_rate: float,
    *,
    alpha: float = ALPHA.default,
    power: float = POWER.default,
    max_trials: int = 40,
    threshold: float = THRESHOLD.default,
) -> TrialsPlan:
    """The fewest trials per side at which the case's Fisher test reaches ``power``.

    The search starts at statsmodels' normal-approximation sample size for two independent
    proportions (Cohen's h, ``NormalIndPower``) and walks to the exact answer, which Fisher's
    conservatism puts a little above it.

    Args:
        baseline_rate: Baseline pass rate to plan for.
        candidate_rate: Candidate pass rate to plan for.
        alpha: Level of the test (already divided for the multiplicity correction).
        power: Target power.
        max_trials: Cap on the trials per side.
        threshold: Practical threshold an improvement must reach.

    Returns:
        The plan; ``capped`` when even ``max_trials`` stays below ``power``.

    Examples:
        >>> plan = trials_to_confirm(0.9, 0.4, alpha=0.025)
        >>> plan.trials, plan.power >= 0.8, plan.capped
        (19, True, False)
    """
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    if max_trials < 2:
        raise ValueError(f"max_trials must be at least 2, but {max_trials} was passed")
    effect = abs(float(proportion_effectsize(candidate_rate, baseline_rate)))
    start = 2
    if effect > 0:
        approx = NormalIndPower().solve_power(effect_size=effect, alpha=alpha, power=power)
        start = int(min(max(2, np.floor(float(approx) * 0.8)), max_trials))
    reached = 0.0
    for trials in range(start, max_trials + 1):
        reached = fisher_power(baseline_rate, candidate_rate, trials, alpha, threshold)
        if reached >= power:
            return TrialsPlan(trials, reached, False)
    return TrialsPlan(max_trials, reached, True)


#: Columns :func:`confirm_case_table` adds to the case ids.
CONFIRM_COLUMNS = (
    "n_baseline", "n_candidate", "baseline_rate", "candidate_rate", "estimate", "ci_low",
    "ci_high", "p_value", "p_adjusted", "verdict",
)  # fmt: skip


def confirm_case_table(
    rows: pd.DataFrame,
    *,
    baseline: str,
    candidate: str,
    alpha: float = ALPHA.default,
    threshold: float = THRESHOLD.default,
    confidence: float = CONFIDENCE.default,
) -> pd.DataFrame:
    """Confirmatory per-case verdicts: Fisher per case, Holm over the cases given.

    Args:
        rows: Result rows (``case_id, condition, passed``) of the confirmation only: the
            screening data must not be among them.
        baseline: The baseline condition.
        candidate: The candidate condition.
        alpha: Family-wise level over the cases.
        threshold: Practical threshold of "improved".
        confidence: Level of the per-case Newcombe intervals (unadjusted).

    Returns:
        One row per case: ``case_id`` and :data:`CONFIRM_COLUMNS`; ``p_adjusted`` is Holm's
        over these cases, and ``verdict`` is ``regressed`` / ``improved`` / ``inconclusive``
        by the rule of :func:`evalkit.stats.case_verdicts`.

    Examples:
        >>> rows = pd.DataFrame({"case_id": ["a"] * 20 + ["b"] * 20,
        ...     "condition": (["A"] * 10 + ["B"] * 10) * 2,
        ...     "passed": [True] * 10 + [False] * 10 + [True] * 20})
        >>> confirm_case_table(rows, baseline="A", candidate="B")["verdict"].tolist()
        ['regressed', 'inconclusive']
    """
    passed = rows.assign(passed=rows["passed"].astype(bool))
    sides = passed[passed["condition"].isin([baseline, candidate])]
    grouped = sides.groupby(["case_id", "condition"])["passed"].agg(["sum", "count"])
    counts = pd.DataFrame(grouped.unstack("condition").fillna(0))
    cases = [str(c) for c in counts.index]
    pass_b = _column(counts, "sum", baseline)
    pass_c = _column(counts, "sum", candidate)
    n_b = _column(counts, "count", baseline)
    n_c = _column(counts, "count", candidate)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate_b, rate_c = pass_b / n_b, pass_c / n_c
    estimate = rate_c - rate_b
    pvalues = np.array(
        [fisher_pvalue(int(a), int(m), int(b), int(k))
         for a, m, b, k in zip(pass_c, n_c, pass_b, n_b, strict=True)]
    )  # fmt: skip
    low, high = newcombe_interval(pass_c, n_c, pass_b, n_b, confidence)
    adjusted = adjust_pvalues(pvalues, alpha, "holm")
    verdicts: list[Verdict] = case_verdicts(estimate, adjusted, alpha, threshold)
    return pd.DataFrame(
        {
            "case_id": cases,
            "n_baseline": n_b.astype("int64"),
            "n_candidate": n_c.astype("int64"),
            "baseline_rate": rate_b,
            "candidate_rate": rate_c,
            "estimate": estimate,
            "ci_low": np.minimum(low, estimate),
            "ci_high": np.maximum(high, estimate),
            "p_value": pvalues,
            "p_adjusted": adjusted,
            "verdict": verdicts,
        }
    )


def _column(counts: pd.DataFrame, stat: str, condition: str) -> np.ndarray:
    if (stat, condition) not in counts.columns:
        return np.zeros(len(counts))
    return counts[(stat, condition)].to_numpy(dtype=float)
