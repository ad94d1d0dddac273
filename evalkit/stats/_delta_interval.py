"""How the interval of a mean per-case difference is widened for small groups: one rule.

A mean over cases of per-case differences (``candidate rate - baseline rate``) is printed by
``compare`` (its delta, overall, per condition and per provider) and by ``lift`` (realized and
oracle lift, routing gap, stale harm). Both start from Hesterberg's expanded percentile
bootstrap over cases and both widen it by the rule below, implemented here once, so that the
same differences get the same interval wherever they are printed:

1. **Contain the Student-t interval** of the per-case differences (``C - 1`` degrees of
   freedom). A percentile bootstrap cannot reach beyond the smallest and largest difference,
   so with a handful of cases it is far too narrow; the t interval is not.
2. **Where every case moved by the same amount** the t interval has no width either (no
   spread), so a finite sample would claim certainty: seven cases that each move 1/5 -> 2/5
   gave ``[+20, +20]``. The interval then contains the Wilson interval of the mean difference
   mapped onto [0, 1] (``(d + 1) / 2``) at ``C`` cases: a difference of rates lies in
   [-1, 1], and a bounded mean of ``C`` cases can need no more than Wilson's interval at ``C``
   (the variance of a [0, 1] value with mean ``m`` is at most ``m (1 - m)``). Cases, not
   trials, are the units here: trials of a case are repeats of one task, not independent
   evidence, so they do not narrow this bound.
   **Where every case's difference is zero** and the trial pairs are known (``ties``), the
   pairs are the evidence instead: a case's change is at most its discordance rate (the
   chance that its aligned baseline and candidate trials differ), so the mean change is at
   most the mean discordance rate, and the interval contains ``[-u, +u]`` with ``u`` the
   exact Clopper-Pearson upper bound of that rate at the interval's level (``x`` discordant
   of ``N`` pairs, :mod:`evalkit.stats._ties`; 0 of ``N``: ``1 - (alpha / 2)^(1 / N)``).
   26 cases x 19 tied trials give +-0.7 pp instead of +-35.9 pp. The bound is exact for the
   compared cases whatever their mix, and for cases drawn from a population whenever the
   change is spread over cases; a change confined to a kind of case the sample lacks is
   seen by no interval over those cases (docs/statistics.md).
3. Differences of rates stay in [-1, 1]; the bootstrap interval is never narrowed.

Differences of scores outside [-1, 1] get step 1 only (no bound to map onto [0, 1]).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from evalkit.stats._interval import Interval
from evalkit.stats._means import t_interval
from evalkit.stats._proportions import wilson_bounds
from evalkit.stats._ties import PairTies

#: Widths at or below this are zero (floating-point noise of identical differences).
ZERO_WIDTH = 1e-12


def discordance_bound(ties: PairTies, confidence: float) -> float:
    """Exact upper bound of the discordance rate: Clopper-Pearson at ``confidence``.

    Args:
        ties: The comparison's pairs and discordant pairs.
        confidence: Two-sided level (the upper bound is the ``1 - alpha / 2`` quantile).

    Returns:
        The upper bound, statsmodels' ``proportion_confint(x, N, alpha, method="beta")[1]``.

    Examples:
        >>> round(discordance_bound(PairTies(494, 0), 0.95), 4)
        0.0074
    """
    if ties.discordant >= ties.pairs:
        return 1.0
    alpha = 1.0 - confidence
    return float(special.betaincinv(ties.discordant + 1, ties.pairs - ties.discordant,
                                    1.0 - alpha / 2.0))


def widen_delta_interval(
    interval: Interval, case_deltas: np.ndarray, ties: PairTies | None = None
) -> Interval:
    """Widen a bootstrap interval of a mean per-case difference by the small-group rule.

    Args:
        interval: The bootstrap interval of ``mean(case_deltas)``.
        case_deltas: One difference per case (finite).
        ties: The comparison's aligned trial pairs (None: not known, e.g. one rate per
            case), used where every difference is zero.

    Returns:
        The interval with the same estimate, level and method label, widened to contain the
        t interval of ``case_deltas`` and, where that leaves it zero-width and the differences
        lie in [-1, 1]: with every difference zero and ``ties`` given, ``+-`` the exact bound
        of the discordance rate over the pairs; otherwise the Wilson interval of the mapped
        mean at ``len(case_deltas)`` cases. Unchanged with fewer than two cases or undefined
        bounds.
    """
    n_cases = len(case_deltas)
    if n_cases < 2 or not (np.isfinite(interval.ci_low) and np.isfinite(interval.ci_high)):
        return interval
    t = t_interval(case_deltas, interval.confidence)
    low, high = min(interval.ci_low, t.ci_low), max(interval.ci_high, t.ci_high)
    bounded = bool(np.all(np.abs(case_deltas) <= 1.0))
    if bounded:
        no_change = bool(np.all(np.abs(case_deltas) <= ZERO_WIDTH))
        if high - low <= ZERO_WIDTH and no_change and ties is not None:
            bound = discordance_bound(ties, interval.confidence)
            low, high = min(low, -bound), max(high, bound)
        elif high - low <= ZERO_WIDTH:
            mapped = (float(np.mean(case_deltas)) + 1.0) / 2.0
            w_low, w_high = wilson_bounds(mapped * n_cases, n_cases, 1.0 - interval.confidence)
            low, high = min(low, 2.0 * w_low - 1.0), max(high, 2.0 * w_high - 1.0)
        low, high = max(low, -1.0), min(high, 1.0)
    return interval._replace(
        ci_low=min(low, interval.ci_low), ci_high=max(high, interval.ci_high)
    )


def tied_pairs_behind(bound: float, confidence: float) -> float:
    """The pairs, all tied, whose :func:`discordance_bound` is ``bound`` (its inverse).

    Args:
        bound: A half-width the tied-pairs rule printed, in (0, 1).
        confidence: Its level.

    Returns:
        ``log(alpha / 2) / log(1 - bound)`` (fractional; fewer than the real pairs when some
        pairs differed, so a plan from it errs towards more trials).

    Examples:
        >>> round(tied_pairs_behind(discordance_bound(PairTies(494, 0), 0.95), 0.95))
        494
    """
    return math.log((1.0 - confidence) / 2.0) / math.log1p(-bound)


def tied_pairs_needed(margin: float, confidence: float) -> int:
    """Fewest tied pairs whose :func:`discordance_bound` lies inside ``+-margin``.

    Args:
        margin: The practical threshold, in (0, 1).
        confidence: The interval's level.

    Returns:
        The smallest ``N`` with ``1 - (alpha / 2)^(1 / N) < margin``.

    Examples:
        >>> tied_pairs_needed(0.05, 0.95)
        72
    """
    pairs = max(1, math.floor(tied_pairs_behind(margin, confidence)))
    while discordance_bound(PairTies(pairs, 0), confidence) >= margin:
        pairs += 1
    return pairs


def tied_pairs_of(interval: Interval, case_deltas: np.ndarray) -> float | None:
    """The tied pairs behind ``interval`` when the tied-pairs rule made it (for planning).

    Args:
        interval: A comparison's interval of its mean per-case difference.
        case_deltas: Its per-row differences.

    Returns:
        :func:`tied_pairs_behind` its half-width, or None when the rule did not make it
        (some difference is not zero, the interval is not symmetric about 0, or it is the
        Wilson interval at ``C`` cases of a zero spread without pairs).

    Examples:
        >>> ci = Interval(0.0, -0.0074396, 0.0074396, 0.95, "paired-cluster-bootstrap")
        >>> round(tied_pairs_of(ci, np.zeros(26)))
        494
    """
    deltas = np.asarray(case_deltas, dtype=float)
    n_cases = len(deltas)
    if n_cases < 2 or interval.estimate != 0 or not bool(np.all(np.abs(deltas) <= ZERO_WIDTH)):
        return None
    high = float(interval.ci_high)
    if not (0.0 < high < 1.0) or not math.isclose(-float(interval.ci_low), high):
        return None
    wilson = 2.0 * wilson_bounds(n_cases / 2.0, n_cases, 1.0 - interval.confidence)[1] - 1.0
    if math.isclose(high, wilson):
        return None
    return tied_pairs_behind(high, interval.confidence)
