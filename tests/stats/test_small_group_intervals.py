"""Intervals of rates and shares at 2-10 cases: they cover, and none is zero-width.

Simulations are seeded. With ``N`` draws the Monte Carlo standard error of a coverage near
95 % is ``sqrt(0.95 * 0.05 / N)``: 1.1 pp at N = 400, so the floor of 92 % sits about three
standard errors under nominal; a method that collapses (a percentile bootstrap of 4 of 4 is
[1, 1]) covers far less and fails.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.analysis._resample import CaseResampler
from evalkit.stats import proportion_ci, ratio_wilson

N_DRAWS = 400
FLOOR = 0.92


def test_four_of_four_is_wilson_not_a_point() -> None:
    # statsmodels: proportion_confint(4, 4, method="wilson") -> (0.5101, 1.0)
    ci = ratio_wilson(np.ones(4), np.ones(4), 0.95)
    assert ci.ci_low == pytest.approx(proportion_ci(4, 4).ci_low)
    assert ci.ci_low == pytest.approx(0.5101, abs=1e-4) and ci.ci_high == 1.0
    none = ratio_wilson(np.zeros(2), np.ones(2), 0.95)
    assert none.ci_low == 0.0 and none.ci_high > 0.5  # 0 of 2 is far from certain


@pytest.mark.parametrize("n_cases", [2, 3, 5, 10])
@pytest.mark.parametrize(("share", "trials"), [(0.5, 1), (0.8, 3), (0.95, 1), (0.95, 3)])
def test_ratio_wilson_covers_at_small_n(n_cases: int, share: float, trials: int) -> None:
    rng = np.random.default_rng(1000 * n_cases + int(100 * share) + trials)
    covered = 0
    for _ in range(N_DRAWS):
        # clustered cases: each case has its own rate around the share
        rates = rng.beta(share * 4, (1 - share) * 4, size=n_cases) if trials > 1 else (
            np.full(n_cases, share)
        )
        events = rng.binomial(trials, rates).astype(float)
        ci = ratio_wilson(events, np.full(n_cases, float(trials)), 0.95)
        assert ci.ci_high - ci.ci_low > 0.0
        covered += ci.ci_low <= share <= ci.ci_high
    assert covered / N_DRAWS >= FLOOR


@pytest.mark.parametrize("n_cases", [2, 3, 5, 10])
@pytest.mark.parametrize(("base", "effect"), [(0.5, 0.0), (0.2, 0.3), (0.05, 0.0)])
def test_lift_differences_cover_at_small_n(n_cases: int, base: float, effect: float) -> None:
    rng = np.random.default_rng(7 * n_cases + int(100 * base))
    population = rng.beta(base * 4, (1 - base) * 4, size=1_000_000)
    truth = float(np.mean(np.clip(population + effect, 0, 1) - population))
    covered = 0
    for draw in range(N_DRAWS):
        a_rate = rng.beta(base * 4, (1 - base) * 4, size=n_cases)
        b_rate = np.clip(a_rate + effect, 0, 1)
        a = rng.binomial(3, a_rate) / 3
        b = rng.binomial(3, b_rate) / 3
        ci = CaseResampler(n_cases, 400, draw).delta(b - a, np.ones(n_cases, bool), 0.95, "x")
        assert ci.ci_high - ci.ci_low > 0.0
        covered += ci.ci_low <= truth <= ci.ci_high
    assert covered / N_DRAWS >= FLOOR


def _tiny_run(n_cases: int) -> pd.DataFrame:
    """Every case fails without the skill and passes with it; the skill is always triggered."""
    rows = []
    for case in range(n_cases):
        for condition, passed in (("none", False), ("self-load", True), ("preloaded", True),
                                  ("stale", False)):
            rows.append({
                "case_id": f"c{case}", "condition": condition, "trial": 0, "passed": passed,
                "provider": "p", "lane": "prompt", "status": "ok", "expected_skill": "waiting",
                "inferred_skill": "waiting" if condition == "self-load" else "none",
            })
    return pd.DataFrame(rows)


@pytest.mark.parametrize("n_cases", [2, 3, 4, 7])
def test_lift_never_reports_a_zero_width_interval(n_cases: int) -> None:
    metrics = evalkit.lift(_tiny_run(n_cases), n_resamples=300).metrics
    shown = metrics[metrics["estimate"].notna() & metrics["ci_low"].notna()]
    assert set(shown["metric"]) >= {"unlock_rate", "trigger_precision", "realized_lift"}
    widths = (shown["ci_high"] - shown["ci_low"]).to_numpy()
    assert (widths > 0).all(), shown[widths <= 0][["metric", "estimate", "ci_low", "ci_high"]]
    unlock = shown[shown["metric"] == "unlock_rate"].iloc[0]
    assert unlock["method"] == "cluster-wilson"
    assert unlock["ci_low"] == pytest.approx(proportion_ci(n_cases, n_cases).ci_low)
