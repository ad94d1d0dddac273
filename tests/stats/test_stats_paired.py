"""Paired comparisons: bootstrap deltas, McNemar, per-case exact tests, verdicts."""

from __future__ import annotations

import gc
from collections.abc import Callable
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep

from evalkit.errors import InputError
from evalkit.stats import CompareOptions, Interval, paired_bootstrap_delta, paired_compare, verdict
from evalkit.stats._verdicts import holm

FrameMaker = Callable[..., pd.DataFrame]


# --- verdict ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("estimate", "low", "high", "expected"),
    [
        (0.10, 0.02, 0.18, "improved"),
        (0.04, 0.01, 0.07, "inconclusive"),  # significant but below the 5 pp threshold
        (0.05, 0.001, 0.10, "improved"),  # exactly at the threshold
        (0.15 - 0.1, 0.001, 0.10, "improved"),  # 0.04999999999999999 in floats
        (0.02, -0.03, 0.07, "inconclusive"),
        (-0.02, -0.03, -0.001, "inconclusive"),  # significant but inside the threshold
        (-0.05, -0.09, -0.001, "regressed"),  # the threshold binds both directions alike
        (-0.10, -0.18, -0.02, "regressed"),
        (0.0, 0.0, 0.0, "inconclusive"),
        (float("nan"), float("nan"), float("nan"), "inconclusive"),
    ],
)
def test_verdict_rules(estimate: float, low: float, high: float, expected: str) -> None:
    assert verdict(Interval(estimate, low, high, 0.95, "x")) == expected


def test_verdict_threshold_argument() -> None:
    delta = Interval(0.03, 0.01, 0.05, 0.95, "x")
    assert verdict(delta, threshold=0.0) == "improved"
    assert verdict(delta, threshold=0.05) == "inconclusive"


# --- paired bootstrap -------------------------------------------------------------------------


def test_paired_bootstrap_delta_arrays_and_frames_agree(to_frame: FrameMaker) -> None:
    rng = np.random.default_rng(0)
    base = (rng.random((25, 3)) < 0.4).astype(float)
    cand = (rng.random((25, 3)) < 0.6).astype(float)
    from_arrays = paired_bootstrap_delta(base, cand, n_resamples=3000, seed=2)
    from_frames = paired_bootstrap_delta(to_frame(base), to_frame(cand), n_resamples=3000, seed=2)
    assert from_arrays == from_frames
    assert from_arrays.estimate == pytest.approx(cand.mean() - base.mean())


def test_paired_bootstrap_close_to_paired_t_interval() -> None:
    rng = np.random.default_rng(1)
    p = rng.beta(2, 2, 300)
    base = (rng.random((300, 3)) < p[:, None]).astype(float)
    cand = (rng.random((300, 3)) < np.minimum(p + 0.1, 1)[:, None]).astype(float)
    ci = paired_bootstrap_delta(base, cand, n_resamples=20_000, seed=0)
    diffs = cand.mean(1) - base.mean(1)
    # scipy: stats.ttest_1samp(diffs, 0).confidence_interval(0.95)
    ref = stats.ttest_1samp(diffs, 0).confidence_interval(0.95)
    assert ci.ci_low == pytest.approx(ref.low, abs=0.006)
    assert ci.ci_high == pytest.approx(ref.high, abs=0.006)


def test_two_stage_joint_resampling_of_lined_up_trials() -> None:
    rng = np.random.default_rng(2)
    base = (rng.random((20, 4)) < 0.5).astype(float)
    # Identical outcomes trial by trial (e.g. cache hits): joint resampling sees no noise, so
    # the bootstrap and the t interval are [0, 0] and the tied-pairs rule gives exactly the
    # Clopper-Pearson bound of 0 discordant pairs of 20 x 4 (statsmodels:
    # proportion_confint(0, 80, method="beta") = (0, 0.04506)); any resampling noise would
    # have made the bootstrap wider than zero and left the bound out.
    joint = paired_bootstrap_delta(base, base.copy(), n_resamples=2000, resample_trials=True)
    assert joint.method == "paired-two-stage-bootstrap"
    assert joint.estimate == 0.0
    assert joint.ci_low == pytest.approx(-0.045064, abs=1e-6)
    assert joint.ci_high == pytest.approx(0.045064, abs=1e-6)
    # The same data with trials that do not line up (labels differ) are resampled independently.
    shifted = np.full((20, 8), np.nan)
    shifted[:, 4:] = base
    padded = np.full((20, 8), np.nan)
    padded[:, :4] = base
    apart = paired_bootstrap_delta(padded, shifted, n_resamples=2000, resample_trials=True)
    assert apart.estimate == 0.0
    assert apart.ci_low < -0.02 and apart.ci_high > 0.02


