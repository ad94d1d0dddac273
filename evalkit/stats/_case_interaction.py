"""Is the change the same for every case? (case x condition interaction).

A mean over cases hides where an edit acts: an edit that breaks two cases of forty by 40 pp
moves the mean by 2 pp, inside any practical threshold. This test asks whether the cases'
changes differ by more than their trials' noise explains.

Within each stratum ``s`` (a provider and condition of the comparison), case ``c`` has the
difference of arm means ``d[c, s]`` with variance ``sigma2 * (1/n_b + 1/n_c)``. Under "the
change is the same for every case of the stratum" the two-way model ``y ~ case + arm`` holds
within ``s``; its residual sum of squares exceeds that of the full model (a mean per case and
arm) by exactly ``sum_c w[c, s] (d[c, s] - dbar[s])^2`` with ``w = 1 / (1/n_b + 1/n_c)`` and
``dbar`` the ``w``-weighted mean (the arm factor has two levels). The **F test** divides that
sum, over its ``sum_s (C_s - 1)`` degrees of freedom, by the pooled within-cell variance of
the trials (``sum (n - 1)`` degrees of freedom): the interaction F of a two-way ANOVA, in
time linear in the trials. For scores its p is read from the F distribution. Pass bits are
far from normal at a few trials a case (the F test then rejects 6-7 % of A/A comparisons at
5 %), so their p is a **permutation p**: the arm labels are permuted within every (case,
stratum) cell, which leaves each cell's passes and trials as they are and draws the
candidate's passes from their hypergeometric law (:data:`PERMUTATIONS` draws, ``p = (1 +
hits) / (1 + draws)``); exact when no case changed, and close to the nominal rate under a
change the same for every case (measured in ``tests/stats``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from evalkit._settings import SEED
from evalkit.stats._interval import json_float

#: Permutations of the pass-bit test.
PERMUTATIONS = 999
#: Bound on permutations x units held in memory at once.
_BLOCK_CELLS = 250_000


@dataclass(frozen=True)
class CaseInteraction:
    """Whether the candidate's change differs between cases.

    Attributes:
        n_cases: Cases compared.
        f_statistic: Interaction F (NaN when undefined).
        df_num: Its numerator degrees of freedom (cases - 1, summed over strata).
        df_den: The within-cell degrees of freedom (trials - 1, summed over cells).
        pvalue: p-value of the F test (NaN when undefined: fewer than two cases, one trial
            per cell, or no variation of trials within any cell).
        confidence: The level the test is read at (``differs``: p <= 1 - confidence).
        method: How it was computed.
    """

    n_cases: int
    f_statistic: float
    df_num: int
    df_den: int
    pvalue: float
    confidence: float
    method: str = "two-way ANOVA interaction F (case x arm within strata)"
    permutations: int = 0

    @property
    def differs(self) -> bool:
        """Whether the test rejects "the same change for every case"."""
        return bool(np.isfinite(self.pvalue) and self.pvalue <= 1.0 - self.confidence)

    def text(self) -> str:
        """The test in words, e.g. ``"F(39, 160) = 2.31, p = 0.0004"``."""
        if not np.isfinite(self.pvalue):
            return "not testable (no within-case variation of trials to test against)"
        return f"F({self.df_num}, {self.df_den}) = {self.f_statistic:.2f}, p = {self.pvalue:.3g}"

    def line(self) -> str:
        """One line for the compare text, worded like the provider one."""
        if not np.isfinite(self.pvalue):
            return (
                f"cases: {self.n_cases}; no test of whether the change differs between them "
                "(one trial per cell, or no trial-to-trial variation to test against)"
            )
        said = (
            "the change differs between cases" if self.differs
            else "no evidence the change differs between cases"
        )
        return f"cases: {said} (interaction {self.text()})"

    def to_dict(self) -> dict[str, Any]:
        """JSON object (``compare --json``'s ``case_interaction``)."""
        return {
            "n_cases": int(self.n_cases),
            "f_statistic": json_float(self.f_statistic),
            "df_num": int(self.df_num),
            "df_den": int(self.df_den),
            "pvalue": json_float(self.pvalue),
            "differs": self.differs,
            "confidence": float(self.confidence),
            "method": self.method,
            "permutations": int(self.permutations),
        }


def case_interaction(
    keys: pd.DataFrame,
    baseline: np.ndarray,
    candidate: np.ndarray,
    *,
    confidence: float,
    strata: tuple[str, ...] = ("condition", "provider"),
    binary: bool = False,
    seed: int | None = SEED.default,
) -> CaseInteraction:
    """The case x arm interaction F test of a comparison's trial matrices.

    Args:
        keys: One row per unit (case columns, maybe ``condition``/``provider``).
        baseline: ``(U, K)`` baseline trial values (NaN = absent).
        candidate: ``(U, K)`` candidate trial values.
        confidence: Level the result is read at.
        strata: Unit columns that make a stratum (those present are used).
        binary: The values are pass bits: the p-value is the within-cell permutation p.
        seed: Seed of the permutations.

    Returns:
        The :class:`CaseInteraction`.

    Examples:
        >>> keys = pd.DataFrame({"case_id": ["a", "b", "c"]})
        >>> base = np.array([[1.0, 1, 1, 0], [1, 0, 1, 1], [1, 1, 0, 1]])
        >>> cand = np.array([[0.0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 0, 1]])
        >>> result = case_interaction(keys, base, cand, confidence=0.95)
        >>> result.df_num, result.df_den, round(result.f_statistic, 2)
        (2, 18, 1.8)
    """
    by = [c for c in strata if c in keys.columns]
    others = [c for c in keys.columns if c not in by]
    n_cases = int(keys[others].drop_duplicates().shape[0]) if others else len(keys)
    n_b = np.isfinite(baseline).sum(axis=1).astype(float)
    n_c = np.isfinite(candidate).sum(axis=1).astype(float)
    mean_b = np.nansum(baseline, axis=1) / n_b
    mean_c = np.nansum(candidate, axis=1) / n_c
    within = np.nansum((baseline - mean_b[:, None]) ** 2, axis=1) + np.nansum(
        (candidate - mean_c[:, None]) ** 2, axis=1
    )
    df_den = int(np.sum(n_b - 1) + np.sum(n_c - 1))
    weight = 1.0 / (1.0 / n_b + 1.0 / n_c)
    stratum = (
        keys.groupby(by, sort=False, dropna=False).ngroup().to_numpy()
        if by
        else np.zeros(len(keys), dtype=int)
    )
    count = np.bincount(stratum)
    df_num = int(np.sum(np.maximum(count - 1, 0)))
    rss = float(within.sum())
    nan = float("nan")
    if df_num < 1 or df_den < 1 or rss <= 0:
        return CaseInteraction(n_cases, nan, df_num, max(df_den, 0), nan, confidence)
    between = _between(mean_c - mean_b, weight, stratum)
    f_statistic = float((between / df_num) / (rss / df_den))
    if not binary:
        pvalue = float(stats.f.sf(f_statistic, df_num, df_den))
        return CaseInteraction(n_cases, f_statistic, df_num, df_den, pvalue, confidence)
    x_c = np.rint(mean_c * n_c)
    passes = x_c + np.rint(mean_b * n_b)
    rng = np.random.default_rng(seed)
    good, bad, drawn_n = (
        passes.astype(np.int64), (n_b + n_c - passes).astype(np.int64), n_c.astype(np.int64)
    )
    # a unit's figures depend on its drawn count only: they are tabulated once per unit and
    # count (the expressions of the draws, element by element: the same bits) and looked up
    width = int(drawn_n.max()) + 1
    offset = np.arange(len(n_c), dtype=np.int64) * width
    count_c = np.arange(width, dtype=float)
    count_b = passes[:, None] - count_c
    within_of = count_c - count_c**2 / n_c[:, None] + count_b - count_b**2 / n_b[:, None]
    diff_of = count_c / n_c[:, None] - count_b / n_b[:, None]
    # in blocks of permutations: the generator draws row after row, so the blocks hold the
    # draws of one (PERMUTATIONS, units) call, and every row's sums are the same bits
    hits = 0
    block = max(1, _BLOCK_CELLS // len(n_c))
    total_w = np.bincount(stratum, weights=weight)
    cell = _cells(min(block, PERMUTATIONS), stratum, len(total_w))
    for start in range(0, PERMUTATIONS, block):
        size = (min(block, PERMUTATIONS - start), len(n_c))
        at = rng.hypergeometric(good, bad, drawn_n, size=size)
        at += offset
        drawn_within = np.take(within_of, at)  # binary SS per arm
        diff = np.take(diff_of, at)
        drawn_between = _between_rows(
            diff, weight * diff, weight, stratum, total_w, cell[: at.size], own=True
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = drawn_between / drawn_within.sum(axis=1)
        hits += int(np.sum(ratio >= between / rss - 1e-12))
    pvalue = (1 + hits) / (1 + PERMUTATIONS)
    return CaseInteraction(
        n_cases, f_statistic, df_num, df_den, pvalue, confidence,
        method="case x arm interaction F within strata, within-cell permutation p",
        permutations=PERMUTATIONS,
    )


def _between(diff: np.ndarray, weight: np.ndarray, stratum: np.ndarray) -> np.ndarray:
    """``sum w (d - dbar)^2`` over the last axis, ``dbar`` the weighted mean per stratum."""
    total_w = np.bincount(stratum, weights=weight)
    if diff.ndim == 1:
        centre = np.bincount(stratum, weights=weight * diff) / total_w
        return np.asarray(np.sum(weight * (diff - centre[stratum]) ** 2))
    cell = _cells(diff.shape[0], stratum, len(total_w))
    return _between_rows(diff, weight * diff, weight, stratum, total_w, cell)


def _cells(rows: int, stratum: np.ndarray, n_strata: int) -> np.ndarray:
    """The (row, stratum) cell of every element of a ``(rows, units)`` array, raveled."""
    return np.asarray((np.arange(rows)[:, None] * n_strata + stratum[None, :]).ravel())


def _between_rows(
    diff: np.ndarray,
    weighted: np.ndarray,
    weight: np.ndarray,
    stratum: np.ndarray,
    total_w: np.ndarray,
    cell: np.ndarray,
    *,
    own: bool = False,
) -> np.ndarray:
    """:func:`_between` of every row of ``diff``, given ``weighted = weight * diff``.

    Args:
        diff: ``(rows, units)`` differences.
        weighted: ``weight * diff``.
        weight: Weight per unit.
        stratum: Stratum code per unit.
        total_w: Total weight per stratum.
        cell: :func:`_cells` of ``diff``'s shape.
        own: ``diff`` may be overwritten.

    Returns:
        One sum per row.
    """
    # per row and stratum, summed in the order of np.add.at (same bits) by one bincount
    rows, n_strata = diff.shape[0], len(total_w)
    sums = np.bincount(cell, weights=weighted.ravel(), minlength=rows * n_strata)
    centre = sums.reshape(rows, n_strata) / total_w
    # w * (d - centre)^2, in place (the same operations, so the same bits); one stratum's
    # centre is a column, broadcast instead of gathered
    if n_strata == 1:
        spread = np.subtract(diff, centre, out=diff if own else None)
    else:
        spread = centre[:, stratum]
        np.subtract(diff, spread, out=spread)
    np.square(spread, out=spread)
    np.multiply(weight, spread, out=spread)
    return np.asarray(spread.sum(axis=1))
