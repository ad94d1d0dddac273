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


def trend_runs_table(trend_result: Trend) -> pd.DataFrame:
    """The runs of a trend as the report's table shows them: one short line of facts per run.

    Columns that say the same in every row (one suite, one dataset version, the same providers
    or conditions, the run id equal to its directory) are left out (the header and the
    versions table say them once); times are minutes in UTC;
    the skill texts are listed one condition after another, so a cell wraps between them and
    the table fits the page at a year of weekly runs.

    Args:
        trend_result: A :class:`Trend`.

    Returns:
        ``run, started, point, items, status, skill text, [run id], [suite],
        [dataset version], [providers], [conditions], skill texts`` (bracketed: only when
        they differ between runs; the six first are short and never wrap).
    """
    runs = trend_result.runs
    table = pd.DataFrame({"run": runs["run_dir"].astype(str)})
    table["started"] = [_minute(v) for v in runs["run_start"]]
    table["point"] = [_minute(v, date_only=True) for v in runs["period"]]
    table["items"] = runs["items"].astype(int)
    table["status"] = runs["status"].astype(str)
    table["skill text"] = ["changed" if flag else "same" for flag in runs["skill_changed"]]
    if (runs["run_id"].astype(str) != runs["run_dir"].astype(str)).any():
        table["run id"] = runs["run_id"].astype(str)
    for column, header in (("suite", "suite"), ("dataset_version", "dataset version"),
                           ("providers", "providers"), ("conditions", "conditions")):
        if runs[column].nunique() > 1:
            table[header] = runs[column].astype(str)
    # several skills of one condition are joined with "+": spaced, so the cell can wrap there
    table["skill texts"] = runs["skill_texts"].astype(str).str.replace("+", " + ", regex=False)
    return table


def _minute(value: Any, *, date_only: bool = False) -> str:
    """A time as ``YYYY-MM-DD HH:MM`` (UTC); a point at midnight as its date alone."""
    if value is None or pd.isna(value):
        return ""
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_convert("UTC") if stamp.tzinfo is not None else stamp
    if date_only and stamp == stamp.normalize():
        return stamp.strftime("%Y-%m-%d")
    return stamp.strftime("%Y-%m-%d %H:%M")