def test_paired_bootstrap_delta_validates_shapes() -> None:
    with pytest.raises(InputError, match="row i of both"):
        paired_bootstrap_delta(np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(InputError, match="has no trial"):
        paired_bootstrap_delta([[1.0, np.nan], [np.nan, np.nan]], [[1.0, 0.0], [1.0, 1.0]])
    with pytest.raises(InputError, match="--resamples / n_resamples must be an integer >= 100"):
        paired_bootstrap_delta([1.0, 0.0], [1.0, 1.0], n_resamples=0)


# --- paired_compare --------------------------------------------------------------------------


def _pair(to_frame: FrameMaker, base: np.ndarray, cand: np.ndarray) -> tuple[pd.DataFrame, ...]:
    return to_frame(base), to_frame(cand)


def test_paired_compare_counts_and_table(to_frame: FrameMaker) -> None:
    base = np.array([[1, 1, 0], [0, 0, 0], [1, 1, 1], [0, 1, 0]], dtype=float)
    cand = np.array([[1, 1, 1], [0, 0, 0], [0, 0, 0], [1, 1, 0]], dtype=float)
    result = paired_compare(*_pair(to_frame, base, cand), options=CompareOptions(n_resamples=2000))
    assert (result.wins, result.losses, result.ties, result.n_cases) == (2, 1, 1, 4)
    assert result.delta.estimate == pytest.approx(np.mean(cand.mean(1) - base.mean(1)))
    assert result.se == pytest.approx(np.std(cand.mean(1) - base.mean(1), ddof=1) / 2)
    assert result.correlation == pytest.approx(np.corrcoef(base.mean(1), cand.mean(1))[0, 1])
    assert list(result.cases.columns) == [
        "case_id",
        "condition",
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
    ]
    row = result.cases.iloc[2]
    assert (row["n_baseline"], row["n_candidate"]) == (3, 3)
    assert row["estimate"] == -1.0
    # scipy: stats.fisher_exact([[0, 3], [3, 0]]).pvalue
    assert row["p_value"] == pytest.approx(stats.fisher_exact([[0, 3], [3, 0]]).pvalue)
    assert row["p_value"] == pytest.approx(0.1)
    # No case can be named with 3 trials per arm (smallest Fisher p is 0.1).
    assert set(result.cases["verdict"]) == {"inconclusive"}
    assert result.unmatched.empty


def test_paired_compare_per_case_references(to_frame: FrameMaker) -> None:
    base = np.array([[0] * 10, [1] * 10, [1, 1, 0, 0, 1, np.nan, np.nan, np.nan, np.nan, 1]])
    cand = np.array([[1] * 10, [0] * 10, [1, 1, 1, 1, 1] + [np.nan] * 5], dtype=float)
    result = paired_compare(*_pair(to_frame, base, cand), options=CompareOptions(n_resamples=1000))
    table = result.cases
    # scipy: stats.fisher_exact([[10, 0], [0, 10]]).pvalue -> 1.082508822446903e-05
    assert table.loc[0, "p_value"] == pytest.approx(1.082508822446903e-05)
    # statsmodels: confint_proportions_2indep(10, 10, 0, 10, method="newcomb")
    np.testing.assert_allclose(
        table.loc[0, ["ci_low", "ci_high"]].to_numpy(dtype=float),
        confint_proportions_2indep(10, 10, 0, 10, method="newcomb"),
    )
    # statsmodels: confint_proportions_2indep(0, 10, 10, 10, method="newcomb") -> (-1, -0.6075)
    assert table.loc[1, "ci_high"] == pytest.approx(-0.6075093504305241)
    # case 3: baseline 4/6, candidate 5/5
    assert (table.loc[2, "n_baseline"], table.loc[2, "n_candidate"]) == (6, 5)
    assert table.loc[2, "p_value"] == pytest.approx(stats.fisher_exact([[5, 0], [4, 2]]).pvalue)
    # Holm across the three cases, as statsmodels computes it
    expected = multipletests(table["p_value"], alpha=0.05, method="holm")[1]
    np.testing.assert_allclose(table["p_adjusted"], expected)
    assert list(table["verdict"]) == ["improved", "regressed", "inconclusive"]
    assert result.improved_cases == ["c000"]
    assert result.regressed_cases == ["c001"]


def test_paired_compare_fdr_correction(to_frame: FrameMaker) -> None:
    rng = np.random.default_rng(5)
    base = (rng.random((12, 8)) < 0.5).astype(float)
    cand = (rng.random((12, 8)) < 0.5).astype(float)
    result = paired_compare(*_pair(to_frame, base, cand),
                            options=CompareOptions(correction="fdr_bh", n_resamples=500))
    expected = multipletests(result.cases["p_value"], method="fdr_bh")[1]
    np.testing.assert_allclose(result.cases["p_adjusted"], expected)
    raw = paired_compare(*_pair(to_frame, base, cand),
                         options=CompareOptions(correction="none", n_resamples=500))
    np.testing.assert_allclose(raw.cases["p_adjusted"], raw.cases["p_value"])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=40))
