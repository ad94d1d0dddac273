"""Small read-only views for the report notebooks (tables and calls, no statistics).

The statistics come from :mod:`evalkit.stats` and :mod:`evalkit.analysis`; what is here shows
a run's key facts and a lift's metrics, or calls those libraries once per group (the flip
rates per scope) so that a notebook cell stays one line. A run's sections are the methods of
:class:`~evalkit.report.RunOverview`, a comparison's those of
:class:`~evalkit.report.ComparisonView`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from evalkit._settings import CONFIDENCE
from evalkit.analysis import LiftResult
from evalkit.report._tables import Fragment, html_table, interval, key_values, note
from evalkit.stats import FlipRate, flip_rate_between, flip_rate_within


def run_facts(rows: pd.DataFrame, manifest: Mapping[str, Any]) -> Fragment:
    """Key facts of a run: id, suite, dataset version, dates, matrix shape and outcomes.

    Args:
        rows: The run's result rows.
        manifest: The run's manifest (may be empty).

    Returns:
        A definition list.
    """
    status = rows["status"].value_counts() if "status" in rows else pd.Series(dtype=int)

    def unique(column: str) -> str | None:
        if column not in rows:
            return None
        values = sorted(rows[column].dropna().astype(str).unique())
        return ", ".join(values) if values else None

    cached = (rows["cache_hit"] == True) if "cache_hit" in rows else None  # noqa: E712
    here = rows[~cached] if cached is not None else rows
    # rows copied from the cache keep the times of the run that produced them
    started = here["started_at"].min() if "started_at" in here and len(here) else None
    finished = here["finished_at"].max() if "finished_at" in here and len(here) else None
    return key_values(
        {
            "run": manifest.get("run_id") or unique("run_id"),
            "suite": manifest.get("suite") or unique("suite"),
            "dataset version": unique("dataset_version"),
            "created": manifest.get("created_at"),
            "started / finished": (
                f"{_stamp(started)} / {_stamp(finished)}"
                + (" (the items run here)" if cached is not None and cached.any() else "")
                if started is not None and pd.notna(started)
                else (f"{manifest.get('started_at') or 'n/a'} / none run here: every item "
                      "came from the cache"
                      if cached is not None and len(rows) and cached.all() else None)
            ),
            "from the cache": _cache_line(rows, cached),
            "status": manifest.get("status"),
            "items": f"{len(rows):,}",
            "cases": f"{rows['case_id'].nunique():,}",
            "conditions": unique("condition"),
            "providers": unique("provider"),
            "models": unique("model"),
            "lanes": unique("lane"),
            "trials per cell": str(rows["trial"].nunique()) if "trial" in rows else None,
            "outcomes": ", ".join(f"{k} {v:,}" for k, v in status.items()),
            "evalkit": manifest.get("evalkit_version"),
        }
    )


def _cache_line(rows: pd.DataFrame, cached: pd.Series | None) -> str | None:
    """How many items were copied from the cache, and the runs that produced them."""
    if cached is None or not cached.any():
        return None
    origins = (rows.loc[cached, "origin_run_id"] if "origin_run_id" in rows
               else pd.Series([None] * int(cached.sum())))
    named = sorted({str(v) for v in origins.dropna()})
    unknown = int(origins.isna().sum())
    runs = ", ".join(named) + (f"{', ' if named else ''}{unknown} of unrecorded origin"
                               if unknown else "")
    word = "runs" if len(named) + bool(unknown) > 1 else "run"
    return f"{int(cached.sum()):,} of {len(rows):,} items, produced by {word} {runs}"


def _stamp(value: Any) -> str:
    if value is None or pd.isna(value):
        return "n/a"
    stamp = pd.Timestamp(value)
    return stamp.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if stamp.tzinfo is not None else "")


_KIND = {
    "realized_lift": "pp",
    "oracle_lift": "pp",
    "routing_gap": "pp",
    "stale_harm": "pp",
    "routing_efficiency": "num",
}


def metrics_table(
    metrics: pd.DataFrame,
    names: Sequence[str] | None = None,
    *,
    caption: str | None = None,
    table_id: str | None = None,
) -> Fragment:
    """Lift metrics as a table: differences in pp, rates in %, routing efficiency as a ratio.

    Args:
        metrics: :attr:`evalkit.analysis.LiftResult.metrics`.
        names: Metrics to show (default: all).
        caption: Caption.
        table_id: ``id`` of the table.

    Returns:
        The table (``provider, lane, metric, estimate [CI], n_cases``).
    """
    part = metrics if names is None else metrics[metrics["metric"].isin(list(names))]
    level = part["confidence"].iloc[0] if len(part) else CONFIDENCE.default
    shown = part.assign(
        value=[
            interval(e, lo, hi, _KIND.get(str(m), "pct"))
            for m, e, lo, hi in zip(
                part["metric"], part["estimate"], part["ci_low"], part["ci_high"], strict=True
            )
        ]
    )
    columns = {
        "provider": "provider",
        "lane": "lane",
        "metric": "metric",
        "value": f"estimate [{level:.0%} CI]",
        "n_cases": "cases",
    }
    if "note" in shown and shown["note"].fillna("").astype(bool).any():
        columns["note"] = "note"  # why a metric is n/a: a condition with only errors
    return html_table(
        shown,
        columns=columns,
        numeric=["value"],
        caption=caption,
        table_id=table_id,
        empty="no metric could be computed (the conditions it needs are missing)",
    )


def missing_cases(result: LiftResult) -> Fragment:
    """The cases that lack a condition (reported, never silently dropped), or a note.

    Conditions with only errors (:attr:`~evalkit.analysis.LiftResult.notes`) are named first.

    Args:
        result: A lift result.

    Returns:
        A note, and the table when some cases lack a condition.
    """
    errored = Fragment("")
    for _, row in result.notes.iterrows():
        errored += note(
            f"{row['provider']} / {row['lane']}: {row['note']}: it measured nothing, so the "
            "metrics that need it are n/a.",
            "warn",
        )
    if result.missing.empty:
        return errored + note("Every case has every condition of its group.", "ok")
    return errored + note(
        f"{len(result.missing)} case(s) lack a condition: each metric uses only the cases "
        "that have the conditions it needs.",
        "warn",
    ) + html_table(result.missing, table_id="missing-cases")


def case_keys(cases: pd.DataFrame) -> list[str]:
    """The columns that name one row of a comparison's per-case table, as they are there.

    With several providers a case has one row per provider, so ``provider`` is among them
    (a table without it would show one case twice with different numbers).

    Examples:
        >>> case_keys(pd.DataFrame(columns=["case_id", "condition", "provider", "estimate"]))
        ['case_id', 'condition', 'provider']
    """
    return [c for c in ("lane", "case_id", "condition", "provider") if c in cases.columns]


def flip_overview(
    rows: pd.DataFrame,
    baseline_rows: pd.DataFrame | None = None,
    *,
    run_label: str = "run",
    baseline_label: str = "baseline",
    confidence: float = CONFIDENCE.default,
) -> pd.DataFrame:
    """Flip rates within the run (and the baseline), and between them, overall and per condition.

    Each number is one call of :func:`evalkit.stats.flip_rate_within` (trial pairs of a case,
    condition and provider) or :func:`evalkit.stats.flip_rate_between` (matched items).

    Args:
        rows: The run's result rows.
        baseline_rows: A second run's rows, or None.
        run_label: Name of the run in the ``scope`` column.
        baseline_label: Name of the second run.
        confidence: Confidence level.

    Returns:
        ``scope, condition, flip_rate, ci_low, ci_high, n_pairs, n_flips, method,
        reused_items`` with ``condition = "all"`` for the pooled rows; between runs, pairs
        whose two sides are one sample are left out and counted in ``reused_items`` (the flip
        rate is NaN when every pair is one).
    """
    records: list[dict[str, Any]] = []

    def add(scope: str, condition: str, result: Any) -> None:
        records.append(
            {
                "scope": scope,
                "condition": condition,
                "flip_rate": result.flip_rate,
                "ci_low": result.ci_low,
                "ci_high": result.ci_high,
                "n_pairs": result.n_pairs,
                "n_flips": result.n_flips,
                "method": result.method,
                "reused_items": result.reused_items,
            }
        )

    arms = [(f"within {run_label}", rows)]
    if baseline_rows is not None:
        arms.append((f"within {baseline_label}", baseline_rows))
    for scope, frame in arms:
        by = (
            ["case_id", "condition", "provider"]
            if "provider" in frame
            else ["case_id", "condition"]
        )
        add(scope, "all", flip_rate_within(frame, by=by, confidence=confidence))
        for condition, part in frame.groupby("condition", sort=True):
            add(scope, str(condition), flip_rate_within(part, by=by, confidence=confidence))
    if baseline_rows is not None:
        scope = f"between {baseline_label} and {run_label}"
        add(scope, "all", flip_rate_between(baseline_rows, rows, confidence=confidence))
        shared = sorted(set(rows["condition"]) & set(baseline_rows["condition"]))
        for condition in shared:
            add(
                scope,
                str(condition),
                flip_rate_between(
                    baseline_rows[baseline_rows["condition"] == condition],
                    rows[rows["condition"] == condition],
                    confidence=confidence,
                ),
            )
    columns = ["scope", "condition", "flip_rate", "ci_low", "ci_high", "n_pairs", "n_flips"]
    return pd.DataFrame(records, columns=[*columns, "method", "reused_items"])


def within_flips(rows: pd.DataFrame, confidence: float = CONFIDENCE.default) -> FlipRate:
    """Flip rate between the trials of each case, condition (and provider) of one run.

    Args:
        rows: The run's result rows.
        confidence: Confidence level.

    Returns:
        :func:`evalkit.stats.flip_rate_within` grouped by case, condition and provider.
    """
    by = ["case_id", "condition", "provider"] if "provider" in rows else ["case_id", "condition"]
    return flip_rate_within(rows, by=by, confidence=confidence)
