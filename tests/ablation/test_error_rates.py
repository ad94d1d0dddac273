"""Error rates of the ablation verdicts, by simulation, and the statistics against references.

A/A ablation studies: every component inert (each ablated copy passes with the full skill's
per-case probability), so any *necessary* or *harmful* verdict is a false one. The family-wise
error (share of studies with at least one false verdict) must be at most ``alpha``; each check
states its Monte Carlo standard error and allows 2.33 of them (a one-sided 1 % margin).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from evalkit.ablation import component_verdicts, simulate_allocation

ALPHA = 0.05


def _study(rng: np.random.Generator, effects: list[float], n: int, trials: int) -> pd.DataFrame:
    """Pass bits of the full skill and one ablated copy per effect (full - ablated)."""
    p_full = 1 / (1 + np.exp(-rng.normal(0.4, 1.5, n)))
    rows = []
    conditions = {"full": p_full} | {
        f"a{j}": np.clip(p_full - e, 0.01, 0.99) for j, e in enumerate(effects)
    }
    for condition, p in conditions.items():
        bits = rng.random((n, trials)) < p[:, None]
        for i, t in itertools.product(range(n), range(trials)):
            rows.append((f"c{i:02d}", condition, t, bool(bits[i, t])))
    return pd.DataFrame(rows, columns=["case_id", "condition", "trial", "passed"])


@pytest.mark.slow
def test_aa_fixed_design_family_wise_error_is_at_most_alpha() -> None:
    rng = np.random.default_rng(20261201)
    reps, m = 150, 4
    false = 0
    for rep in range(reps):
        frame = _study(rng, [0.0] * m, n=30, trials=2)
        table = component_verdicts(
            frame, "full", {f"a{j}": f"a{j}" for j in range(m)}, alpha=ALPHA,
            n_resamples=200, seed=rep, with_mde=False,
        )
        false += bool((table["verdict"] != "no detectable effect").any())
    rate, se = false / reps, math.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert rate <= ALPHA + 2.33 * se, f"family-wise error {rate:.3f} (MC se {se:.3f})"


@pytest.mark.slow
def test_aa_sequential_family_wise_error_under_continuous_looking() -> None:
    reps = 300
    false = 0
    for rep in range(reps):
        looks, _ = simulate_allocation(
            {f"a{j}": 0.0 for j in range(4)}, n_cases=80, trials=2, batch=4, alpha=ALPHA,
            threshold=0.05, seed=rep,
        )
        false += any(look.verdict in ("necessary", "harmful") for look in looks)
    rate, se = false / reps, math.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert rate <= ALPHA + 2.33 * se, f"family-wise error {rate:.3f} (MC se {se:.3f})"


def test_sequential_finds_real_effects_and_stops_them_early() -> None:
    effects = {"needed": 0.4, "hurts": -0.4, "inert": 0.0}
    found = 0
    for rep in range(20):
        looks, items = simulate_allocation(
            effects, n_cases=120, trials=3, batch=8, alpha=ALPHA, threshold=0.05, seed=rep
        )
        by = {look.component: look for look in looks}
        found += by["needed"].verdict == "necessary" and by["hurts"].verdict == "harmful"
        assert by["needed"].n_cases < 120  # it stopped at its own verdict
        assert items < 120 * 3 * 4
    assert found >= 18


def test_verdict_statistics_match_independent_computations() -> None:
    rng = np.random.default_rng(7)
    frame = _study(rng, [0.5, -0.4, 0.0], n=10, trials=3)
    table = component_verdicts(
        frame, "full", {"a0": "a0", "a1": "a1", "a2": "a2"}, alpha=ALPHA, n_resamples=500
    )
    rates = frame.groupby(["case_id", "condition"])["passed"].mean().unstack()
    for row in table.itertuples():
        d = (rates["full"] - rates[str(row.condition)]).to_numpy()
        assert row.estimate == pytest.approx(d.mean())
        # exact two-sided sign-flip test, enumerated here over all 2^10 sign patterns
        signs = np.array(list(itertools.product((-1, 1), repeat=len(d))))
        null = np.abs((signs * d).mean(axis=1))
        exact = float(np.mean(null >= abs(d.mean()) - 1e-12))
        assert row.p_value == pytest.approx(exact)
    _, holm, _, _ = multipletests(table["p_value"], alpha=ALPHA, method="holm")
    np.testing.assert_allclose(table["p_holm"], holm)
    assert table.set_index("component").loc["a0", "verdict"] == "necessary"
