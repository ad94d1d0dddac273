"""The trajectory of a sequential comparison: its data, its figure and its table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib.artist import Artist
from matplotlib.figure import Figure

from evalkit.report import sequential_plot, sequential_trajectory
from evalkit.results import LookRecord, SequentialRecord
from evalkit.stats import CompareOptions, sequential_compare_tables as sequential_compare


def _look(round_: int, estimate: float, low: float, high: float, reason: str = "") -> LookRecord:
    verdict = {"improved": "improved", "regressed": "regressed"}.get(reason, "inconclusive")
    return LookRecord(
        round=round_,
        n_cases=4 * round_,
        items=24 * round_,  # 4 cases x 2 conditions x 3 trials per round
        cost_usd=0.48 * round_,  # $0.02 per item
        estimate=estimate,
        ci_low=low,
        ci_high=high,
        verdict=verdict,
        reason=reason,
    )


def _record(**changes: Any) -> SequentialRecord:
    record = SequentialRecord(
        baseline="none",
        candidate="preloaded",
        order=[f"case-{i:02d}" for i in range(20)],
        round_cases=4,
        threshold=0.1,
        confidence=0.95,
        method="betting-confidence-sequence",
        plan_cases=16,
        looks=[
            _look(1, 0.5, -0.6, 1.0),
            _look(2, 0.4, -0.1, 0.85),
            _look(3, 0.45, 0.05, 0.8, "improved"),
        ],
        stop_reason="improved",
    )
    return record.model_copy(update=changes)


def _artists(fig: Figure, gid: str) -> list[Any]:
    found: list[Any] = fig.findobj(
        lambda artist: isinstance(artist, Artist) and artist.get_gid() == gid
    )
    return found


def _one(fig: Figure, gid: str) -> Any:
    found = _artists(fig, gid)
    assert len(found) == 1, f"{gid}: {len(found)} artists"
    return found[0]


def test_a_record_gives_its_looks_and_the_fixed_design() -> None:
    trajectory = sequential_trajectory(_record())
    looks = trajectory.looks
    assert looks["n_cases"].tolist() == [4, 8, 12]
    assert looks["items"].tolist() == [24, 48, 72]
    assert looks["ci_low"].tolist() == [-0.6, -0.1, 0.05]
    assert trajectory.stop == 2 and trajectory.stop_reason == "improved"
    # 20 cases x (72 items / 12 cases drawn) at $0.02 per item; the plan: 16 cases
    assert trajectory.items_per_case == pytest.approx(6.0)
    assert trajectory.fixed_items == pytest.approx(120.0)
    assert trajectory.fixed_cost_usd == pytest.approx(2.40)
    assert trajectory.planned_items == pytest.approx(96.0)
    assert trajectory.planned_cost_usd == pytest.approx(1.92)
    facts = trajectory.facts()
    assert facts["sequential verdict"].startswith("improved at look 3 (12 cases)")
    assert facts["spent"] == "12 cases, 72 items, $1.4400 (60% of the fixed design)"
    assert facts["fixed design (every case once)"] == "20 cases, 120 items, $2.4000"
    assert facts["planned fixed design (--plan-cases)"] == "16 cases, 96 items, $1.9200"


def test_the_band_and_the_estimate_are_the_looks() -> None:
    trajectory = sequential_trajectory(_record())
    fig = sequential_plot(trajectory)
    looks = trajectory.looks
    estimate = _one(fig, "estimate")
    np.testing.assert_allclose(
        estimate.get_xydata(), looks[["n_cases", "estimate"]].to_numpy(dtype=float)
    )
    band = _one(fig, "sequence-band").get_paths()[0].vertices
    for n, low, high in looks[["n_cases", "ci_low", "ci_high"]].itertuples(index=False):
        at = band[np.isclose(band[:, 0], n)]
        assert at[:, 1].min() == pytest.approx(low) and at[:, 1].max() == pytest.approx(high)
    assert set(np.round(band[:, 0], 9)) == {4.0, 8.0, 12.0}


def test_the_boundaries_and_the_stopping_look_are_drawn() -> None:
    fig = sequential_plot(sequential_trajectory(_record()))
    assert list(_one(fig, "boundary-regressed").get_ydata()) == [0, 0]
    assert list(_one(fig, "boundary-improved").get_ydata()) == [0.1, 0.1]
    futility = _one(fig, "futility-band")
    assert futility.get_y() == pytest.approx(-0.1)
    assert futility.get_y() + futility.get_height() == pytest.approx(0.1)
    stop = _one(fig, "stop")
    assert list(stop.get_xydata()[0]) == [12.0, 0.45]
    assert stop.get_color() == "#2ca02c"  # the verdict's colour
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "improved at 12 cases" in texts


def test_the_spending_panel_shows_items_cost_and_the_fixed_designs() -> None:
    trajectory = sequential_trajectory(_record())
    fig = sequential_plot(trajectory)
    spent = _one(fig, "spent-items")
    np.testing.assert_allclose(spent.get_xydata(), [[4, 24], [8, 48], [12, 72]])
    cost = _one(fig, "spent-cost")
    np.testing.assert_allclose(cost.get_ydata(), [0.48, 0.96, 1.44])
    fixed = _one(fig, "fixed-design")
    planned = _one(fig, "planned-design")
    assert list(fixed.get_ydata()) == [120.0, 120.0]
    assert list(planned.get_ydata()) == [96.0, 96.0]
    assert "fixed design: 20 cases, 120 items, $2.40" in fixed.get_label()
    # The cost axis is scaled so the fixed line reads as the fixed design's cost on it too.
    items_axis, cost_axis = fixed.axes, cost.axes
    assert items_axis is not cost_axis
    at_items = items_axis.transData.transform((0, 120.0))[1]
    at_cost = cost_axis.transData.transform((0, 2.40))[1]
    assert at_items == pytest.approx(at_cost)


def test_an_unsettled_run_has_no_stop_mark_and_says_why() -> None:
    looks = [_look(1, 0.2, -0.7, 1.0), _look(2, 0.1, -0.5, 0.7)]
    record = _record(looks=looks, stop_reason="max-items", plan_cases=None)
    trajectory = sequential_trajectory(record)
    fig = sequential_plot(trajectory)
    assert trajectory.stop is None and _artists(fig, "stop") == []
    assert _artists(fig, "planned-design") == []
    assert "not settled (max-items)" in [t.get_text() for t in fig.axes[0].texts]
    assert trajectory.facts()["sequential verdict"] == (
        "not settled after 8 cases (max-items)"
    )


def test_no_look_yet_draws_a_message() -> None:
    trajectory = sequential_trajectory(_record(looks=[], stop_reason=None))
    fig = sequential_plot(trajectory)
    assert trajectory.fixed_items is None
    assert [t.get_text() for ax in fig.axes for t in ax.texts] == ["no look taken yet"]
    assert "No look taken yet." in trajectory.looks_table().html


def _paired_rows(n_cases: int = 12, trials: int = 3) -> pd.DataFrame:
    rows = []
    for case in range(n_cases):
        for condition in ("none", "preloaded"):
            for trial in range(trials):
                passed = condition == "preloaded" or (case + trial) % 3 == 0
                rows.append(
                    {
                        "case_id": f"case-{case:02d}",
                        "condition": condition,
                        "trial": trial,
                        "passed": passed,
                        "cost_usd": 0.01 * (1 + case),
                        "cache_hit": trial == 2,  # reused outcomes cost nothing again
                    }
                )
    return pd.DataFrame(rows)


def test_a_comparison_with_its_rows_counts_items_and_cost_per_look() -> None:
    rows = _paired_rows()
    result = sequential_compare(rows, conditions=("none", "preloaded"), round_cases=3,
        options=CompareOptions(seed=5))
    trajectory = sequential_trajectory(result, rows)
    looks = trajectory.looks
    assert looks["n_cases"].tolist() == [look.n_cases for look in result.looks]
    assert looks["ci_high"].tolist() == [look.ci_high for look in result.looks]
    for look in looks.itertuples():
        first = set(result.order[: look.n_cases])
        mine = rows[rows["case_id"].isin(first)]
        assert look.items == len(mine) == 6 * look.n_cases
        assert look.cost_usd == pytest.approx(mine.loc[~mine["cache_hit"], "cost_usd"].sum())
    assert trajectory.fixed_cases == 12 and trajectory.fixed_items == pytest.approx(72.0)


def test_a_comparison_without_rows_shows_cases_spent() -> None:
    rows = _paired_rows()
    result = sequential_compare(rows, conditions=("none", "preloaded"), round_cases=3,
        options=CompareOptions(seed=5))
    trajectory = sequential_trajectory(result)
    assert trajectory.looks["items"].isna().all() and trajectory.fixed_items is None
    fig = sequential_plot(trajectory)
    np.testing.assert_allclose(
        _one(fig, "spent-items").get_ydata(), [look.n_cases for look in result.looks]
    )
    assert list(_one(fig, "fixed-design").get_ydata()) == [12.0, 12.0]
    assert _artists(fig, "spent-cost") == []


def test_the_looks_table_lists_every_look() -> None:
    table = sequential_trajectory(_record()).looks_table().html
    assert table.count("<tr>") == 4  # header and three looks
    assert "+45.0 pp [+5.0, +80.0]" in table and "$1.4400" in table and "improved" in table

