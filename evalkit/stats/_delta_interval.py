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
3. Differences of rates stay in [-1, 1]; the bootstrap interval is never narrowed.

Differences of scores outside [-1, 1] get step 1 only (no bound to map onto [0, 1]).
"""

from __future__ import annotations

import numpy as np

from evalkit.stats._interval import Interval
from evalkit.stats._means import t_interval
from evalkit.stats._proportions import wilson_bounds

#: Widths at or below this are zero (floating-point noise of identical differences).
ZERO_WIDTH = 1e-12


def widen_delta_interval(interval: Interval, case_deltas: np.ndarray) -> Interval:
    """Widen a bootstrap interval of a mean per-case difference by the small-group rule.

    Args:
        interval: The bootstrap interval of ``mean(case_deltas)``.
        case_deltas: One difference per case (finite).

    Returns:
        The interval with the same estimate, level and method label, widened to contain the
        t interval of ``case_deltas`` and, where that leaves it zero-width and the differences
        lie in [-1, 1], the Wilson interval of the mapped mean at ``len(case_deltas)`` cases;
        unchanged with fewer than two cases or undefined bounds.
    """
    n_cases = len(case_deltas)
    if n_cases < 2 or not (np.isfinite(interval.ci_low) and np.isfinite(interval.ci_high)):
        return interval
    t = t_interval(case_deltas, interval.confidence)
    low, high = min(interval.ci_low, t.ci_low), max(interval.ci_high, t.ci_high)
    bounded = bool(np.all(np.abs(case_deltas) <= 1.0))
    if bounded:
        if high - low <= ZERO_WIDTH:
            mapped = (float(np.mean(case_deltas)) + 1.0) / 2.0
            w_low, w_high = wilson_bounds(mapped * n_cases, n_cases, 1.0 - interval.confidence)
            low, high = min(low, 2.0 * w_low - 1.0), max(high, 2.0 * w_high - 1.0)
        low, high = max(low, -1.0), min(high, 1.0)
    return interval._replace(
        ci_low=min(low, interval.ci_low), ci_high=max(high, interval.ci_high)
    )
