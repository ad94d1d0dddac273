"""The evidence lane's metrics: levels and lifts against pandas, and interval coverage by
simulation (seeded; the Monte Carlo error is stated)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.analysis._evidence import evidence_metrics
from evalkit.analysis._lift import DEFAULT_ROLES


def frame(rng: np.random.Generator, n_cases: int, trials: int, lift: float) -> pd.DataFrame:
    base = rng.beta(2, 3, size=n_cases)
    rows = []
    for condition, shift in (("none", 0.0), ("preloaded", lift)):
        for case in range(n_cases):
            for trial in range(trials):
                value = np.clip(base[case] + shift + rng.normal(0, 0.15), 0, 1)
                rows.append({"case_id": f"c{case}", "condition": condition, "trial": trial,
                             "provider": "sim", "lane": "evidence",
                             "evidence_completeness": value})
    return pd.DataFrame(rows)


def test_levels_and_lifts_match_pandas() -> None:
    data = frame(np.random.default_rng(1), 12, 3, 0.2)
    # one case has no preloaded items: the lift uses the cases that have both
    data = data[~((data["case_id"] == "c0") & (data["condition"] == "preloaded"))]
    table = evidence_metrics(data, DEFAULT_ROLES, n_resamples=2000)
    per_case = data.groupby(["condition", "case_id"])["evidence_completeness"].mean()
    levels = table[table["contrast"] == "level"].set_index("condition")
    assert levels.loc["none", "estimate"] == pytest.approx(per_case["none"].mean())
    assert levels.loc["preloaded", "n_cases"] == 11
    wide = per_case.unstack(0).dropna()
    oracle = table[table["contrast"] == "oracle_lift"].iloc[0]
    assert oracle["estimate"] == pytest.approx((wide["preloaded"] - wide["none"]).mean())
    assert oracle["n_cases"] == 11
    assert set(table["contrast"]) == {"level", "oracle_lift"}  # no self-load/stale arms


@pytest.mark.slow
def test_oracle_lift_interval_covers() -> None:
    # 300 simulated runs of 30 cases x 2 trials with a true per-case lift of +0.10 (before
    # clipping): coverage of the 95 % interval for the mean paired difference. The truth is
    # the population mean of the clipped difference, estimated once from a very large draw.
    rng = np.random.default_rng(2026)
    big = frame(np.random.default_rng(7), 20_000, 1, 0.10)
    truth = (big[big["condition"] == "preloaded"]["evidence_completeness"].to_numpy()
             - big[big["condition"] == "none"]["evidence_completeness"].to_numpy()).mean()
    reps, hits = 300, 0
    for rep in range(reps):
        data = frame(rng, 30, 2, 0.10)
        row = evidence_metrics(data, DEFAULT_ROLES, n_resamples=1000, seed=rep)
        oracle = row[row["contrast"] == "oracle_lift"].iloc[0]
        hits += oracle["ci_low"] <= truth <= oracle["ci_high"]
    coverage = hits / reps
    mc_error = np.sqrt(0.95 * 0.05 / reps)  # 0.0126
    assert abs(coverage - 0.95) < 3.5 * mc_error, coverage
