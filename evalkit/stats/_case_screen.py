"""Which cases moved: one row per case that pools its providers, stratified by provider.

A comparison's per-unit rows (:func:`~evalkit.stats._paired.case_table`) are one row per case
and provider (and condition): on a leaderboard of 18 providers x 3 trials a side, each row
holds 3 trials a side, no row can reach a verdict, and a correction across 1,566 rows makes
sure none does. Yet each case has 54 trials a side. This module gives each case one row
that uses them all, with each (provider, condition) cell of the case a **stratum**, so a
provider that is better at everything never looks like an effect of the edit:

- **pass bits**: the Cochran-Mantel-Haenszel test of conditional independence of arm and
  outcome over the strata's 2x2 tables (statsmodels ``StratifiedTable.test_null_odds`` with
  the continuity correction), or Fisher's exact test when only one stratum carries
  information (with one provider this is the per-unit row's own test). CMH needs a large
  total, not large strata, which is the leaderboard's shape (many strata of 3 + 3 trials);
- **scores**: a stratified permutation test (arm labels permuted within each stratum,
  statistic the case's estimate below), exact in distribution under "no change in any
  stratum" whatever the scores look like; with one stratum the exact two-sample
  permutation test of the per-unit rows.

The case's **estimate** weighs its strata alike: the mean over strata of (candidate -
baseline) rate, the weighting ``compare``'s overall figure uses for a case. Its interval:
one stratum, the per-unit row's (Newcombe; scores Welch); several, a Wald interval of that
mean with each stratum's variance Agresti-Caffo adjusted (one pass and one failure added to
each arm; scores: each arm's sample variance, Satterthwaite degrees of freedom).

"Which cases moved" is a screening question, so the rows are corrected across cases at a
stated false discovery rate (Benjamini-Hochberg by default, ``CompareOptions.case_correction``).
A case is named regressed (improved) when its adjusted p is below ``alpha`` and its estimate
is at most ``-threshold`` (at least ``+threshold``). Confirmatory uses (the gate) ask for
Holm instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from evalkit.stats._case_table import CASE_COLUMNS
from evalkit.stats._options import CompareOptions
from evalkit.stats._verdicts import (
    adjust_pvalues,
    case_verdicts,
    fisher_pvalues,
    newcombe_interval,
    permutation_pvalue,
    welch_interval,
)

#: Columns of the screen after the case columns: the per-unit table's, with the strata pooled
#: (``n_strata``), the smallest p the trial counts could give and the test that gave ``p_value``.
SCREEN_COLUMNS = ("n_strata", *CASE_COLUMNS, "p_smallest", "method")

#: The columns a stratum of a case row is made of: its providers. Conditions stay apart (a row
#: per case and condition): they are different treatments, and pooling them would dilute an
#: edit that changes one condition only (a case that falls 7/7 -> 0/7 when preloaded and is
#: unchanged in the three others is -25 pp pooled, and not named).
STRATUM_COLUMNS = ("provider",)

#: Random within-stratum permutations of the stratified score test.
SCORE_PERMUTATIONS = 1999


def case_columns(keys: pd.DataFrame) -> list[str]:
    """The unit columns that name a case row (all but the provider: case, and condition)."""
    return [c for c in keys.columns if c not in STRATUM_COLUMNS]


def case_screen(
    keys: pd.DataFrame,
    baseline: np.ndarray,
    candidate: np.ndarray,
    options: CompareOptions,
) -> pd.DataFrame:
    """One row per case, its strata pooled, corrected across cases at ``case_correction``.

    Args:
        keys: One row per unit (case, maybe with condition, provider, lane).
        baseline: ``(U, K)`` baseline trial values (NaN = absent).
        candidate: ``(U, K)`` candidate trial values.
        options: The comparison's settings (metric, confidence, alpha, threshold, seed and
            ``case_correction``).

    Returns:
        The case columns, then :data:`SCREEN_COLUMNS`: ``n_strata`` (cells pooled),
        ``n_baseline``/``n_candidate`` (trials pooled), the strata-averaged rates and
        estimate, its interval, the raw and adjusted p, the verdict, ``p_smallest`` (the
        smallest p these trial counts could give: pass bits only, else NaN) and ``method``.
    """
    columns = case_columns(keys)
    if keys.empty:
        return pd.DataFrame(columns=[*columns, *SCREEN_COLUMNS])
    groups = keys.reset_index(drop=True).groupby(columns, sort=True, dropna=False).indices
    binary = options.metric == "passed"
    seeds = np.random.SeedSequence(0 if options.seed is None else options.seed).generate_state(
        len(groups)
    )
    names = [name if isinstance(name, tuple) else (name,) for name in groups]
    table = pd.DataFrame(names, columns=columns)
    if binary:
        blocks = [np.asarray(positions) for positions in groups.values()]
        figures = _binary_cases(blocks, baseline, candidate, options.confidence)
    else:
        figures = pd.DataFrame([
            _score_case(baseline[positions], candidate[positions], options.confidence, int(seed))
            for positions, seed in zip(groups.values(), seeds, strict=True)
        ])
    table = pd.concat([table, figures.reset_index(drop=True)], axis=1)
    pvalues = table["p_value"].to_numpy(dtype=float)
    adjusted = adjust_pvalues(pvalues, options.alpha, options.case_correction)
    table["p_adjusted"] = adjusted
    table["verdict"] = case_verdicts(
        table["estimate"].to_numpy(dtype=float), adjusted, options.alpha, options.threshold
    )
    return table[[*columns, *SCREEN_COLUMNS]]


def _rates(base: np.ndarray, cand: np.ndarray) -> dict[str, object]:
    n_b = np.isfinite(base).sum(axis=1)
    n_c = np.isfinite(cand).sum(axis=1)
    rate_b = np.nansum(base, axis=1) / n_b
    rate_c = np.nansum(cand, axis=1) / n_c
    return {
        "n_strata": len(n_b),
        "n_baseline": int(n_b.sum()),
        "n_candidate": int(n_c.sum()),
        "baseline_rate": float(rate_b.mean()),
        "candidate_rate": float(rate_c.mean()),
        "estimate": float((rate_c - rate_b).mean()),
    }


def _binary_cases(
    groups: list[np.ndarray], baseline: np.ndarray, candidate: np.ndarray, confidence: float
) -> pd.DataFrame:
    """The pooled rows of every case's pass bits at once (a case's strata: its group's rows).

    Vectorised over cases: a case's sums are ``np.add.reduceat`` over its block of strata, so
    a 2,500-case screen costs array passes, not 2,500 calls into statsmodels.
    """
    sizes = np.array([len(positions) for positions in groups])
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    order = np.concatenate(groups)
    base, cand = baseline[order], candidate[order]
    n_b, n_c = np.isfinite(base).sum(axis=1), np.isfinite(cand).sum(axis=1)
    sum_b, sum_c = np.nansum(base, axis=1), np.nansum(cand, axis=1)
    x_b, x_c = np.rint(sum_b).astype(int), np.rint(sum_c).astype(int)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate_b, rate_c = sum_b / n_b, sum_c / n_c

    def mean(values: np.ndarray) -> np.ndarray:
        return np.asarray(np.add.reduceat(values, starts) / sizes)

    estimate = mean(rate_c - rate_b)
    low, high = _caffo_intervals(x_c, n_c, x_b, n_b, starts, sizes, confidence)
    single = sizes == 1
    if single.any():
        first = starts[single]
        one_low, one_high = newcombe_interval(
            x_c[first], n_c[first], x_b[first], n_b[first], confidence
        )
        low[single], high[single] = one_low, one_high
    pvalue, method = _stratified_pvalues(x_c, n_c, x_b, n_b, starts)
    zeros = np.zeros_like(n_b)
    smallest = np.minimum(
        _stratified_pvalues(n_c, n_c, zeros, n_b, starts)[0],
        _stratified_pvalues(zeros, n_c, n_b, n_b, starts)[0],
    )
    return pd.DataFrame({
        "n_strata": sizes,
        "n_baseline": np.add.reduceat(n_b, starts),
        "n_candidate": np.add.reduceat(n_c, starts),
        "baseline_rate": mean(rate_b),
        "candidate_rate": mean(rate_c),
        "estimate": estimate,
        # the interval holds the estimate (a NaN bound stays NaN)
        "ci_low": np.where(estimate < low, estimate, low),
        "ci_high": np.where(estimate > high, estimate, high),
        "p_value": pvalue,
        "p_smallest": smallest,
        "method": method,
    })


def _stratified_pvalues(
    x_c: np.ndarray, n_c: np.ndarray, x_b: np.ndarray, n_b: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided p of "arm and outcome are independent in every stratum", per case.

    A case's strata are its block from ``starts``. Fisher's exact test when one stratum
    carries information (both arms present, neither all passes nor all failures), else the
    continuity-corrected CMH test over the informative strata; 1.0 when none does. The CMH
    statistic is summed over each case's informative strata with the formula of
    statsmodels' ``StratifiedTable.test_null_odds(correction=True)``; a case with one
    informative stratum takes Fisher's exact p of it (cached: tables repeat).
    """
    x_c, n_c, x_b, n_b = (np.asarray(a, dtype=np.int64) for a in (x_c, n_c, x_b, n_b))
    passes, total = x_c + x_b, n_c + n_b
    informative = (n_c > 0) & (n_b > 0) & (passes > 0) & (passes < total)
    count = np.add.reduceat(informative.astype(np.int64), starts)
    pvalue = np.ones(len(starts))
    method = np.full(len(starts), "no informative stratum", dtype=object)
    one = np.flatnonzero(count == 1)
    if len(one):
        at = np.add.reduceat(np.where(informative, np.arange(len(informative)), 0), starts)[one]
        pvalue[one] = fisher_pvalues(x_c[at], n_c[at], x_b[at], n_b[at])
        method[one] = "fisher"
    several = count >= 2
    if several.any():
        a, b = x_c.astype(float), (n_c - x_c).astype(float)
        c, d = x_b.astype(float), (n_b - x_b).astype(float)
        n = np.where(informative, total, 2).astype(float)
        observed = np.where(informative, a - (a + b) * (a + c) / n, 0.0)
        variance = np.where(
            informative, (a + b) * (c + d) * (a + c) * (b + d) / (n**2 * (n - 1)), 0.0
        )
        statistic = (np.abs(np.add.reduceat(observed, starts)) - 0.5) ** 2 / np.add.reduceat(
            variance, starts
        ).clip(min=np.finfo(float).tiny)
        pvalue[several] = np.minimum(1.0, stats.chi2.sf(statistic[several], 1))
        method[several] = "cmh"
    return pvalue, method


