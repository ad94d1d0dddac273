"""Joint case resampling for metrics that are ratios of per-case sums."""

from __future__ import annotations

import numpy as np

from evalkit.stats import Interval, mean_ci, percentile_interval, proportion_ci, ratio_wilson

#: Bound on resamples x cases held in memory at once.
_CHUNK_CELLS = 4_000_000


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
        self, values: np.ndarray, mask: np.ndarray, confidence: float, method: str
    ) -> Interval:
        """Interval of the mean per-case difference of two rates over the cases in ``mask``.

        The expanded percentile bootstrap, widened as compare's is: to contain the Student-t
        interval of the per-case differences (a percentile bootstrap cannot reach beyond the
        smallest and largest difference), and, where every case moved by the same amount (no
        spread, so both are zero-width), to the Wilson interval of the mean difference mapped
        onto [0, 1] at the number of cases: a difference of rates lies in [-1, 1], and Wilson's
        interval at ``C`` cases is the widest a bounded mean of ``C`` cases can need. So 2
        cases that both stayed at 0 get a finite interval, never ``[0, 0]``.

        Args:
            values: Per-case differences (any value where ``mask`` is False).
            mask: The cases that count.
            confidence: Confidence level.
            method: Label stored in the interval.

        Returns:
            The interval (NaN when no case counts; NaN bounds with one case).
        """
        mask = mask.astype(bool)
        interval, used = self.ratio(
            np.where(mask, values, 0.0), mask.astype(float), confidence, method
        )
        deltas = values[mask]
        if used < 2 or not np.isfinite(interval.ci_low):
            return interval
        t = mean_ci(deltas, confidence)
        low, high = min(interval.ci_low, t.ci_low), max(interval.ci_high, t.ci_high)
        if high - low <= 1e-12:
            mapped = proportion_ci((interval.estimate + 1.0) / 2.0 * used, used, confidence)
            low, high = 2.0 * mapped.ci_low - 1.0, 2.0 * mapped.ci_high - 1.0
        low, high = max(low, -1.0), min(high, 1.0)
        return interval._replace(
            ci_low=min(low, interval.ci_low), ci_high=max(high, interval.ci_high)
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
