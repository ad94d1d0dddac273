"""The trend plot's axis never repeats a label, and its legend says what changed."""

from __future__ import annotations

import pandas as pd

from evalkit.analysis import Trend
from evalkit.report._plots import _distinct_labels


def test_two_points_in_one_week_get_day_labels() -> None:
    ticks = [pd.Timestamp("2026-12-01"), pd.Timestamp("2026-12-03")]  # both 2026-W49
    assert _distinct_labels(ticks, "week") == ["2026-12-01", "2026-12-03"]
    weeks = [pd.Timestamp("2026-11-24"), pd.Timestamp("2026-12-01")]
    assert _distinct_labels(weeks, "week") == ["2026-W48", "2026-W49"]
    same_day = [pd.Timestamp("2026-12-01 09:00"), pd.Timestamp("2026-12-01 17:30")]
    assert _distinct_labels(same_day, "week") == ["12-01 09:00", "12-01 17:30"]


def _trend(changed: bool, skill_changed: bool) -> Trend:
    versions = pd.DataFrame({"suite": ["demo", "demo"], "period": pd.to_datetime(
        ["2026-11-24", "2026-12-01"]), "dataset_versions": ["a", "a"],
        "changed": [False, changed], "skill_texts": ["x", "y"],
        "skill_changed": [False, skill_changed]})
    empty = pd.DataFrame()
    return Trend("week", empty, empty, empty, empty, versions)


def test_the_legend_names_what_changed() -> None:
    assert _trend(False, True).change_label() == "skill text changed"
    assert _trend(True, False).change_label("demo") == "dataset version changed"
    assert _trend(True, True).change_label() == "dataset version and skill text changed"
    assert _trend(False, True).changes() == [pd.Timestamp("2026-12-01")]
