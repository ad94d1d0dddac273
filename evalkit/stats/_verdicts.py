"""Verdicts: overall (from a paired interval) and per case (exact tests + multiplicity control).

Per-case test, and why. A case's trials are independent repeats of one task, so within a case
the baseline and candidate trials are two independent binomial samples. evalkit tests each case
with **Fisher's exact test** (two-sided, scipy) on its 2x2 table of passes and failures by arm.
It is exact (never above its nominal size, whatever the case's true pass rate), which keeps the
multiplicity guarantee below exact, and it needs no pairing of trials: matching trial ``t`` of
one run with trial ``t`` of another carries no information for an LLM agent unless the two runs
share seeds, and McNemar on 3 aligned pairs can never reach p < 0.25. For scores, the
per-case test is the exact two-sample permutation test on the difference of means (scipy
``permutation_test``; enumerated exactly when there are at most 10,000 distinct splits,
otherwise 9,999 random ones, which still gives a valid p-value).

Multiplicity: **Holm** (family-wise error rate) by default (the same numbers as statsmodels
``multipletests(method="holm")``; other corrections call ``multipletests`` directly):
in an A/A comparison the probability of naming *any* case is at most ``alpha``, which is what
a CI gate that blocks on "named regressed cases" needs. ``correction="fdr_bh"``
(Benjamini-Hochberg, false-discovery rate) is available for exploratory reviews.

Consequence worth knowing: with few trials no single case can be named. With 3 trials per arm
the smallest Fisher p-value is 0.1; with 5 it is 0.0079, still above Holm's 0.05/30 for 30
cases. Naming cases needs roughly 8-10 trials per arm; the overall verdict does not.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
from scipy import stats

from evalkit._settings import CORRECTION
from evalkit.stats._interval import Interval
from evalkit.stats._settings import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD  # re-exported
from evalkit.stats._signflip import minimum_cases
from evalkit.stats._types import Verdict

#: Below this many cases the overall verdict also needs the exact sign-flip test to reject.
EXACT_GUARD_BELOW = 20
#: Rounding slack when comparing an estimate with the threshold (0.15 - 0.1 < 0.05 in floats).
_TOLERANCE = 1e-12


def verdict(delta: Interval, threshold: float = DEFAULT_THRESHOLD) -> Verdict:
    """Verdict of a paired difference (candidate - baseline), as ``docs/architecture.md`` says.

    - ``"improved"``: the CI excludes 0 (``ci_low > 0``) and the estimate is at least the
      practical ``threshold`` (default 5 pp of pass rate, or 0.05 of score);
    - ``"regressed"``: the CI upper bound is below 0 and the estimate is at most
      ``-threshold`` (the threshold binds both directions alike);
    - ``"inconclusive"``: otherwise, including undefined (NaN) intervals.

    Args:
        delta: The paired difference with its interval.
        threshold: Practical threshold of "improved" and "regressed" (>= 0).

    Returns:
        ``"improved"``, ``"regressed"`` or ``"inconclusive"``.

    Examples:
        >>> verdict(Interval(0.12, 0.03, 0.21, 0.95, "paired-cluster-bootstrap"))
        'improved'
        >>> verdict(Interval(0.02, 0.01, 0.03, 0.95, "paired-cluster-bootstrap"))
        'inconclusive'
        >>> verdict(Interval(-0.10, -0.18, -0.02, 0.95, "paired-cluster-bootstrap"))
        'regressed'
    """
    estimate, low, high = float(delta.estimate), float(delta.ci_low), float(delta.ci_high)
    if low > 0 and estimate >= threshold - _TOLERANCE:
        return "improved"
    if high < 0 and estimate <= -threshold + _TOLERANCE:
        return "regressed"
    return "inconclusive"


class OverallVerdict(NamedTuple):
    """The overall verdict of a paired comparison and, when needed, why it is what it is.

    Attributes:
        verdict: ``"improved"``, ``"regressed"`` or ``"inconclusive"``.
        note: Plain-language explanation whenever the interval, the sign-flip test or the
            threshold point different ways (empty when they all agree).
    """

    verdict: Verdict
    note: str


def overall_verdict(
    delta: Interval,
    sign_pvalue: float,
    n_cases: int,
    threshold: float = DEFAULT_THRESHOLD,
) -> OverallVerdict:
    """Verdict that needs the interval *and* the exact sign-flip test over cases to agree.

    :func:`verdict` reads the interval. Below :data:`EXACT_GUARD_BELOW` cases a direction is
    only announced when the sign-flip test over cases
    (:func:`evalkit.stats._signflip.sign_flip_test`) also rejects at
    ``alpha = 1 - delta.confidence``: that test is exact under "no change", so the rate of
    false verdicts in A/A comparisons is at most ``alpha`` at these sizes, where the interval
    alone is not (measured: 11 % at 2 cases, 5.6 % at 6). Below
    :func:`~evalkit.stats._signflip.minimum_cases` cases it cannot reject and the verdict is
    always inconclusive. From :data:`EXACT_GUARD_BELOW` cases on the interval decides (its
    A/A rate is at or below alpha there, and the discrete sign-flip test would cost about
    3 pp of power); a disagreeing sign-flip test is then explained in the note.

    Args:
        delta: Paired difference with its interval.
        sign_pvalue: Two-sided p-value of the sign-flip test over cases.
        n_cases: Cases compared.
        threshold: Practical threshold for "improved".

    Returns:
        :class:`OverallVerdict`.

    Examples:
        >>> ci = Interval(0.12, 0.03, 0.21, 0.95, "paired-cluster-bootstrap")
        >>> overall_verdict(ci, 0.004, 40).verdict
        'improved'
        >>> overall_verdict(ci, 0.5, 2).verdict
        'inconclusive'
    """
    alpha = 1.0 - float(delta.confidence)
    from_interval = verdict(delta, threshold)
    significant = bool(sign_pvalue <= alpha)
    floor = minimum_cases(alpha)
    if n_cases < floor:
        note = (
            f"no verdict is possible with {n_cases} case(s): the sign-flip test over cases "
            f"needs at least {floor} cases to reach alpha {alpha:g} (its smallest p-value is "
            f"2/2^{n_cases}); add cases"
        )
        return OverallVerdict("inconclusive", note)
    if from_interval != "inconclusive" and not significant:
        if n_cases >= EXACT_GUARD_BELOW:
            note = (
                f"the sign-flip test over cases is borderline (p = {sign_pvalue:.3g}); with "
                f"{n_cases} cases the interval decides"
            )
            return OverallVerdict(from_interval, note)
        note = (
            f"the interval excludes 0 but the sign-flip test over cases does not reject "
            f"(p = {sign_pvalue:.3g} > {alpha:g}); below {EXACT_GUARD_BELOW} cases both must "
            "agree"
        )
        return OverallVerdict("inconclusive", note)
    if from_interval == "inconclusive" and significant:
        estimate = float(delta.estimate)
        clear = float(delta.ci_low) > 0 or float(delta.ci_high) < 0
        if clear and abs(estimate) < threshold:
            note = (
                f"the change is statistically clear (sign-flip p = {sign_pvalue:.3g}) but "
                f"smaller than the practical threshold of {threshold * 100:g} pp"
            )
        else:
            note = (
                f"the sign-flip test over cases rejects (p = {sign_pvalue:.3g}) but the "
                "interval includes 0: the evidence is borderline, so no verdict"
            )
        return OverallVerdict("inconclusive", note)
    low, high = float(delta.ci_low), float(delta.ci_high)
    if from_interval == "inconclusive" and (low > 0 or high < 0):
        note = (
            f"the interval excludes 0 but the change ({float(delta.estimate) * 100:+.1f} pp) is "
            f"smaller than the practical threshold of {threshold * 100:g} pp, which binds "
            "both directions"
        )
        return OverallVerdict("inconclusive", note)
    return OverallVerdict(from_interval, "")


@functools.lru_cache(maxsize=65536)
def fisher_pvalue(pass_c: int, n_c: int, pass_b: int, n_b: int) -> float:
    """Two-sided Fisher exact p-value of one case's 2x2 table (cached: tables repeat).

    Args:
        pass_c: Candidate passes.
        n_c: Candidate trials.
        pass_b: Baseline passes.
        n_b: Baseline trials.

    Returns:
        The p-value (1.0 when the table has an empty margin).
    """
    table = [[pass_c, n_c - pass_c], [pass_b, n_b - pass_b]]
    if pass_c + pass_b == 0 or pass_c + pass_b == n_c + n_b:
        return 1.0
    return float(stats.fisher_exact(table, alternative="two-sided").pvalue)


def fisher_pvalues(
    pass_c: np.ndarray, n_c: np.ndarray, pass_b: np.ndarray, n_b: np.ndarray
) -> np.ndarray:
    """:func:`fisher_pvalue` of many 2x2 tables, each distinct table computed once.

    Args:
        pass_c: Candidate passes per table.
        n_c: Candidate trials per table.
        pass_b: Baseline passes per table.
        n_b: Baseline trials per table.

    Returns:
        One p-value per table.
    """
    tables = np.stack([np.asarray(a, dtype=np.int64) for a in (pass_c, n_c, pass_b, n_b)], axis=1)
    if len(tables) == 0:
        return np.zeros(0)
    distinct, inverse = np.unique(tables, axis=0, return_inverse=True)
    pvalues = np.array([fisher_pvalue(*(int(v) for v in table)) for table in distinct.tolist()])
    return np.asarray(pvalues[inverse.reshape(-1)])


def permutation_pvalue(candidate: np.ndarray, baseline: np.ndarray, seed: int) -> float:
    """Two-sided permutation p-value of the difference of means of two samples.

    Args:
        candidate: Candidate trial values.
        baseline: Baseline trial values.
        seed: Seed for the random permutations (used only when they are not enumerated).

    Returns:
        The p-value.
    """
    pooled = np.concatenate([candidate, baseline])
    if np.ptp(pooled) == 0:
        return 1.0
    splits = math.comb(len(pooled), len(candidate))
    result = stats.permutation_test(
        (candidate, baseline),
        lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        permutation_type="independent",
        alternative="two-sided",
        n_resamples=np.inf if splits <= 10_000 else 9_999,
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return float(min(result.pvalue, 1.0))


def newcombe_interval(
    pass_c: np.ndarray, n_c: np.ndarray, pass_b: np.ndarray, n_b: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe hybrid-score intervals for per-case differences of two proportions.

    Args:
        pass_c: Candidate passes per case.
        n_c: Candidate trials per case.
        pass_b: Baseline passes per case.
        n_b: Baseline trials per case.
        confidence: Confidence level.

    Returns:
        Arrays of lower and upper bounds (statsmodels ``confint_proportions_2indep``,
        ``method="newcomb"``).
    """
    from statsmodels.stats.proportion import confint_proportions_2indep  # 15 ms: on use

    low, high = confint_proportions_2indep(
        pass_c, n_c, pass_b, n_b, method="newcomb", compare="diff", alpha=1.0 - confidence
    )
    return np.atleast_1d(np.asarray(low, dtype=float)), np.atleast_1d(np.asarray(high, dtype=float))