def test_holm_matches_statsmodels(pvalues: list[float]) -> None:
    p = np.asarray(pvalues)
    # statsmodels: multipletests(p, method="holm")[1]. It ends with gc.collect(), which costs
    # half a second in a test process holding the whole suite's objects: 50 examples took 29 s.
    with mock.patch.object(gc, "collect", return_value=0):
        expected = multipletests(p, method="holm")[1]
    np.testing.assert_allclose(holm(p), expected, rtol=1e-12)


def test_paired_compare_mcnemar_matches_statsmodels(to_frame: FrameMaker) -> None:
    rng = np.random.default_rng(7)
    base = (rng.random((25, 1)) < 0.5).astype(float)
    cand = base.copy()
    cand[:6] = 1 - cand[:6]
    result = paired_compare(*_pair(to_frame, base, cand), options=CompareOptions(n_resamples=500))
    b = int(((base == 1) & (cand == 0)).sum())
    c = int(((base == 0) & (cand == 1)).sum())
    table = [
        [int(((base == 1) & (cand == 1)).sum()), b],
        [c, int(((base == 0) & (cand == 0)).sum())],
    ]
    assert result.mcnemar is not None
    assert result.mcnemar.exact
    assert (result.mcnemar.baseline_only, result.mcnemar.candidate_only) == (b, c)
    # statsmodels: mcnemar(table, exact=True).pvalue
    assert result.mcnemar.pvalue == pytest.approx(mcnemar(table, exact=True).pvalue)
    assert result.mcnemar.n_pairs == 25


def test_mcnemar_large_discordant_counts_use_chi_square(to_frame: FrameMaker) -> None:
    base = np.array([1] * 20 + [0] * 8 + [1] * 10 + [0] * 5, dtype=float)
    cand = np.array([0] * 20 + [1] * 8 + [1] * 10 + [0] * 5, dtype=float)
    result = paired_compare(*_pair(to_frame, base, cand), options=CompareOptions(n_resamples=500))
    assert result.mcnemar is not None and not result.mcnemar.exact
    # statsmodels: mcnemar([[10, 20], [8, 5]], exact=False, correction=True)
    #   -> statistic 4.321428571428571, pvalue 0.03763531378731436
    assert result.mcnemar.statistic == pytest.approx(4.321428571428571)
    assert result.mcnemar.pvalue == pytest.approx(0.03763531378731436)


def test_paired_compare_reports_unmatched_cases(to_frame: FrameMaker) -> None:
    base = to_frame(np.ones((4, 2)))
    cand = to_frame(np.zeros((5, 2)))
    base = base[base["case_id"] != "c001"]
    result = paired_compare(base, cand, options=CompareOptions(n_resamples=500))
    assert result.n_cases == 3
    assert result.unmatched.to_dict("records") == [
        {"case_id": "c001", "condition": "x", "side": "candidate", "n": 2},
        {"case_id": "c004", "condition": "x", "side": "candidate", "n": 2},
    ]


def test_paired_compare_scores(to_frame: FrameMaker) -> None:
    base = np.array([[0.2, 0.4, 0.1], [0.5, 0.5, 0.6], [0.9, 0.7, 0.8]])
    cand = np.array([[0.9, 0.8, 0.95], [0.5, 0.6, 0.6], [0.8, 0.7, 0.7]])
    b = to_frame(base, value="score")
    c = to_frame(cand, value="score")
    result = paired_compare(b, c, options=CompareOptions(metric="score", n_resamples=1000))
    assert result.metric == "score"
    assert result.mcnemar is None
    row = result.cases.iloc[0]
    # scipy: stats.ttest_ind([.9, .8, .95], [.2, .4, .1], equal_var=False).confidence_interval()
    np.testing.assert_allclose(
        [row["ci_low"], row["ci_high"]], (0.33262612056473795, 0.9673738794352621)
    )
    # scipy: permutation_test((cand, base), mean difference, "independent", exact) -> 0.1
    assert row["p_value"] == pytest.approx(0.1)


