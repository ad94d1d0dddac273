"""Joint case resampling for metrics that are ratios of per-case sums."""

from __future__ import annotations

import numpy as np

from evalkit.stats import (
    Interval,
    PairTies,
    case_delta_interval,
    percentile_interval,
    ratio_wilson,
)

#: Bound on resamples x cases held in memory at once.
_CHUNK_CELLS = 4_000_000


class _OwnSeed:
    """Marks "use the resampler's own seed" (``None`` is a seed: unseeded)."""


_OWN_SEED = _OwnSeed()


class CaseResampler:
    """Bootstrap weights over cases, shared by every metric of a group (a joint resample).

    Each replicate draws the cases with replacement; ``W[r, i]`` counts how often case ``i``
    was drawn in replicate ``r``. A metric that is a ratio of per-case sums,
    ``sum(num) / sum(den)``, then has replicates ``W @ num / W @ den`` — one matrix product,
    no loop over resamples. A mean of per-case values restricted to the cases where it is
    defined is the special case ``num = value * mask``, ``den = mask``.

    Args:
        n_cases: Number of cases in the group.
        n_resamples: Number of bootstrap replicates.
        seed: Seed of ``np.random.default_rng``.
    """

    def __init__(self, n_cases: int, n_resamples: int, seed: int | None) -> None:
        self.n_cases = n_cases
        self.n_resamples = n_resamples
        self.seed = seed
        rng = np.random.default_rng(seed)
        rows = []
        chunk = max(1, _CHUNK_CELLS // max(n_cases, 1))
        for start in range(0, n_resamples, chunk):
            size = min(chunk, n_resamples - start)
            picks = rng.integers(0, max(n_cases, 1), size=(size, n_cases))
            flat = (picks + n_cases * np.arange(size)[:, None]).ravel()
            counts = np.bincount(flat, minlength=size * n_cases).reshape(size, n_cases)
            rows.append(counts.astype(np.float32))
        self.weights = np.vstack(rows) if rows else np.zeros((0, n_cases), dtype=np.float32)

    def ratio(
        self, num: np.ndarray, den: np.ndarray, confidence: float, method: str
    ) -> tuple[Interval, int]:
        """Interval of ``sum(num) / sum(den)`` over cases.

        Args:
            num: Per-case numerators.
            den: Per-case denominators (0 where the case does not count).
            confidence: Confidence level.
            method: Label stored in the interval.

        Returns:
            The interval and the number of cases that count (``den > 0``).
        """
        used = int(np.count_nonzero(den))
        total = float(den.sum())
        if total == 0:
            nan = float("nan")
            return Interval(nan, nan, nan, confidence, method), used
        estimate = float(num.sum() / total)
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = (self.weights @ num.astype(np.float64)) / (self.weights @ den.astype(np.float64))
        boot = boot[np.isfinite(boot)]
        return percentile_interval(boot, estimate, used, confidence, method), used

    def replicates(self, num: np.ndarray, den: np.ndarray) -> np.ndarray:
        """Bootstrap replicates of ``sum(num) / sum(den)`` (NaN where a replicate has no case)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(
                (self.weights @ num.astype(np.float64)) / (self.weights @ den.astype(np.float64))
            )

    def delta(
        self,
        values: np.ndarray,
        mask: np.ndarray,
        confidence: float,
        method: str,
        *,
        seed: int | None | _OwnSeed = _OWN_SEED,
        ties: PairTies | None = None,
    ) -> Interval:
        """Interval of the mean per-case difference of two rates over the cases in ``mask``.

        The one rule of :func:`evalkit.stats.case_delta_interval`, the same as ``compare``'s
        delta: the expanded percentile bootstrap over cases, widened to contain the Student-t
        interval of the per-case differences and, where every case moved by the same amount,
        the Wilson interval of the mean difference mapped onto [0, 1] at the number of cases
        (with every difference zero and ``ties`` given, the exact bound of the pairs'
        discordance rate). So 2 cases that both stayed at 0 get a finite interval, never
        ``[0, 0]``. It resamples the differences alone (not this resampler's joint weights),
        so the same differences and seed give the same interval as ``compare``.

        Args:
            values: Per-case differences (any value where ``mask`` is False).
            mask: The cases that count.
            confidence: Confidence level.
            method: Label stored in the interval.
            seed: Bootstrap seed (default: this resampler's).
            ties: The aligned trial pairs of the cases in ``mask`` (where every difference
                is zero, the interval is the exact bound of their discordance rate).

        Returns:
            The interval (NaN when no case counts; NaN bounds with one case).
        """
        return case_delta_interval(
            np.asarray(values, dtype=float)[mask.astype(bool)],
            n_resamples=self.n_resamples,
            confidence=confidence,
            seed=self.seed if isinstance(seed, _OwnSeed) else seed,
            method=method,
            ties=ties,
        )

    def share(self, num: np.ndarray, den: np.ndarray, confidence: float) -> tuple[Interval, int]:
        """Clustered Wilson interval of the share ``sum(num) / sum(den)`` over cases.

        Args:
            num: Per-case events.
            den: Per-case opportunities (0 where the case does not count).
            confidence: Confidence level.

        Returns:
            The interval (:func:`evalkit.stats.ratio_wilson`) and the cases that count.
        """
        return ratio_wilson(num, den, confidence), int(np.count_nonzero(den))
