"""The pooled case rows against an independent reference built on statsmodels directly.

The fixture has the leaderboard's shape: 18 providers, 3 trials a side, 60 cases, a few of
them with a planted drop. Per case, the reference gathers the providers' 2x2 tables,
keeps those that carry information (both arms present, neither all passes nor all
failures), runs Fisher's exact test when one is left and the continuity-corrected
Cochran-Mantel-Haenszel test (``StratifiedTable.test_null_odds(correction=True)``)
when more are, then Benjamini-Hochberg across cases (``multipletests(method="fdr_bh")``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import StratifiedTable
from statsmodels.stats.multitest import multipletests

from evalkit.stats import CompareOptions, compare_tables

PROVIDERS = 18
TRIALS = 3
CASES = 60
PLANTED = {3: -0.6, 17: -0.6, 29: -0.5, 44: -0.6, 51: 0.5}  # case index -> change


def _side(rates: np.ndarray, rng: np.random.Generator, provider_lift: np.ndarray) -> pd.DataFrame:
    """One side's tidy rows: every case x provider x trial, pass bits drawn at ``rates``."""
    rows = []
    for i in range(CASES):
        for p in range(PROVIDERS):
            rate = float(np.clip(rates[i] + provider_lift[p], 0.02, 0.98))
            for t in range(TRIALS):
                rows.append(
                    {
                        "case_id": f"c{i:02d}",
                        "condition": "none",
                        "provider": f"p{p:02d}",
                        "trial": t,
                        "status": "ok",
                        "passed": bool(rng.random() < rate),
                    }
                )
    return pd.DataFrame(rows)


def _leaderboard(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    base_rates = rng.uniform(0.2, 0.8, CASES)
    base_rates[list(PLANTED)] = [0.8 if d < 0 else 0.3 for d in PLANTED.values()]
    cand_rates = base_rates.copy()
    for i, change in PLANTED.items():
        cand_rates[i] += change
    provider_lift = rng.uniform(-0.15, 0.15, PROVIDERS)  # some providers better at everything
    return _side(base_rates, rng, provider_lift), _side(cand_rates, rng, provider_lift)


def _reference_p(base: pd.DataFrame, cand: pd.DataFrame) -> pd.DataFrame:
    """Per case: raw p (Fisher on one informative stratum, else CMH), estimate."""
    b = base.groupby(["case_id", "provider"])["passed"].agg(["sum", "count"])
    c = cand.groupby(["case_id", "provider"])["passed"].agg(["sum", "count"])
    joined = b.add_suffix("_b").join(c.add_suffix("_c"))
    out = []
    for case, table in joined.groupby(level="case_id"):
        x_b, n_b = table["sum_b"].to_numpy(), table["count_b"].to_numpy()
        x_c, n_c = table["sum_c"].to_numpy(), table["count_c"].to_numpy()
        estimate = float(np.mean(x_c / n_c - x_b / n_b))
        keep = (x_b + x_c > 0) & (x_b + x_c < n_b + n_c)
        if keep.sum() == 0:
            p = 1.0
        elif keep.sum() == 1:
            k = int(np.flatnonzero(keep)[0])
            p = stats.fisher_exact([[x_c[k], n_c[k] - x_c[k]], [x_b[k], n_b[k] - x_b[k]]]).pvalue
        else:
            tables = [
                np.array([[xc, nc - xc], [xb, nb - xb]], dtype=float)
                for xc, nc, xb, nb in zip(x_c[keep], n_c[keep], x_b[keep], n_b[keep], strict=True)
            ]
            p = StratifiedTable(tables).test_null_odds(correction=True).pvalue
        out.append({"case_id": case, "estimate": estimate, "p_value": min(1.0, float(p))})
    frame = pd.DataFrame(out)
    frame["p_adjusted"] = multipletests(frame["p_value"], method="fdr_bh")[1]
    return frame.set_index("case_id")


@pytest.mark.parametrize("seed", [0, 1])
def test_pooled_case_rows_match_statsmodels_cmh_and_bh(seed: int) -> None:
    base, cand = _leaderboard(seed)
    result = compare_tables(base, cand, options=CompareOptions(n_resamples=500, seed=seed))
    screen = result.case_screen
    assert screen is not None and len(screen) == CASES
    got = screen.set_index("case_id").sort_index()
    want = _reference_p(base, cand).sort_index()
    assert (got["n_strata"] == PROVIDERS).all()
    assert (got["n_baseline"] == PROVIDERS * TRIALS).all()
    np.testing.assert_allclose(got["estimate"], want["estimate"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["p_value"], want["p_value"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got["p_adjusted"], want["p_adjusted"], rtol=1e-9, atol=1e-12)

    threshold, alpha = result.threshold, result.alpha
    significant = want["p_adjusted"] < alpha
    want_regressed = set(want.index[significant & (want["estimate"] <= -threshold)])
    want_improved = set(want.index[significant & (want["estimate"] >= threshold)])
    assert set(result.regressed_cases) == want_regressed
    assert set(result.improved_cases) == want_improved
    # The planted drops are large enough at 54 trials a side to be named.
    assert {f"c{i:02d}" for i, d in PLANTED.items() if d < 0} <= want_regressed
    out = result.to_dict()
    assert set(out["regressed_cases"]) == want_regressed
    assert set(out["improved_cases"]) == want_improved


def test_one_informative_stratum_uses_fisher() -> None:
    """A case where a single provider's table varies gets Fisher's exact p of that table."""
    base, cand = _leaderboard(2)
    # Case c00: every provider passes everything in both arms except provider p00.
    for frame in (base, cand):
        frame.loc[frame["case_id"] == "c00", "passed"] = True
    mask = (cand["case_id"] == "c00") & (cand["provider"] == "p00")
    cand.loc[mask, "passed"] = False
    result = compare_tables(base, cand, options=CompareOptions(n_resamples=500, seed=0))
    assert result.case_screen is not None
    row = result.case_screen.set_index("case_id").loc["c00"]
    want = stats.fisher_exact([[0, TRIALS], [TRIALS, 0]]).pvalue
    assert row["method"] == "fisher"
    assert row["p_value"] == pytest.approx(want, rel=1e-12)
    assert _reference_p(base, cand).loc["c00", "p_value"] == pytest.approx(want, rel=1e-12)