def _caffo_intervals(
    x_c: np.ndarray,
    n_c: np.ndarray,
    x_b: np.ndarray,
    n_b: np.ndarray,
    starts: np.ndarray,
    sizes: np.ndarray,
    confidence: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Wald intervals of the strata-averaged differences, each arm Agresti-Caffo adjusted."""
    p_c = (x_c + 1.0) / (n_c + 2.0)
    p_b = (x_b + 1.0) / (n_b + 2.0)
    variance = p_c * (1 - p_c) / (n_c + 2.0) + p_b * (1 - p_b) / (n_b + 2.0)
    centre = np.add.reduceat(p_c - p_b, starts) / sizes
    half = float(stats.norm.isf((1 - confidence) / 2)) * np.sqrt(
        np.add.reduceat(variance, starts)
    ) / sizes
    return np.maximum(-1.0, centre - half), np.minimum(1.0, centre + half)


def _score_case(
    base: np.ndarray, cand: np.ndarray, confidence: float, seed: int
) -> dict[str, object]:
    """The pooled row of one case's scores (its strata are the rows of the matrices)."""
    figures = _rates(base, cand)
    estimate = float(figures["estimate"])  # type: ignore[arg-type]
    strata = [
        (c[np.isfinite(c)], b[np.isfinite(b)]) for c, b in zip(cand, base, strict=True)
    ]
    if len(strata) == 1:
        low, high = welch_interval(strata[0][0], strata[0][1], confidence)
        pvalue = permutation_pvalue(strata[0][0], strata[0][1], seed)
        method = "permutation"
    else:
        low, high = _stratified_welch(strata, confidence)
        pvalue = stratified_permutation_pvalue(strata, seed)
        method = "stratified-permutation"
    if math.isfinite(low):
        low, high = min(low, estimate), max(high, estimate)
    return figures | {
        "ci_low": low,
        "ci_high": high,
        "p_value": pvalue,
        "p_smallest": float("nan"),
        "method": method,
    }


def _stratified_welch(
    strata: Sequence[tuple[np.ndarray, np.ndarray]], confidence: float
) -> tuple[float, float]:
    """T interval of the strata-averaged difference of means (Satterthwaite's df)."""
    parts = []
    for cand, base in strata:
        if len(cand) < 2 or len(base) < 2:
            return float("nan"), float("nan")
        parts += [np.var(cand, ddof=1) / len(cand) / len(strata) ** 2, len(cand) - 1]
        parts += [np.var(base, ddof=1) / len(base) / len(strata) ** 2, len(base) - 1]
    variances = np.array(parts[0::2], dtype=float)
    dfs = np.array(parts[1::2], dtype=float)
    centre = float(np.mean([np.mean(c) - np.mean(b) for c, b in strata]))
    total = float(variances.sum())
    if total == 0:
        return centre, centre
    df = total**2 / float(np.sum(variances**2 / dfs))
    half = float(stats.t.isf((1 - confidence) / 2, df)) * math.sqrt(total)
    return centre - half, centre + half


def stratified_permutation_pvalue(
    strata: Sequence[tuple[np.ndarray, np.ndarray]], seed: int
) -> float:
    """Two-sided p of a stratified permutation test of the strata-averaged difference.

    Arm labels are permuted within each stratum (:data:`SCORE_PERMUTATIONS` random
    permutations, ``p = (1 + hits) / (1 + permutations)``, which keeps the test valid).

    Args:
        strata: ``(candidate values, baseline values)`` per stratum.
        seed: Seed of the permutations.

    Returns:
        The p-value (1.0 when no stratum varies).
    """
    rng = np.random.default_rng(seed)
    observed = np.mean([np.mean(c) - np.mean(b) for c, b in strata])
    draws = np.zeros(SCORE_PERMUTATIONS)
    varies = False
    for cand, base in strata:
        pooled = np.concatenate([cand, base])
        if np.ptp(pooled) == 0:
            continue
        varies = True
        shuffled = rng.permuted(np.tile(pooled, (SCORE_PERMUTATIONS, 1)), axis=1)
        draws += shuffled[:, : len(cand)].mean(axis=1) - shuffled[:, len(cand) :].mean(axis=1)
    if not varies:
        return 1.0
    draws /= len(strata)
    hits = int(np.sum(np.abs(draws) >= abs(observed) - 1e-12))
    return float((1 + hits) / (1 + SCORE_PERMUTATIONS))
