"""Lift metrics against hand-computed values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.analysis import LIFT_METRICS, TRIGGER_METRICS, lift

# case: none, self-load, preloaded, stale (one trial each)
TABLE = {
    "c1": (0, 1, 1, 0),
    "c2": (0, 0, 1, 0),
    "c3": (1, 1, 1, 0),
    "c4": (1, 0, 1, 1),
    "c5": (0, 0, 0, 0),
}
CONDITIONS = ("none", "self-load", "preloaded", "stale")


def _frame(table: dict[str, tuple[int, ...]]) -> pd.DataFrame:
    rows = [
        {"case_id": case, "condition": cond, "trial": 0, "passed": bool(v)}
        for case, values in table.items()
        for cond, v in zip(CONDITIONS, values, strict=True)
    ]
    return pd.DataFrame(rows)


def test_five_case_table_hand_computed() -> None:
    result = lift(_frame(TABLE), n_resamples=2000)
    # success: A = 2/5, B = 2/5, C = 4/5, D = 1/5
    expected = {
        "realized_lift": 0.0,  # B - A
        "oracle_lift": 0.4,  # C - A
        "routing_gap": 0.4,  # C - B
        "stale_harm": -0.6,  # D - C
        "regression_rate": 0.5,  # A passes c3, c4; c4 fails under B -> 1/2
        "unlock_rate": 2 / 3,  # A fails c1, c2, c5; c1 (B), c2 (C) pass -> 2/3
        "routing_efficiency": 0.0,  # (B - A) / (C - A) = 0 / 0.4
    }
    for metric, value in expected.items():
        assert result.metric(metric) == pytest.approx(value), metric
    success = result.success.set_index("condition")["estimate"]
    assert success.to_dict() == pytest.approx(
        {"none": 0.4, "self-load": 0.4, "preloaded": 0.8, "stale": 0.2}
    )
    assert set(result.metrics["metric"]) == set(LIFT_METRICS)  # no trigger columns given
    assert (result.metrics["n_cases"].iloc[:4] == 5).all()


def test_intervals_contain_estimates_and_are_seeded() -> None:
    rng = np.random.default_rng(3)
    rows = [
        {"case_id": f"c{i}", "condition": cond, "trial": t, "passed": bool(rng.random() < p)}
        for i in range(40)
        for cond, p in zip(CONDITIONS, (0.4, 0.55, 0.7, 0.3), strict=True)
        for t in range(3)
    ]
    df = pd.DataFrame(rows)
    a, b = lift(df, seed=5, n_resamples=3000), lift(df, seed=5, n_resamples=3000)
    pd.testing.assert_frame_equal(a.metrics, b.metrics)
    finite = a.metrics.dropna(subset=["ci_low"])
    assert (finite["ci_low"] <= finite["estimate"] + 1e-12).all()
    assert (finite["estimate"] <= finite["ci_high"] + 1e-12).all()
    oracle = a.metrics.set_index("metric").loc["oracle_lift"]
    assert oracle["ci_low"] > 0  # +30 pp on 40 cases x 3 trials is detectable


def test_unequal_trials_average_within_case_first() -> None:
    # case x: 4 trials, all pass under none; case y: 1 trial, fails under none.
    rows = [{"case_id": "x", "condition": "none", "trial": t, "passed": True} for t in range(4)]
    rows += [{"case_id": "y", "condition": "none", "trial": 0, "passed": False}]
    rows += [{"case_id": c, "condition": "preloaded", "trial": 0, "passed": True} for c in "xy"]
    result = lift(pd.DataFrame(rows), n_resamples=500)
    none = result.success.set_index("condition").loc["none", "estimate"]
    assert none == pytest.approx(0.5)  # pooled items would say 4/5 = 0.8
    assert result.metric("oracle_lift") == pytest.approx(0.5)  # pooled: 1.0 - 0.8 = 0.2


def test_missing_conditions_are_reported_not_dropped() -> None:
    df = _frame(TABLE)
    df = df[~((df["case_id"] == "c5") & (df["condition"] == "stale"))]
    result = lift(df, n_resamples=500)
    assert result.missing.to_dict("records") == [
        {"provider": "unknown", "lane": "prompt", "case_id": "c5", "missing": "stale"}
    ]
    metrics = result.metrics.set_index("metric")
    assert metrics.loc["stale_harm", "n_cases"] == 4
    assert metrics.loc["oracle_lift", "n_cases"] == 5
    # D - C on c1..c4: (0-1) + (0-1) + (0-1) + (1-1) = -3 over 4 cases
    assert metrics.loc["stale_harm", "estimate"] == pytest.approx(-0.75)


def test_trigger_metrics_from_expected_and_inferred_skill() -> None:
    rows = []
    # self-load items: (expected, inferred)
    pairs = [
        ("s", "s"), ("s", "s"), ("s", "none"), ("s", "t"),  # tp, tp, fn(under), fn+fp (wrong)
        ("none", "none"), ("none", "s"), ("none", "none"), ("none", "none"),  # fp(over) once
    ]
    for i, (expected, inferred) in enumerate(pairs):
        rows.append({"case_id": f"c{i}", "condition": "self-load", "trial": 0, "passed": True,
                     "expected_skill": expected, "inferred_skill": inferred})
        rows.append({"case_id": f"c{i}", "condition": "none", "trial": 0, "passed": True,
                     "expected_skill": expected, "inferred_skill": "none"})
    result = lift(pd.DataFrame(rows), n_resamples=500)
    m = result.metrics.set_index("metric")["estimate"]
    assert set(TRIGGER_METRICS) <= set(m.index)
    assert m["trigger_precision"] == pytest.approx(2 / 4)  # tp 2; fp: wrong skill + over-trigger
    assert m["trigger_recall"] == pytest.approx(2 / 4)  # tp 2; fn: under + wrong skill
    assert m["trigger_f1"] == pytest.approx(0.5)
    assert m["over_trigger_rate"] == pytest.approx(1 / 4)
    assert m["under_trigger_rate"] == pytest.approx(1 / 4)


def test_groups_by_provider_and_lane() -> None:
    a = _frame(TABLE).assign(provider="p1", lane="prompt")
    b = _frame(TABLE).assign(provider="p2", lane="execution")
    result = lift(pd.concat([a, b]), n_resamples=200)
    groups = set(map(tuple, result.metrics[["provider", "lane"]].drop_duplicates().to_numpy()))
    assert groups == {("p1", "prompt"), ("p2", "execution")}
