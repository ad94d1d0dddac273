"""Sign-flip (randomization) test over cases: the cluster-aware test beside the verdict.

Under "the edit changed nothing" the two arms of a case are exchangeable, so each case's
difference ``candidate_rate - baseline_rate`` is as likely to carry either sign. The test
statistic is the mean per-case difference; its null distribution is that of the mean with
every case's sign flipped at random. The p-value is exact: all ``2^C`` sign patterns are
enumerated up to :data:`EXACT_UP_TO` cases, and beyond that ``R`` random patterns give
``(1 + #{|T*| >= |T|}) / (1 + R)``, which is also a valid p-value (never below its level).

When every non-zero difference has the same size (one trial per case on a pass/fail metric:
each case moved by -1, 0 or +1), the sign-flip distribution is a binomial one and the exact
p-value is the two-sided binomial test of the wins among the non-tied cases, which is the
exact (conditional) McNemar test: :func:`scipy.stats.binomtest` gives it at any case count,
so such data never meets the resampling floor.

Because the test is exact whatever the case count, the trial count or the shape of the case
difficulties, requiring it for a verdict bounds the false-verdict rate of an A/A comparison
by ``alpha`` at every suite size. Its price is a floor on the number of cases: with ``C``
cases the smallest two-sided p-value is ``2 / 2^C``, so no verdict is possible below
:func:`minimum_cases` (6 cases at alpha = 0.05).
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np
from scipy import stats

from evalkit._settings import N_RESAMPLES, SEED

#: Up to this many cases every sign pattern is enumerated (2^14 = 16,384 patterns).
EXACT_UP_TO = 14
#: Bound on patterns x cases held in memory at once.
_CHUNK_CELLS = 2_000_000
#: Slack (relative to sum |d|) when comparing resampled statistics with the observed one.
_SLACK = 1e-9


class SignFlipResult(NamedTuple):
    """Sign-flip test of the mean per-case difference.

    Attributes:
        pvalue: Two-sided p-value (1.0 with no case or only zero differences).
        n_cases: Cases tested.
        exact: True when every sign pattern was enumerated.
        n_patterns: Sign patterns used (``2^C`` when enumerated, 0 for the binomial form).
        method: ``"enumerated"``, ``"binomial"`` (exact McNemar: every non-zero difference
            the same size) or ``"resampled"``.
    """

    pvalue: float
    n_cases: int
    exact: bool
    n_patterns: int
    method: str = "enumerated"

    @property
    def at_floor(self) -> bool:
        """Whether a resampled p-value is its floor ``1 / (1 + R)``: no pattern reached it."""
        return self.method == "resampled" and self.pvalue * (1 + self.n_patterns) <= 1.0 + 1e-9

    def text(self) -> str:
        """``p = 0.0123``, or a bound at the resampling floor: ``p < 0.0001``."""
        if self.at_floor:
            return f"p < {1.0 / self.n_patterns:.2g}"
        return f"p = {self.pvalue:.3g}"


def minimum_cases(alpha: float) -> int:
    """Smallest number of cases at which the sign-flip test can reach ``alpha``.

    Args:
        alpha: Two-sided significance level.

    Returns:
        The smallest ``C`` with ``2 / 2^C <= alpha``.

    Examples:
        >>> minimum_cases(0.05), minimum_cases(0.01), minimum_cases(0.1)
        (6, 8, 5)
    """
    return max(1, math.ceil(1.0 - math.log2(alpha) - 1e-12))


def sign_flip_test(
    diffs: np.ndarray, n_resamples: int = N_RESAMPLES.default, seed: int | None = SEED.default
) -> SignFlipResult:
    """Two-sided sign-flip test that the per-case differences are centred on zero.

    Args:
        diffs: One difference per case (finite).
        n_resamples: Random sign patterns when there are more than :data:`EXACT_UP_TO` cases.
        seed: Seed of the random patterns.

    Returns:
        :class:`SignFlipResult`.

    Examples:
        >>> sign_flip_test(np.array([0.2, 0.4, 0.2, 0.6, 0.2, 0.4])).pvalue
        0.03125
        >>> sign_flip_test(np.array([0.2, 0.2])).pvalue
        0.5
    """
    values = np.asarray(diffs, dtype=float)
    n_cases = len(values)
    observed = abs(float(values.sum()))
    if n_cases == 0 or not np.any(values != 0.0):
        return SignFlipResult(1.0, n_cases, True, 0)
    cutoff = observed - _SLACK * float(np.abs(values).sum())
    sizes = np.abs(values[values != 0.0])
    if n_cases > EXACT_UP_TO and np.allclose(sizes, sizes[0], rtol=1e-9, atol=0.0):
        wins = int(np.count_nonzero(values > 0.0))
        pvalue = float(stats.binomtest(wins, len(sizes), 0.5).pvalue)
        return SignFlipResult(min(1.0, pvalue), n_cases, True, 0, "binomial")
    if n_cases <= EXACT_UP_TO:
        patterns = np.array(list(itertools.product((1.0, -1.0), repeat=n_cases)))
        totals = np.abs(patterns @ values)
        hits = int(np.count_nonzero(totals >= cutoff))
        return SignFlipResult(hits / len(patterns), n_cases, True, len(patterns))
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, _CHUNK_CELLS // n_cases)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        signs = rng.integers(0, 2, size=(size, n_cases), dtype=np.int8) * 2 - 1
        # as floats: a product of float arrays is BLAS's, twice as fast as a mixed one
        totals = np.abs(signs.astype(np.float64) @ values)
        hits += int(np.count_nonzero(totals >= cutoff))
    return SignFlipResult(
        (1 + hits) / (1 + n_resamples), n_cases, False, n_resamples, "resampled"
    )
