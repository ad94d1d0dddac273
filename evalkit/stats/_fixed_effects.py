"""Least squares with a blocking factor absorbed: F tests of fixed-effects models in linear time.

A model ``y ~ C(block) + X`` (one intercept per block, e.g. per case, plus a few columns ``X``,
e.g. treatment-coded providers) has one dummy column per block. Built as a dense design and
solved by SVD (statsmodels ``OLS``) it costs ``O(n * blocks^2)`` time and ``n * blocks``
memory: 20,000 rows x 2,500 cases is 400 MB and minutes. The Frisch-Waugh-Lovell theorem
gives the same fit from the **within transformation**: subtract each block's mean from ``y``
and from every column of ``X`` (the projection off the block dummies, exact for unbalanced
blocks too), then regress the demeaned ``y`` on the demeaned ``X``. The residuals, hence the
residual sum of squares, are those of the full model; the rank of the full design is the
number of blocks plus the rank of the demeaned ``X``. That costs ``O(n * p^2)`` for ``p``
columns of ``X``: linear in the number of rows, whatever the number of blocks.

Two nested fits with the same blocks give the F test of the columns the larger one adds
(``(RSS_small - RSS_large) / df_num`` over ``RSS_large / df_den``), which is what statsmodels'
``anova_lm`` (type I and, for a term no other term contains, type II) and ``OLS.f_test``
compute on the dense design; ``tests/stats/test_fixed_effects.py`` checks them against each
other to 1e-9.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats

#: Singular values of a demeaned design below this share of the largest count as zero: a
#: column that is a combination of the block dummies and of the other columns (providers that
#: never share a case with the others, say) adds no rank, as in statsmodels' ``pinv``.
RANK_TOLERANCE = 1e-10


class WithinFit(NamedTuple):
    """A least-squares fit of ``y ~ C(block) + X`` through the within transformation.

    Attributes:
        rss: Residual sum of squares.
        rank: Rank of the full design (blocks, plus the rank of ``X`` within blocks).
        n: Number of observations.
    """

    rss: float
    rank: int
    n: int

    @property
    def df_resid(self) -> int:
        """Residual degrees of freedom, ``n - rank``."""
        return self.n - self.rank


class FTest(NamedTuple):
    """The F test of the columns a larger fit adds to a smaller one (same blocks).

    Attributes:
        f_statistic: ``(sum_sq / df_num) / (rss / df_den)`` of the larger fit; NaN when
            undefined (no added rank, no residual degrees of freedom, or a residual variance
            of 0).
        pvalue: Upper tail of ``F(df_num, df_den)`` at ``f_statistic``; NaN when undefined.
        df_num: Rank the larger fit adds.
        df_den: Residual degrees of freedom of the larger fit.
        sum_sq: Sum of squares the added columns explain (``RSS_small - RSS_large``).
        ms_resid: Residual mean square of the larger fit (``rss / df_den``).
    """

    f_statistic: float
    pvalue: float
    df_num: int
    df_den: int
    sum_sq: float
    ms_resid: float


def demean(values: np.ndarray, blocks: np.ndarray, n_blocks: int | None = None) -> np.ndarray:
    """``values`` minus the mean of its block (each column of a 2-d array on its own).

    Args:
        values: ``(n,)`` or ``(n, p)`` float array.
        blocks: ``(n,)`` block codes, integers in ``0 .. n_blocks - 1``.
        n_blocks: Number of blocks (default: ``blocks.max() + 1``).

    Returns:
        The demeaned array, of the shape of ``values``.

    Examples:
        >>> demean(np.array([1.0, 3.0, 10.0]), np.array([0, 0, 1])).tolist()
        [-1.0, 1.0, 0.0]
    """
    blocks = np.asarray(blocks, dtype=np.intp)
    size = int(blocks.max()) + 1 if n_blocks is None and len(blocks) else int(n_blocks or 0)
    counts = np.bincount(blocks, minlength=size).astype(float)
    matrix = np.asarray(values, dtype=float)
    columns = matrix.reshape(len(blocks), -1)
    means = np.empty((size, columns.shape[1]))
    for j in range(columns.shape[1]):
        means[:, j] = np.bincount(blocks, weights=columns[:, j], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means /= counts[:, None]
    centred: np.ndarray = (columns - means[blocks]).reshape(matrix.shape)
    return centred


def within_fit(y: np.ndarray, blocks: np.ndarray, design: np.ndarray | None = None) -> WithinFit:
    """Residual sum of squares and rank of ``y ~ C(block) + design``, without block dummies.

    Args:
        y: ``(n,)`` responses.
        blocks: ``(n,)`` block codes (integers; any values, they are renumbered).
        design: ``(n, p)`` further columns (none: the model of block means only). An
            intercept or a column constant within blocks adds nothing (it is absorbed).

    Returns:
        The :class:`WithinFit`.

    Examples:
        >>> y = np.array([1.0, 2.0, 5.0, 7.0])
        >>> fit = within_fit(y, np.array([0, 0, 1, 1]))
        >>> fit.rss, fit.rank, fit.df_resid
        (2.5, 2, 2)
    """
    codes, n_blocks = _codes(blocks)
    residual = demean(y, codes, n_blocks)
    rank = n_blocks
    if design is not None and design.size:
        within = demean(np.asarray(design, dtype=float).reshape(len(codes), -1), codes, n_blocks)
        coefficients, _, design_rank, _ = np.linalg.lstsq(within, residual, rcond=RANK_TOLERANCE)
        residual = residual - within @ coefficients
        rank += int(design_rank)
    return WithinFit(rss=float(residual @ residual), rank=rank, n=len(codes))


def nested_f_test(small: WithinFit, large: WithinFit) -> FTest:
    """F test of what ``large`` adds to ``small`` (two fits of one ``y`` with the same blocks).

    Args:
        small: The restricted fit.
        large: The fit with the added columns.

    Returns:
        The :class:`FTest` (NaN statistic and p-value when undefined; see its fields).
    """
    df_num = large.rank - small.rank
    df_den = large.df_resid
    sum_sq = max(small.rss - large.rss, 0.0)
    ms_resid = large.rss / df_den if df_den > 0 else float("nan")
    if df_num < 1 or df_den < 1 or not ms_resid > 0:
        return FTest(float("nan"), float("nan"), df_num, df_den, sum_sq, ms_resid)
    f_statistic = (sum_sq / df_num) / ms_resid
    pvalue = float(stats.f.sf(f_statistic, df_num, df_den))
    return FTest(float(f_statistic), pvalue, df_num, df_den, float(sum_sq), float(ms_resid))


def treatment_columns(factor: np.ndarray) -> np.ndarray:
    """Treatment-coded dummies of a factor (its first level in sorted order as reference).

    Args:
        factor: ``(n,)`` labels.

    Returns:
        ``(n, levels - 1)`` float array (``(n, 0)`` for one level).

    Examples:
        >>> treatment_columns(np.array(["b", "a", "c"])).tolist()
        [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]
    """
    levels, codes = np.unique(np.asarray(factor), return_inverse=True)
    columns = np.zeros((len(codes), max(len(levels) - 1, 0)))
    coded = codes > 0
    columns[np.flatnonzero(coded), codes[coded] - 1] = 1.0
    return columns


def _codes(blocks: np.ndarray) -> tuple[np.ndarray, int]:
    """Block labels renumbered ``0 .. k - 1``, and ``k``."""
    levels, codes = np.unique(np.asarray(blocks), return_inverse=True)
    return codes.astype(np.intp).reshape(-1), len(levels)