def test_paired_compare_rejects_bad_input(to_frame: FrameMaker) -> None:
    base = to_frame(np.ones((3, 2)))
    with pytest.raises(InputError, match="share no unit"):
        paired_compare(base, to_frame(np.ones((3, 2)), prefix="z"))
    with pytest.raises(InputError, match="--correction / correction must be one of holm, "):
        paired_compare(base, base, options=CompareOptions(correction="sidak"))
    with pytest.raises(InputError, match="--threshold / threshold must be"):
        paired_compare(base, base, options=CompareOptions(threshold=-0.1))
    doubled = pd.concat([base, base.assign(provider="other")], ignore_index=True)
    doubled["provider"] = doubled["provider"].fillna("main")
    with pytest.raises(InputError, match="add the distinguishing column"):
        paired_compare(doubled, doubled)
    dup = pd.concat([base, base], ignore_index=True)
    with pytest.raises(InputError, match="same work item more than once"):
        paired_compare(dup, base)


def test_missing_trial_column_numbers_rows_in_order() -> None:
    base = pd.DataFrame({"case_id": ["a", "a", "b", "b"], "condition": "x", "passed": [1, 0, 1, 1]})
    cand = base.assign(passed=[1, 1, 1, 1])
    result = paired_compare(base, cand, options=CompareOptions(n_resamples=500))
    assert list(result.cases["n_baseline"]) == [2, 2]
    assert result.mcnemar is not None and result.mcnemar.n_pairs == 4


def _random_pair(data: list[tuple[int, int]], trials: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows_b, rows_c = [], []
    for case, (bits_b, bits_c) in enumerate(data):
        for t in range(trials):
            rows_b.append((f"c{case}", "x", t, bool(bits_b >> t & 1)))
            rows_c.append((f"c{case}", "x", t, bool(bits_c >> t & 1)))
    columns = ["case_id", "condition", "trial", "passed"]
    return pd.DataFrame(rows_b, columns=columns), pd.DataFrame(rows_c, columns=columns)


pairs_strategy = st.lists(
    st.tuples(st.integers(min_value=0, max_value=7), st.integers(min_value=0, max_value=7)),
    min_size=2,
    max_size=15,
)


@settings(max_examples=50, deadline=None)
@given(data=pairs_strategy, trials=st.integers(min_value=1, max_value=3), seed=st.integers(0, 99))
def test_swapping_arms_negates_delta(data: list[tuple[int, int]], trials: int, seed: int) -> None:
    base, cand = _random_pair(data, trials)
    forward = paired_compare(base, cand, options=CompareOptions(n_resamples=400, seed=seed))
    backward = paired_compare(cand, base, options=CompareOptions(n_resamples=400, seed=seed))
    assert backward.delta.estimate == pytest.approx(-forward.delta.estimate, abs=1e-12)
    assert backward.delta.ci_low == pytest.approx(-forward.delta.ci_high, abs=1e-12)
    assert backward.delta.ci_high == pytest.approx(-forward.delta.ci_low, abs=1e-12)
    assert (backward.wins, backward.losses, backward.ties) == (
        forward.losses,
        forward.wins,
        forward.ties,
    )
    np.testing.assert_allclose(backward.cases["p_value"], forward.cases["p_value"])
    np.testing.assert_allclose(backward.cases["estimate"], -forward.cases["estimate"], atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(data=pairs_strategy, trials=st.integers(min_value=1, max_value=3), seed=st.integers(0, 99))
def test_paired_compare_properties(data: list[tuple[int, int]], trials: int, seed: int) -> None:
    base, cand = _random_pair(data, trials)
    result = paired_compare(base, cand, options=CompareOptions(n_resamples=400, seed=seed))
    delta = result.delta
    assert delta.ci_low <= delta.estimate <= delta.ci_high
    assert -1.0 <= delta.ci_low and delta.ci_high <= 1.0
    cases = result.cases
    assert (cases["ci_low"] <= cases["estimate"]).all()
    assert (cases["estimate"] <= cases["ci_high"]).all()
    assert cases["ci_low"].between(-1, 1).all() and cases["ci_high"].between(-1, 1).all()
    assert (cases["p_adjusted"] >= cases["p_value"] - 1e-12).all()
    assert result.wins + result.losses + result.ties == result.n_cases
    again = paired_compare(base, cand, options=CompareOptions(n_resamples=400, seed=seed))
    assert again.to_dict() == result.to_dict()
    assert again.delta == result.delta
