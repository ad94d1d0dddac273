"""Flip rates between runs and within a run."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from statsmodels.stats.proportion import proportion_confint

from evalkit.errors import InputError
from evalkit.stats import flip_rate_between, flip_rate_within


def _single_trial_runs() -> tuple[pd.DataFrame, pd.DataFrame]:
    cases = [f"c{i}" for i in range(25)]
    a = pd.DataFrame({"case_id": cases, "condition": "none", "passed": [True] * 25})
    b = a.assign(passed=[False] * 4 + [True] * 21)
    return a, b


def test_flip_rate_between_single_trial_is_wilson() -> None:
    a, b = _single_trial_runs()
    flips = flip_rate_between(a, b)
    assert (flips.flip_rate, flips.n_pairs, flips.n_flips) == (4 / 25, 25, 4)
    assert flips.method == "wilson"
    # statsmodels: proportion_confint(4, 25, alpha=0.05, method="wilson")
    np.testing.assert_allclose(
        [flips.ci_low, flips.ci_high], proportion_confint(4, 25, method="wilson")
    )
    assert list(flips.by_case.columns) == [
        "case_id",
        "condition",
        "n",
        "flips",
        "estimate",
        "ci_low",
        "ci_high",
        "confidence",
        "method",
    ]
    first = flips.by_case.iloc[0]
    assert (first["n"], first["flips"], first["estimate"]) == (1, 1, 1.0)


def test_flip_rate_between_to_dict_shape() -> None:
    a, b = _single_trial_runs()
    out = flip_rate_between(a, b).to_dict()
    assert set(out) == {"flip_rate", "n_pairs", "by_case", "reused_items", "message", "by_provider",
                        "ci_low", "ci_high"}
    assert out["by_provider"] == [], "one provider: no per-provider table"
    assert out["flip_rate"] == pytest.approx(0.16)
    assert out["by_case"][0]["case_id"] == "c0"
    assert type(out["by_case"][0]["flips"]) is int
    json.dumps(out, allow_nan=False)


def test_flip_rate_between_several_trials_is_clustered() -> None:
    rng = np.random.default_rng(0)
    p = rng.beta(2, 2, 40)
    rows_a, rows_b = [], []
    for i, rate in enumerate(p):
        for t in range(5):
            rows_a.append((f"c{i}", "x", "sim", t, bool(rng.random() < rate)))
            rows_b.append((f"c{i}", "x", "sim", t, bool(rng.random() < rate)))
    columns = ["case_id", "condition", "provider", "trial", "passed"]
    a, b = pd.DataFrame(rows_a, columns=columns), pd.DataFrame(rows_b, columns=columns)
    flips = flip_rate_between(a, b)
    assert flips.n_pairs == 200 and flips.method == "cluster-wilson"
    assert flips.flip_rate == pytest.approx((a["passed"] != b["passed"]).mean())
    assert flips.ci_low <= flips.flip_rate <= flips.ci_high
    # reference: Wilson at the effective size from the cluster-robust ratio variance
    merged = a.assign(flip=a["passed"] != b["passed"])
    x = merged.groupby("case_id")["flip"].sum().to_numpy(dtype=float)
    m = merged.groupby("case_id")["flip"].size().to_numpy(dtype=float)
    r = x.sum() / m.sum()
    var = len(m) / (len(m) - 1) * np.sum((x - r * m) ** 2) / m.sum() ** 2
    n_eff = min(m.sum(), r * (1 - r) / var)
    expected = proportion_confint(r * n_eff, n_eff, method="wilson")
    np.testing.assert_allclose([flips.ci_low, flips.ci_high], expected, rtol=1e-10)


def test_flip_rate_between_counts_unmatched_and_drops_absent_keys() -> None:
    a, b = _single_trial_runs()
    b = b.iloc[:20]  # no provider/trial columns on either side: matched on case_id+condition
    flips = flip_rate_between(a, b)
    assert flips.n_pairs == 20 and flips.n_unmatched == 5
    with pytest.raises(InputError, match="share no work item"):
        flip_rate_between(a, b.assign(case_id=[f"z{i}" for i in range(20)]))


def test_flip_rate_within_matches_pair_formula() -> None:
    rows = []
    outcomes = {"a": [1, 1, 0, 0], "b": [1, 1, 1], "c": [0, 1], "d": [1]}
    for case, bits in outcomes.items():
        for t, bit in enumerate(bits):
            rows.append((case, "x", t, bool(bit)))
    df = pd.DataFrame(rows, columns=["case_id", "condition", "trial", "passed"])
    within = flip_rate_within(df)
    table = within.by_case.set_index("case_id")
    # s (k - s) / C(k, 2): a = 2*2/6, b = 0/3, c = 1*1/1, d has no pair
    assert table.loc["a", "estimate"] == pytest.approx(4 / 6)
    assert table.loc["b", "estimate"] == 0.0
    assert table.loc["c", "estimate"] == 1.0
    assert math.isnan(table.loc["d", "estimate"])
    assert within.n_pairs == 6 + 3 + 1 and within.n_flips == 4 + 0 + 1
    assert within.flip_rate == pytest.approx(5 / 10)
    assert 0 <= within.ci_low <= within.flip_rate <= within.ci_high <= 1
    assert within.to_dict()["by_case"][3]["estimate"] is None


def test_flip_rate_within_single_trial_run_has_no_pairs() -> None:
    df = pd.DataFrame({"case_id": ["a", "b"], "condition": "x", "passed": [True, False]})
    within = flip_rate_within(df)
    assert within.n_pairs == 0 and math.isnan(within.flip_rate)
    assert within.to_dict()["flip_rate"] is None


def test_flip_rate_within_requires_case_id() -> None:
    df = pd.DataFrame({"case_id": ["a"], "condition": "x", "passed": [True]})
    with pytest.raises(InputError, match="must include 'case_id'"):
        flip_rate_within(df, by=("condition",))


def test_flip_rate_within_recovers_two_p_one_minus_p() -> None:
    rng = np.random.default_rng(1)
    rows = []
    for i in range(2000):
        for t in range(4):
            rows.append((f"c{i}", "x", t, bool(rng.random() < 0.3)))
    df = pd.DataFrame(rows, columns=["case_id", "condition", "trial", "passed"])
    within = flip_rate_within(df)
    assert within.flip_rate == pytest.approx(2 * 0.3 * 0.7, abs=0.015)
    assert within.ci_low <= 0.42 <= within.ci_high


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.booleans(), min_size=1, max_size=5),
        min_size=1,
        max_size=12,
    )
)
def test_flip_rate_within_properties(cases: list[list[bool]]) -> None:
    rows = [(f"c{i}", "x", t, bit) for i, bits in enumerate(cases) for t, bit in enumerate(bits)]
    df = pd.DataFrame(rows, columns=["case_id", "condition", "trial", "passed"])
    within = flip_rate_within(df)
    if within.n_pairs:
        assert 0.0 <= within.ci_low <= within.flip_rate <= within.ci_high <= 1.0
    else:  # nothing measured: no interval at all, not a [0, 1] that reads like a result
        assert np.isnan(within.ci_low) and np.isnan(within.ci_high)


def test_flip_rate_between_matches_lanes() -> None:
    a, _ = _single_trial_runs()
    two_lanes = pd.concat([a.assign(lane="prompt"), a.assign(lane="execution")])
    flipped = two_lanes.assign(passed=[True] * 25 + [False] * 25)
    flips = flip_rate_between(two_lanes, flipped)
    assert (flips.n_pairs, flips.n_flips) == (50, 25)
    assert flips.method == "cluster-wilson"  # a case id contributes two pairs (two lanes)
    assert list(flips.by_case.columns[:3]) == ["lane", "case_id", "condition"]
    assert len(flips.by_case) == 50
