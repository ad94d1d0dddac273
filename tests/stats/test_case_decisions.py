"""A per-case row says which rule decided it, so its interval and its verdict never clash."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats

from evalkit.stats import CompareOptions, paired_compare


def _rows(passes: dict[str, int], trials: int = 3) -> pd.DataFrame:
    return pd.DataFrame([
        {"case_id": case, "condition": "c", "trial": t, "passed": t < k}
        for case, k in passes.items() for t in range(trials)
    ])


def test_a_row_whose_interval_excludes_zero_says_why_it_is_inconclusive() -> None:
    cases = [f"c{i:02d}" for i in range(30)]
    base = _rows(dict.fromkeys(cases, 1) | {"c00": 0})
    cand = _rows(dict.fromkeys(cases, 1) | {"c00": 3})
    result = paired_compare(base, cand, options=CompareOptions(n_resamples=500))
    data = result.to_dict()
    row = next(r for r in data["cases"] if r["case_id"] == "c00")
    assert row["ci_low"] > 0 and row["verdict"] == "inconclusive"
    fisher = stats.fisher_exact([[3, 0], [0, 3]]).pvalue
    assert row["p_value"] == pytest.approx(fisher)
    assert row["p_adjusted"] == pytest.approx(min(1.0, fisher * 30))  # Holm's first step
    assert row["decided_by"].startswith(f"holm across 30 case rows: p {fisher:.3g} -> 1")
    assert "its own 95 % interval excludes 0, but the verdict needs the corrected p" in (
        row["decided_by"])
    tied = next(r for r in data["cases"] if r["case_id"] == "c01")
    assert "excludes 0" not in tied["decided_by"]
