"""The case screen by simulation: false discovery rate, power, equivalence, A/A.

The planted effect is concentrated, as a skill edit's usually is: 2 of 40 cases drop 40 pp
from 0.8, the other 38 do not move (their rates drawn once per draw in 0.6-0.95). Draws are
seeded and generated as one array per scenario; the screen is the one ``compare`` runs
(:func:`evalkit.stats._case_screen.case_screen`), the equivalence claim that of
``compare_tables`` end to end.

Measured (seeds as below; Monte-Carlo margins are 3 standard errors of the share):

- false discovery rate of named cases (BH at 5 %): 0.016 at 18 providers x 3 trials (200
  draws), 0.015 at one provider x 20 trials (100 draws);
- power to name one -40 pp case (100 draws, 2 planted cases each): one provider, 0.03 at 10
  trials a side and 0.21 at 20; 6 providers x 10 trials, 0.925;
- "no practical difference" claimed under the concentrated effect (18 x 3, 20 draws): 1 of
  20; the average's interval lay inside +-5 pp in 3 of them, so the case guard blocked 2 of
  3 (in the draw it let through, the -40 pp cases had BH-adjusted p 0.074 and 0.27);
- A/A, share of draws naming any case: 0.010 (18 x 3, 200 draws), 0.020 (1 x 20, 100).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalkit.stats._case_screen import case_screen
from evalkit.stats._options import CompareOptions

CASES = 40
PLANTED = (0, 1)  # the cases that drop
DROP = 0.40
ALPHA = 0.05
OPTIONS = CompareOptions(seed=0)


def _margin(level: float, draws: int) -> float:
    """Three Monte-Carlo standard errors of a share near ``level`` over ``draws``."""
    return 3 * math.sqrt(level * (1 - level) / draws)


def _draws(
    draws: int, providers: int, trials: int, drop: float, seed: int
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """``draws`` simulated comparisons: keys, and ``(draws, U, trials)`` pass bits a side."""
    rng = np.random.default_rng(seed)
    rates = rng.uniform(0.6, 0.95, (draws, CASES))
    rates[:, list(PLANTED)] = 0.8
    cand_rates = rates.copy()
    cand_rates[:, list(PLANTED)] -= drop
    # One unit per case x provider, cases outer (the keys' order).
    base_p = np.repeat(rates, providers, axis=1)[..., None]
    cand_p = np.repeat(cand_rates, providers, axis=1)[..., None]
    units = CASES * providers
    baseline = (rng.random((draws, units, trials)) < base_p).astype(float)
    candidate = (rng.random((draws, units, trials)) < cand_p).astype(float)
    keys = pd.DataFrame(
        {
            "case_id": np.repeat([f"c{i:02d}" for i in range(CASES)], providers),
            "condition": "none",
            "provider": np.tile([f"p{p:02d}" for p in range(providers)], CASES),
        }
    )
    return keys, baseline, candidate


def _named(keys: pd.DataFrame, baseline: np.ndarray, candidate: np.ndarray) -> list[set[str]]:
    """Per draw, the set of cases the screen names (regressed or improved)."""
    out = []
    for base, cand in zip(baseline, candidate, strict=True):
        screen = case_screen(keys, base, cand, OPTIONS)
        out.append(set(screen.loc[screen["verdict"] != "inconclusive", "case_id"]))
    return out


PLANTED_IDS = {f"c{i:02d}" for i in PLANTED}


def _fdr(named: list[set[str]]) -> float:
    return float(np.mean([len(n - PLANTED_IDS) / max(len(n), 1) for n in named]))


@pytest.mark.slow
@pytest.mark.parametrize(("providers", "trials", "draws"), [(18, 3, 200), (1, 20, 100)])
def test_false_discovery_rate_of_named_cases_is_at_most_alpha(
    providers: int, trials: int, draws: int
) -> None:
    named = _named(*_draws(draws, providers, trials, DROP, seed=providers * 100 + trials))
    fdr = _fdr(named)
    print(f"FDR {providers}x{trials}: {fdr:.3f}")
    assert fdr <= ALPHA + _margin(ALPHA, draws)


@pytest.mark.slow
def test_power_to_name_a_forty_point_drop() -> None:
    """Power to name one -40 pp case (of 40, BH at 5 %), measured floors asserted."""
    draws = 100
    power = {}
    for providers, trials in [(1, 10), (1, 20), (6, 10)]:
        named = _named(*_draws(draws, providers, trials, DROP, seed=7 + trials + providers))
        power[(providers, trials)] = float(
            np.mean([len(n & PLANTED_IDS) for n in named]) / len(PLANTED_IDS)
        )
    print("power", power)
    # More trials, more power; several providers pool their trials.
    assert power[(1, 10)] < power[(1, 20)] < power[(6, 10)]
    # Measured 0.03, 0.21, 0.925; the bounds sit about 3 Monte-Carlo errors away.
    assert power[(1, 10)] <= 0.15  # 10 trials on one provider cannot name it among 40
    assert power[(1, 20)] >= 0.10
    assert power[(6, 10)] >= 0.80


@pytest.mark.slow
@pytest.mark.parametrize(("providers", "trials", "draws"), [(18, 3, 200), (1, 20, 100)])
def test_aa_names_no_case_beyond_alpha(providers: int, trials: int, draws: int) -> None:
    named = _named(*_draws(draws, providers, trials, 0.0, seed=5 + providers + trials))
    share = float(np.mean([bool(n) for n in named]))
    print(f"A/A {providers}x{trials}: {share:.3f}")
    assert share <= ALPHA + _margin(ALPHA, draws)


def _tidy(keys: pd.DataFrame, values: np.ndarray) -> pd.DataFrame:
    units, trials = values.shape
    frame = keys.loc[np.repeat(np.arange(units), trials)].reset_index(drop=True)
    frame["trial"] = np.tile(np.arange(trials), units)
    frame["status"] = "ok"
    frame["passed"] = values.reshape(-1).astype(bool)
    return frame

