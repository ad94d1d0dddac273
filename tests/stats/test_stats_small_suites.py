"""Small suites: the sign-flip test over cases and the A/A false-verdict rate at 2-8 cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalkit.stats import CompareOptions, paired_compare
from evalkit.stats._signflip import minimum_cases, sign_flip_test
from evalkit.stats._simulate import simulate_power


@pytest.mark.parametrize("plus", [6, 7, 9])
def test_sign_flip_on_equal_magnitudes_is_the_exact_sign_test(plus: int) -> None:
    # With differences of equal size the sign-flip test is the exact binomial sign test.
    diffs = np.array([0.2] * plus + [-0.2] * (12 - plus))
    expected = stats.binomtest(plus, 12, 0.5).pvalue  # scipy: binomtest(k, n, 0.5)
    assert sign_flip_test(diffs).pvalue == pytest.approx(expected, rel=1e-12)


def test_sign_flip_monte_carlo_agrees_with_the_t_test_on_many_cases() -> None:
    diffs = np.random.default_rng(5).normal(0.04, 0.3, 200)
    mc = sign_flip_test(diffs, n_resamples=20_000, seed=1)
    assert not mc.exact
    assert mc.pvalue == pytest.approx(stats.ttest_1samp(diffs, 0.0).pvalue, abs=0.01)


def test_minimum_cases_is_where_the_smallest_p_value_reaches_alpha() -> None:
    for alpha in (0.1, 0.05, 0.01):
        floor = minimum_cases(alpha)
        assert 2.0 / 2**floor <= alpha < 2.0 / 2 ** (floor - 1)


def test_tiny_suite_is_inconclusive_with_a_reason() -> None:
    import pandas as pd

    base = pd.DataFrame({"case_id": ["a", "b"], "condition": "x", "passed": [False, False]})
    cand = base.assign(passed=True)
    result = paired_compare(base, cand, options=CompareOptions(n_resamples=500))
    assert result.verdict == "inconclusive"
    assert "at least 6 cases" in result.verdict_note
    assert result.delta.ci_low <= result.delta.estimate <= result.delta.ci_high


@pytest.mark.timeout(60)
@pytest.mark.parametrize("n_cases", [2, 3, 4, 5, 8])
def test_aa_false_verdict_rate_stays_below_alpha(n_cases: int) -> None:
    # Miller's model: case pass rates from Beta(2, 2), both arms the same, 5 trials per arm.
    sim = simulate_power(n_cases, 5, 0.0, n_sims=2000, seed=11, n_resamples=500)
    assert sim.power <= 0.05