def welch_interval(
    candidate: np.ndarray, baseline: np.ndarray, confidence: float
) -> tuple[float, float]:
    """Welch t interval of a difference of two means (NaN with fewer than 2 trials per arm).

    Args:
        candidate: Candidate trial values.
        baseline: Baseline trial values.
        confidence: Confidence level.

    Returns:
        Lower and upper bounds.
    """
    n1, n2 = len(candidate), len(baseline)
    diff = float(np.mean(candidate) - np.mean(baseline))
    if n1 < 2 or n2 < 2:
        return float("nan"), float("nan")
    v1, v2 = float(np.var(candidate, ddof=1)) / n1, float(np.var(baseline, ddof=1)) / n2
    if v1 + v2 == 0:
        return diff, diff
    df = (v1 + v2) ** 2 / (v1**2 / (n1 - 1) + v2**2 / (n2 - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2.0, df)) * math.sqrt(v1 + v2)
    return diff - half, diff + half


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values.

    Identical to statsmodels ``multipletests(p, method="holm")[1]`` (checked in the tests);
    computed here because statsmodels' Holm branch calls ``gc.collect()`` on every call, which
    costs tens of milliseconds per comparison.

    Args:
        pvalues: Raw p-values.

    Returns:
        Adjusted p-values, capped at 1.
    """
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p, kind="stable")
    steps = np.arange(len(p), 0, -1)
    adjusted_sorted = np.minimum(np.maximum.accumulate(p[order] * steps), 1.0)
    out = np.empty_like(p)
    out[order] = adjusted_sorted
    return out


def adjust_pvalues(pvalues: np.ndarray, alpha: float, correction: str) -> np.ndarray:
    """Multiplicity-adjusted p-values across cases.

    Holm is computed by :func:`holm`; the other corrections by statsmodels ``multipletests``.

    Args:
        pvalues: One p-value per case.
        alpha: Family-wise (or FDR) level.
        correction: ``"holm"``, ``"bonferroni"``, ``"fdr_bh"``, ``"fdr_by"`` or ``"none"``.

    Returns:
        Adjusted p-values (capped at 1).
    """
    CORRECTION.check(correction)
    if correction == "none" or len(pvalues) == 0:
        return np.asarray(pvalues, dtype=float).copy()
    if correction == "holm":
        return holm(pvalues)
    from statsmodels.stats.multitest import multipletests  # 22 ms: only for other corrections

    adjusted = multipletests(pvalues, alpha=alpha, method=correction)[1]
    return np.asarray(np.minimum(np.asarray(adjusted, dtype=float), 1.0), dtype=float)


def case_verdicts(
    estimates: np.ndarray, adjusted: np.ndarray, alpha: float, threshold: float
) -> list[Verdict]:
    """Per-case verdicts from adjusted p-values.

    A case is ``"regressed"`` when its adjusted p-value is below ``alpha`` and its estimate is
    at most ``-threshold``; ``"improved"`` when the adjusted p-value is below ``alpha`` and its
    estimate is at least ``threshold``; ``"inconclusive"`` otherwise (the threshold binds both
    directions alike).

    Args:
        estimates: Per-case differences (candidate - baseline).
        adjusted: Adjusted p-values.
        alpha: Significance level.
        threshold: Practical threshold of both directions.

    Returns:
        One verdict per case.
    """
    estimate = np.asarray(estimates, dtype=float).reshape(-1)
    p = np.asarray(adjusted, dtype=float).reshape(-1)
    if len(estimate) != len(p):
        raise ValueError(f"{len(estimate)} estimates but {len(p)} adjusted p-values")
    significant = p < alpha
    regressed = significant & (estimate < 0) & (estimate <= -threshold + _TOLERANCE)
    improved = significant & (estimate > 0) & (estimate >= threshold - _TOLERANCE)
    out: list[Verdict] = np.where(
        regressed, "regressed", np.where(improved, "improved", "inconclusive")
    ).tolist()
    return out
