"""Means, clustered standard errors and the cluster bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings, strategies as st
from scipy import stats

from evalkit.errors import InputError
from evalkit.stats import cluster_bootstrap, clustered_se, mean_ci
from evalkit.stats._bootstrap import expanded_levels


def test_mean_ci_matches_scipy_t_interval() -> None:
    values = [0.2, 0.4, 0.6, 0.8, 0.5]
    ci = mean_ci(values)
    # scipy: stats.ttest_1samp([0.2, 0.4, 0.6, 0.8, 0.5], 0).confidence_interval(0.95)
    np.testing.assert_allclose(
        [ci.ci_low, ci.ci_high], (0.22235548948022066, 0.7776445105197793), rtol=1e-12
    )
    assert ci.estimate == pytest.approx(0.5)
    assert ci.method == "t"
    ref = stats.ttest_1samp(values, 0).confidence_interval(0.9)
    ci90 = mean_ci(values, confidence=0.9)
    np.testing.assert_allclose([ci90.ci_low, ci90.ci_high], [ref.low, ref.high])


def test_mean_ci_small_samples() -> None:
    one = mean_ci([0.3])
    assert one.estimate == 0.3 and math.isnan(one.ci_low) and math.isnan(one.ci_high)
    none = mean_ci([])
    assert math.isnan(none.estimate)


@pytest.mark.parametrize("bad", [[1.0, float("nan")], [[1.0, 2.0]], ["a", "b"]])
def test_mean_ci_rejects_bad_values(bad: object) -> None:
    with pytest.raises(InputError):
        mean_ci(bad)  # type: ignore[arg-type]


def test_clustered_se_matches_statsmodels_cluster_robust_se() -> None:
    y = np.array([1, 1, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0], dtype=float)
    groups = np.repeat(np.arange(5), 3)
    # statsmodels: sm.OLS(y, ones).fit(cov_type="cluster", cov_kwds={"groups": groups}).bse[0]
    assert clustered_se(y, groups) == pytest.approx(0.1699673171197595, rel=1e-12)


def test_clustered_se_unbalanced_matches_statsmodels() -> None:
    y = np.array([1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0], dtype=float)
    groups = np.array([0, 0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 4])
    # statsmodels: sm.OLS(y, ones).fit(cov_type="cluster", cov_kwds={"groups": groups}).bse[0]
    assert clustered_se(y, groups) == pytest.approx(0.13333333333333336, rel=1e-12)
    fit = sm.OLS(y, np.ones(len(y))).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert clustered_se(y, [f"case-{g}" for g in groups]) == pytest.approx(fit.bse[0])


def test_clustered_se_singletons_reduce_to_clt_with_correction() -> None:
    x = np.array([0.1, 0.5, 0.9, 0.3])
    # one observation per cluster: sqrt(C/(C-1) * sum((x - mean)^2)) / n = sd(x, ddof=1)/sqrt(n)
    assert clustered_se(x, np.arange(4)) == pytest.approx(np.std(x, ddof=1) / 2)


def test_clustered_se_edge_cases() -> None:
    assert math.isnan(clustered_se([1.0, 0.0], ["a", "a"]))
    with pytest.raises(InputError, match="one label per value"):
        clustered_se([1.0, 0.0], ["a"])


def test_expanded_levels_follow_hesterberg() -> None:
    low, high = expanded_levels(30, 0.95)
    # z' = sqrt(30/29) * t_{0.975, 29}; low = 1 - Phi(z')
    z = math.sqrt(30 / 29) * stats.t.ppf(0.975, 29)
    assert low == pytest.approx(stats.norm.sf(z))
    assert high == pytest.approx(1 - low)
    assert low < 0.025


def _clustered_data(seed: int, cases: int = 200, trials: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, size=cases)
    values = (rng.random((cases, trials)) < p[:, None]).astype(float).ravel()
    labels = np.repeat(np.arange(cases), trials)
    return values, labels


def test_cluster_bootstrap_width_matches_clustered_se() -> None:
    values, labels = _clustered_data(1)
    ci = cluster_bootstrap(values, labels, n_resamples=20_000, seed=3)
    se = clustered_se(values, labels)
    # balanced data: mean of case means == grand mean; normal-theory half width ~ t * se
    half = stats.t.ppf(0.975, 199) * se
    assert ci.estimate == pytest.approx(values.mean())
    assert (ci.ci_high - ci.ci_low) / 2 == pytest.approx(half, rel=0.06)
    assert ci.method == "cluster-bootstrap"


def test_two_stage_bootstrap_is_wider() -> None:
    values, labels = _clustered_data(2)
    one = cluster_bootstrap(values, labels, n_resamples=5000, seed=1)
    two = cluster_bootstrap(values, labels, n_resamples=5000, seed=1, resample_trials=True)
    assert two.method == "two-stage-bootstrap"
    assert two.estimate == one.estimate
    # The second stage adds the within-case variance a second time (module docstring).
    assert two.ci_high - two.ci_low > 1.1 * (one.ci_high - one.ci_low)


def test_cluster_bootstrap_dataframe_and_arrays_agree() -> None:
    values, labels = _clustered_data(3, cases=40, trials=3)
    df = pd.DataFrame(
        {"case_id": [f"c{i:03d}" for i in labels], "condition": "x", "passed": values > 0.5}
    )
    from_frame = cluster_bootstrap(df, n_resamples=3000, seed=5)
    from_arrays = cluster_bootstrap(values, [f"c{i:03d}" for i in labels], n_resamples=3000, seed=5)
    assert from_frame == from_arrays


def test_cluster_bootstrap_is_seeded() -> None:
    rng = np.random.default_rng(4)
    values, labels = rng.random(90), np.repeat(np.arange(30), 3)
    a = cluster_bootstrap(values, labels, n_resamples=2000, seed=11)
    b = cluster_bootstrap(values, labels, n_resamples=2000, seed=11)
    c = cluster_bootstrap(values, labels, n_resamples=2000, seed=12)
    assert a == b
    assert a != c


def test_cluster_bootstrap_ragged_two_stage() -> None:
    values = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 0], dtype=float)
    labels = np.array(["a", "a", "a", "b", "c", "c", "d", "d", "d", "d", "e"])
    ci = cluster_bootstrap(values, labels, n_resamples=4000, seed=0, resample_trials=True)
    means = [2 / 3, 1.0, 0.5, 0.5, 0.0]
    assert ci.estimate == pytest.approx(np.mean(means))
    assert 0.0 <= ci.ci_low <= ci.estimate <= ci.ci_high <= 1.0


def test_cluster_bootstrap_median() -> None:
    values = np.array([0.1, 0.2, 0.9, 0.8, 0.4, 0.5, 0.3, 0.3])
    labels = np.repeat(np.arange(4), 2)
    ci = cluster_bootstrap(values, labels, statistic="median", n_resamples=2000)
    assert ci.estimate == pytest.approx(np.median([0.15, 0.85, 0.45, 0.3]))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"statistic": "mode"}, "`statistic` must be one of"),
        ({"n_resamples": 0}, "--resamples / n_resamples must be an integer >= 100"),
        ({"units": None}, "`units` must be an array"),
    ],
)
def test_cluster_bootstrap_rejects_bad_arguments(kwargs: dict[str, object], match: str) -> None:
    arguments: dict[str, object] = {"units": ["a", "b"]}
    arguments.update(kwargs)
    with pytest.raises(InputError, match=match):
        cluster_bootstrap([1.0, 0.0], **arguments)  # type: ignore[arg-type]


def test_cluster_bootstrap_single_case_has_no_interval() -> None:
    ci = cluster_bootstrap([1.0, 0.0, 1.0], ["a", "a", "a"], n_resamples=100)
    assert ci.estimate == pytest.approx(2 / 3)
    assert math.isnan(ci.ci_low) and math.isnan(ci.ci_high)


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.booleans(), min_size=2, max_size=40),
    n_cases=st.integers(min_value=2, max_value=10),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    two_stage=st.booleans(),
)
def test_cluster_bootstrap_properties(
    values: list[bool], n_cases: int, seed: int, two_stage: bool
) -> None:
    x = np.asarray(values, dtype=float)
    labels = np.arange(len(x)) % n_cases
    if len(np.unique(labels)) < 2:
        return
    ci = cluster_bootstrap(x, labels, n_resamples=300, seed=seed, resample_trials=two_stage)
    assert 0.0 <= ci.ci_low <= ci.estimate <= ci.ci_high <= 1.0
    again = cluster_bootstrap(x, labels, n_resamples=300, seed=seed, resample_trials=two_stage)
    assert again == ci
