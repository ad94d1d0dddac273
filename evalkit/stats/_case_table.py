"""The per-case table of a paired comparison: each row's estimate, interval, exact p and verdict."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit.stats._options import CompareOptions
from evalkit.stats._verdicts import (
    adjust_pvalues,
    case_verdicts,
    fisher_pvalues,
    newcombe_interval,
    permutation_pvalue,
    welch_interval,
)

#: The columns the per-case table adds after the unit columns (:func:`case_table`).
CASE_COLUMNS = (
    "n_baseline",
    "n_candidate",
    "baseline_rate",
    "candidate_rate",
    "estimate",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "verdict",
)


def case_table(
    keys: pd.DataFrame,
    baseline: np.ndarray,
    candidate: np.ndarray,
    options: CompareOptions,
) -> pd.DataFrame:
    """Per-case estimates, intervals, exact-test p-values and verdicts.

    Args:
        keys: One row per case (unit columns).
        baseline: ``(C, K)`` baseline trial values (NaN = absent).
        candidate: ``(C, K)`` candidate trial values.
        options: The comparison's settings: its metric (pass bits: Fisher + Newcombe;
            scores: permutation + Welch), the level of the per-case intervals (unadjusted),
            the level and correction of the per-case tests, the threshold of "improved",
            the seed of the permutation tests.

    Returns:
        ``keys`` joined with the :data:`CASE_COLUMNS`.
    """
    binary, confidence, seed = options.metric == "passed", options.confidence, options.seed
    n_b = np.isfinite(baseline).sum(axis=1)
    n_c = np.isfinite(candidate).sum(axis=1)
    rate_b = np.nanmean(baseline, axis=1)
    rate_c = np.nanmean(candidate, axis=1)
    estimate = rate_c - rate_b
    if binary:
        pass_b = np.rint(np.nansum(baseline, axis=1)).astype(int)
        pass_c = np.rint(np.nansum(candidate, axis=1)).astype(int)
        low, high = newcombe_interval(pass_c, n_c, pass_b, n_b, confidence)
        pvalues = fisher_pvalues(pass_c, n_c, pass_b, n_b)
    else:
        seeds = np.random.SeedSequence(0 if seed is None else seed).generate_state(len(keys))
        lows, highs, ps = [], [], []
        for i in range(len(keys)):
            cand = candidate[i][np.isfinite(candidate[i])]
            base = baseline[i][np.isfinite(baseline[i])]
            lo, hi = welch_interval(cand, base, confidence)
            lows.append(lo)
            highs.append(hi)
            ps.append(permutation_pvalue(cand, base, int(seeds[i])))
        low, high, pvalues = np.array(lows), np.array(highs), np.array(ps)
    low = np.minimum(low, estimate)
    high = np.maximum(high, estimate)
    adjusted = adjust_pvalues(pvalues, options.alpha, options.correction)
    figures = pd.DataFrame(
        {
            "n_baseline": n_b.astype("int64"),
            "n_candidate": n_c.astype("int64"),
            "baseline_rate": rate_b,
            "candidate_rate": rate_c,
            "estimate": estimate,
            "ci_low": low,
            "ci_high": high,
            "p_value": pvalues,
            "p_adjusted": adjusted,
            "verdict": case_verdicts(estimate, adjusted, options.alpha, options.threshold),
        }
    )  # one frame, not ten column insertions into a copy of the keys
    return pd.concat([keys.reset_index(drop=True), figures], axis=1)
