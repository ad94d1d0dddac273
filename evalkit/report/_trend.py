"""The trend report's presentation helpers (the trend itself is :func:`evalkit.analysis.trend`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from evalkit.analysis import TREND_LIFT_METRICS, Trend


def lift_trend(table: pd.DataFrame, metrics: tuple[str, ...] = TREND_LIFT_METRICS) -> pd.DataFrame:
    """The rows of :attr:`Trend.lift` for some metrics, labelled ``provider · metric``.

    Args:
        table: :attr:`Trend.lift`.
        metrics: Metrics kept.

    Returns:
        The rows with a ``series`` column.
    """
    part = table[table["metric"].isin(metrics)]
    return part.assign(series=part["metric"].astype(str))


def describe_trend(trend_result: Trend) -> dict[str, Any]:
    """Counts for the report header: runs, suites, providers, periods, first and last run.

    Args:
        trend_result: A :class:`Trend`.

    Returns:
        ``{label: value}``.
    """
    runs = trend_result.runs
    return {
        "runs": len(runs),
        "suites": ", ".join(sorted(runs["suite"].astype(str).unique())),
        "providers": ", ".join(
            sorted({p for value in runs["providers"] for p in str(value).split(", ") if p})
        ),
        "period": trend_result.period,
        "periods": runs["period"].nunique(),
        "first run": str(runs["run_start"].min()),
        "last run": str(runs["run_start"].max()),
        "dataset versions": trend_result.versions["dataset_versions"].nunique(),
        "partial runs (included as far as they got)": ", ".join(trend_result.partial) or None,
        "skill text changes": ", ".join(
            runs.loc[runs["skill_changed"], "run_dir"].astype(str)
        ) or None,
        "periods split at a skill text change": ", ".join(
            str(p) for p in trend_result.split
        ) or None,
    }
