"""Aligned pairs of a comparison and how many of them differ: the evidence of a tied comparison.

A comparison pairs trial ``t`` of a case's baseline with trial ``t`` of its candidate. When every
case's mean difference is exactly zero the per-case differences carry no spread, so an interval
over cases has nothing to measure; the pairs still do. Whatever the coupling of the two arms,
``|p_B - p_A| <= P(A_t != B_t)`` for one case's pass rates (and ``|E B - E A| <= P(A != B)``
for scores in [0, 1]), so the mean change over the compared cases is at most their mean
*discordance rate*, and that rate is bounded exactly from the pairs
(:func:`evalkit.stats._delta_interval.widen_delta_interval`).

The pairs are counted so that the bound is valid for the unweighted mean over cases (each case
one unit, as in every interval of ``compare``): a case that is the mean of ``R`` rows (its
conditions or providers) with at least ``k`` aligned pairs each carries ``R k`` pairs, and the
comparison counts ``C`` times the fewest of any case (``C`` cases). With ``P(all tie) =
prod (1 - d_r)^{k_r}`` and ``log(1 - d)`` concave, that count ``N`` gives ``P(all tie) <=
(1 - mean d)^N``: the Clopper-Pearson bound at ``N`` pairs holds for the mean over cases
however the discordance is spread over the compared cases.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class RowPairs(NamedTuple):
    """Aligned pairs per row of a comparison (a row: one case, or one case x condition).

    Attributes:
        pairs: Aligned (baseline, candidate) trial pairs of each row (both present).
        discordant: Those whose two values differ.
        bounded: Every value lies in [0, 1] (pass bits or scores), so a pair's difference is
            at most 1.
    """

    pairs: np.ndarray
    discordant: np.ndarray
    bounded: bool


class PairTies(NamedTuple):
    """The pairs of a whole comparison, counted for its mean over cases (see the module doc).

    Attributes:
        pairs: ``C`` times the fewest pairs of any case.
        discordant: Discordant pairs of the comparison (all of them, at most ``pairs``).
    """

    pairs: int
    discordant: int


def row_pairs(baseline: np.ndarray, candidate: np.ndarray) -> RowPairs:
    """Count the aligned pairs of ``(C, K)`` trial matrices (NaN = absent trial).

    Args:
        baseline: Baseline trial values.
        candidate: Candidate trial values, same layout (column ``t`` is trial label ``t``).

    Returns:
        The per-row counts.

    Examples:
        >>> base = np.array([[1.0, 0.0], [1.0, np.nan]])
        >>> counts = row_pairs(base, np.array([[1.0, 1.0], [1.0, 1.0]]))
        >>> counts.pairs.tolist(), counts.discordant.tolist(), counts.bounded
        ([2, 1], [1, 0], True)
    """
    base = np.asarray(baseline, dtype=float)
    cand = np.asarray(candidate, dtype=float)
    both = np.isfinite(base) & np.isfinite(cand)
    values = np.concatenate([base[np.isfinite(base)], cand[np.isfinite(cand)]])
    bounded = bool(values.size) and bool(np.all((values >= 0.0) & (values <= 1.0)))
    differ = both & (np.where(both, base, 0.0) != np.where(both, cand, 0.0))
    return RowPairs(both.sum(axis=1), differ.sum(axis=1), bounded)


def pair_ties(rows: RowPairs, clusters: np.ndarray | None = None) -> PairTies | None:
    """The comparison's pair count for its mean over cases (rows grouped by ``clusters``).

    Args:
        rows: Per-row counts (:func:`row_pairs`).
        clusters: The case (cluster) code of each row, when a case is the mean of several
            rows (its conditions or providers); None: each row is a case.

    Returns:
        The counts, or None when some case has no aligned pair or a value lies outside
        [0, 1] (the bound then does not apply).
    """
    pairs = np.asarray(rows.pairs, dtype=np.int64)
    if not rows.bounded or pairs.size == 0 or int(pairs.min()) == 0:
        return None
    codes = np.arange(pairs.size) if clusters is None else np.asarray(clusters)
    _, inverse, per_case_rows = np.unique(codes, return_inverse=True, return_counts=True)
    fewest = np.full(per_case_rows.size, np.iinfo(np.int64).max)
    np.minimum.at(fewest, inverse, pairs)
    count = int(per_case_rows.size * int((fewest * per_case_rows).min()))
    return PairTies(count, min(int(np.sum(rows.discordant)), count))
