"""Confirming cases: Fisher power and trials against scipy and simulation; Holm verdicts.

References: ``scipy.stats.fisher_exact`` (each table's p-value), ``statsmodels``'
``multipletests(method="holm")`` and ``confint_proportions_2indep(method="newcomb")``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, fisher_exact
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep

from evalkit.stats import confirm_case_table, fisher_power, trials_to_confirm


def _brute_power(base: float, cand: float, n: int, alpha: float) -> float:
    """Power by enumerating every table with scipy's Fisher test (regression direction)."""
    total = 0.0
    for x in range(n + 1):
        for y in range(n + 1):
            if 0 < x + y < 2 * n and x < y:
                if fisher_exact([[x, n - x], [y, n - y]]).pvalue < alpha:
                    total += binom.pmf(x, n, cand) * binom.pmf(y, n, base)
    return float(total)


@pytest.mark.parametrize(
    ("base", "cand", "n", "alpha"),
    [(0.8, 0.3, 12, 0.05), (0.9, 0.5, 20, 0.025), (0.6, 0.55, 9, 0.05)],
)
def test_fisher_power_matches_an_enumeration_with_scipy(
    base: float, cand: float, n: int, alpha: float
) -> None:
    assert fisher_power(base, cand, n, alpha) == pytest.approx(
        _brute_power(base, cand, n, alpha), abs=1e-12
    )


def test_trials_to_confirm_is_the_fewest_that_reach_the_power() -> None:
    plan = trials_to_confirm(0.85, 0.45, alpha=0.025, power=0.8)
    assert not plan.capped and plan.power >= 0.8
    assert fisher_power(0.85, 0.45, plan.trials - 1, 0.025) < 0.8
    capped = trials_to_confirm(0.55, 0.5, alpha=0.05, max_trials=10)
    assert capped.capped and capped.trials == 10 and capped.power < 0.8


def test_the_planned_trials_deliver_the_power_by_simulation() -> None:
    """Draw confirmations at the planned trials: they reach the planned power."""
    base, cand, alpha = 0.9, 0.5, 0.025
    plan = trials_to_confirm(base, cand, alpha=alpha, power=0.8)
    rng = np.random.default_rng(7)
    draws = 2000
    x = rng.binomial(plan.trials, cand, draws)
    y = rng.binomial(plan.trials, base, draws)
    n = plan.trials
    hits = [x_ < y_ and fisher_exact([[x_, n - x_], [y_, n - y_]]).pvalue < alpha
            for x_, y_ in zip(x, y, strict=True)]  # fmt: skip
    se = np.sqrt(0.8 * 0.2 / draws)
    assert np.mean(hits) >= 0.8 - 3 * se
    assert np.mean(hits) == pytest.approx(plan.power, abs=4 * se)


def test_confirm_case_table_matches_scipy_and_statsmodels() -> None:
    counts = {"a": (18, 20, 6, 20), "b": (10, 15, 9, 15), "c": (3, 12, 11, 12)}
    rows = []
    for case, (pb, nb, pc, nc) in counts.items():
        rows += [(case, "base", i < pb) for i in range(nb)]
        rows += [(case, "cand", i < pc) for i in range(nc)]
    frame = pd.DataFrame(rows, columns=["case_id", "condition", "passed"])
    table = confirm_case_table(frame, baseline="base", candidate="cand").set_index("case_id")
    p = [fisher_exact([[pc, nc - pc], [pb, nb - pb]]).pvalue for pb, nb, pc, nc in counts.values()]
    np.testing.assert_allclose(table["p_value"], p, rtol=1e-10)
    np.testing.assert_allclose(
        table["p_adjusted"], multipletests(p, alpha=0.05, method="holm")[1], rtol=1e-10
    )
    for case, (pb, nb, pc, nc) in counts.items():
        low, high = confint_proportions_2indep(pc, nc, pb, nb, method="newcomb", compare="diff")
        assert table.loc[case, "ci_low"] == pytest.approx(min(low, (pc / nc) - (pb / nb)))
        assert table.loc[case, "ci_high"] == pytest.approx(max(high, (pc / nc) - (pb / nb)))
    assert table["verdict"].to_dict() == {"a": "regressed", "b": "inconclusive", "c": "improved"}


@pytest.mark.parametrize("n", [1, 2, 7, 30])
def test_the_fisher_table_is_scipys_p_value_of_every_table(n: int) -> None:
    from evalkit.stats._case_confirm import _fisher_matrix

    table = _fisher_matrix(n)
    for x in range(n + 1):
        for y in range(n + 1):
            expected = fisher_exact([[x, n - x], [y, n - y]]).pvalue
            assert table[x, y] == pytest.approx(expected, rel=1e-12, abs=1e-15), (x, y)


def test_the_p_values_of_a_200_trial_plan_match_scipys_fisher_test() -> None:
    """The naming plan walks up to 200 trials per side: its tables' p-values are scipy's."""
    from evalkit.stats._case_confirm import _fisher_matrix

    n = 200
    matrix = _fisher_matrix(n)
    rng = np.random.default_rng(5)
    tables = [(int(x), int(y)) for x, y in rng.integers(0, n + 1, size=(150, 2))]
    tables += [(0, 0), (n, n), (0, n), (100, 100), (100, 101), (3, 0)]
    for x, y in tables:
        expected = fisher_exact([[x, n - x], [y, n - y]]).pvalue
        assert matrix[x, y] == pytest.approx(expected, rel=1e-9, abs=1e-300), (x, y)
