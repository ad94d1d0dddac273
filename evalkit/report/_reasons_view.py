"""Reasons on report pages: each shown item's reason line, and what the failures are made of.

The reasons themselves come from :mod:`evalkit.results` (:func:`~evalkit.results.item_reasons`,
:func:`~evalkit.results.failure_causes`); this module reads a run's scores once per page and
turns the reasons into escaped markup.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from evalkit._settings import RUNS_DIR
from evalkit.report._plots import (
    SERIES_COLORS,
    _message_figure,
    _new_figure,
    _style,
    figure_html,
    order_conditions,
    shorten,
)
from evalkit.report._tables import Fragment, esc, html_table, pct
from evalkit.results import (
    DID_NOT_FINISH,
    SCORES_FILE,
    cause_changes as results_cause_changes,
    describe_causes,
    failure_causes,
    item_reasons,
    read_scores,
    resolve_run_dir,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Colours of the primary causes: blues for routing (whether the skill was loaded), warm
#: colours for execution (what the answer or the work got wrong), greys for errors.
CAUSE_COLORS: Mapping[str, str] = MappingProxyType({
    "skill not loaded": "#1f77b4",
    "skill loaded when none expected": "#6baed6",
    "wrong skill loaded": "#08519c",
    "verifier failed": "#d62728",
    "evidence missing or invalid": "#ff9896",
    "evidence bundle invalid": "#e377c2",
    "missing expected pattern": "#ff7f0e",
    "forbidden pattern recommended": "#8c564b",
    "anti-pattern matched": "#c49c94",
    "workflow step missing or out of order": "#bcbd22",
    "judged expectation failed": "#9467bd",
    "judged rubric item failed": "#c5b0d5",
    "score below the pass threshold": "#dbdb8d",
    "timeout": "#525252",
    "cancelled": "#969696",
    "sandbox killed": "#252525",
    "incomplete": "#737373",
    "no reasons recorded": "#d9d9d9",
})
#: Colours of error causes (``error: CLASS``), in order of frequency.
_ERROR_COLORS = ("#7f7f7f", "#a3a3a3", "#bdbdbd", "#636363")
#: Most causes drawn apart in :func:`cause_plot` (the rest are summed as "other causes").
PLOT_CAUSES = 9
#: Most bars (groups) drawn in :func:`cause_plot`.
PLOT_GROUPS = 24


@lru_cache(maxsize=8)
def _scores(run_dir: str, stamp: float) -> pd.DataFrame:
    del stamp  # part of the cache key only: a rewritten file is read again
    return read_scores(run_dir)


def run_scores(
    run: str | os.PathLike[str] | None, runs_dir: str | os.PathLike[str] = RUNS_DIR.default
) -> pd.DataFrame | None:
    """A run's score rows, read once per page (None for no run, or a run without scores).

    Args:
        run: A run directory or run id, or None.
        runs_dir: Where run ids are looked up.

    Returns:
        The rows of ``scores.parquet`` (shared between callers: do not modify), or None.
    """
    if run is None:
        return None
    run_dir = resolve_run_dir(run, runs_dir)
    path = Path(run_dir) / SCORES_FILE
    parts = Path(run_dir) / "parts"
    if not path.exists() and not parts.is_dir():
        return None
    stamp = path.stat().st_mtime if path.exists() else parts.stat().st_mtime
    scores = _scores(str(run_dir), stamp)
    return scores if len(scores) else None


def shown_reasons(
    run: str | os.PathLike[str] | None,
    items: pd.DataFrame,
    *,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
) -> pd.DataFrame:
    """The reason of each of ``items`` (rows of ``run``), in their order.

    Args:
        run: The run the items belong to (None: no scores, reasons from the rows alone).
        items: Result rows.
        runs_dir: Where run ids are looked up.

    Returns:
        :func:`evalkit.results.item_reasons` of the items: ``item_key, cause, reason,
        reasons_recorded``.
    """
    return item_reasons(items, run_scores(run, runs_dir))


def reason_line(reason: object) -> str:
    """The markup of one item's reason line (``<p class="ek-reason">why: ...</p>``)."""
    return f'<p class="ek-reason">why: {esc(reason)}</p>' if isinstance(reason, str) else ""


def _by(rows: pd.DataFrame, by: Sequence[str]) -> list[str]:
    keep = [c for c in by if c in rows.columns]
    if "provider" in keep and rows["provider"].nunique() <= 1:
        keep.remove("provider")
    return keep


def _group_labels(causes: pd.DataFrame, by: Sequence[str]) -> pd.Series:
    if not by:
        return pd.Series("all items", index=causes.index)
    return causes[list(by)].astype(str).agg(" / ".join, axis=1)


def _cause_colors(causes: Sequence[str]) -> dict[str, str]:
    colors, errors, spare = {}, iter(_ERROR_COLORS), iter(SERIES_COLORS)
    for cause in causes:
        known = CAUSE_COLORS.get(cause)
        if known is None and cause.startswith("error"):
            known = next(errors, None)
        colors[cause] = known or next(spare, "#999999")
    return colors


def _dark(color: str) -> bool:
    red, green, blue = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return 0.299 * red + 0.587 * green + 0.114 * blue < 140


def cause_plot(
    causes: pd.DataFrame,
    by: Sequence[str] = ("condition",),
    *,
    title: str = "Failing items by primary cause",
) -> Figure:
    """Stacked horizontal bars: each group's failing items split by their primary cause.

    Routing causes are drawn in blues, execution causes in warm colours, errors in greys, so
    whether a condition fails for want of the skill or in doing the work reads at a glance.

    Args:
        causes: A :func:`evalkit.results.failure_causes` table (``*by, cause, failures``).
        by: Its grouping columns (one bar per group; at most :data:`PLOT_GROUPS`).
        title: Figure title.

    Returns:
        The figure (a message figure when there is no failure).
    """
    if causes.empty:
        return _message_figure("no failing item", title)
    by = [c for c in by if c in causes.columns]
    table = causes.assign(_group=_group_labels(causes, by))
    totals = table.groupby("cause")["failures"].sum().sort_values(ascending=False, kind="stable")
    drawn = list(totals.index[:PLOT_CAUSES])
    if len(totals) > PLOT_CAUSES:
        drawn = list(totals.index[: PLOT_CAUSES - 1])
        table["cause"] = table["cause"].where(table["cause"].isin(drawn), "other causes")
        drawn.append("other causes")
    counts = table.pivot_table(index="_group", columns="cause", values="failures",
                               aggfunc="sum", fill_value=0).reindex(columns=drawn, fill_value=0)
    groups = list(dict.fromkeys(_group_labels(table, by)))
    if by == ["condition"]:
        groups = order_conditions(groups)
    shown = groups[:PLOT_GROUPS]
    counts = counts.reindex(shown, fill_value=0)
    colors = _cause_colors(drawn)
    fig = _new_figure(8.5, 1.3 + 0.34 * len(shown) + 0.22 * ((len(drawn) + 2) // 3))
    ax = fig.add_subplot()
    y = np.arange(len(shown))[::-1]
    left = np.zeros(len(shown))
    peak = float(counts.sum(axis=1).max()) or 1.0
    for cause in drawn:
        width = counts[cause].to_numpy(dtype=float)
        ax.barh(y, width, left=left, height=0.62, color=colors[cause], label=cause,
                edgecolor="white", linewidth=0.6)
        ink = "#ffffff" if _dark(colors[cause]) else "#111111"
        for yi, x0, w in zip(y, left, width, strict=True):
            if w >= 0.06 * peak:
                ax.text(x0 + w / 2, yi, f"{int(w)}", ha="center", va="center", fontsize=8,
                        color=ink)
        left += width
    for yi, total in zip(y, left, strict=True):
        ax.text(total + 0.01 * peak, yi, f"{int(total)}", va="center", fontsize=8.5,
                color="#333333")
    ax.set_yticks(y, [shorten(g, 30) for g in shown])
    ax.set_xlim(0, peak * 1.08)
    ax.set_xlabel("failing items (each counted once, under its primary cause)", fontsize=9)
    _style(ax)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=3,
               fontsize=8, frameon=False)
    suffix = f" (first {PLOT_GROUPS} of {len(groups)} groups)" if len(groups) > PLOT_GROUPS else ""
    fig.suptitle(title + suffix, x=0.01, ha="left", fontsize=12)
    return fig


def failure_summary(
    rows: pd.DataFrame,
    scores: pd.DataFrame | None,
    *,
    by: Sequence[str] = ("provider", "condition"),
    table_id: str = "failure-causes",
    causes: pd.DataFrame | None = None,
    plot: bool = False,
) -> Fragment:
    """What a run's failures are made of: one line per group, then the table of counts.

    Each failing item counts once, under its primary cause (see
    :func:`evalkit.results.failure_causes`); ``provider`` is a column only when there are
    several.

    Args:
        rows: The run's result rows.
        scores: Its score rows (None: every failure reads "no reasons recorded").
        by: Grouping columns.
        table_id: ``id`` of the table.
        causes: The counts when already computed (``LiftResult.failure_causes``, by provider
            and condition), instead of counting again.
        plot: Also draw the counts as stacked bars (:func:`cause_plot`, ``fig-TABLE_ID``).

    Returns:
        The summary lines, the figure when asked for, and the table.
    """
    keep = _by(rows, by)
    if causes is None or not set(keep) <= set(causes.columns):
        causes = failure_causes(rows, scores, by=keep)
    elif set(causes.columns) - {*keep, "outcome", "cause", "failures", "share"}:
        # counts of finer groups (several providers) summed into the groups asked for
        causes = causes.groupby([*keep, "outcome", "cause"], sort=False)["failures"].sum(
            ).reset_index()
        total = causes.groupby(keep)["failures"].transform("sum") if keep else (
            causes["failures"].sum())
        causes["share"] = causes["failures"] / total
        wrong = causes["outcome"] != DID_NOT_FINISH
        causes = causes.assign(_wrong=wrong).sort_values(
            [*keep, "_wrong", "failures"], ascending=[True] * len(keep) + [True, False],
            kind="stable").drop(columns="_wrong").reset_index(drop=True)
    if causes.empty:
        return Fragment('<p class="ek-empty">No failing item.</p>')
    lines = "".join(f"<li>{esc(line)}</li>" for line in describe_causes(causes, by=keep))
    table = html_table(
        causes,
        formats={"share": pct},
        caption="Failing items by primary cause (each failure counted once)",
        table_id=table_id,
    )
    figure = Fragment("")
    if plot:
        figure = figure_html(
            cause_plot(causes, keep), table_id,
            "Failing items of each group split by their primary cause: blues are routing "
            "(the skill not loaded or loaded wrongly), warm colours execution, greys errors.",
        )
    return Fragment(f'<ul class="ek-causes">{lines}</ul>') + figure + table


def cause_changes(
    baseline: pd.DataFrame,
    baseline_scores: pd.DataFrame | None,
    candidate: pd.DataFrame,
    candidate_scores: pd.DataFrame | None,
    *,
    labels: tuple[str, str] = ("baseline", "candidate"),
    by: Sequence[str] = ("provider", "condition"),
    table_id: str = "cause-changes",
) -> Fragment:
    """Failures by primary cause in the baseline and in the candidate, and the change.

    Args:
        baseline: Baseline result rows.
        baseline_scores: Their score rows, or None.
        candidate: Candidate result rows.
        candidate_scores: Their score rows, or None.
        labels: Names of the two sides (column headers).
        by: Grouping columns (``condition`` is dropped when the sides are two conditions).
        table_id: ``id`` of the table.

    Returns:
        The table: ``*by, outcome, cause, <baseline>, <candidate>, change`` (failing
        items; see :func:`evalkit.results.cause_changes`).
    """
    keep = _by(pd.concat([baseline, candidate], ignore_index=True), by)
    if "condition" in keep and not set(baseline["condition"]) & set(candidate["condition"]):
        keep.remove("condition")  # two conditions of one run: compare them as two sides
    table = results_cause_changes(failure_causes(baseline, baseline_scores, by=keep),
                                  failure_causes(candidate, candidate_scores, by=keep), by=keep)
    if table.empty:
        return Fragment('<p class="ek-empty">No failing item on either side.</p>')
    table = table.rename(columns={"baseline": labels[0], "candidate": labels[1]})
    return html_table(
        table,
        formats={"change": lambda v: f"{int(v):+d}"},
        caption="Failing items by outcome (did not finish: a timeout, a limit, a cancellation, "
        "a sandbox kill or an error; answered wrong: the rest) and primary cause, baseline "
        "and candidate",
        table_id=table_id,
    )


def failure_changes_table(
    changes: pd.DataFrame, table_id: str = "failure-changes"
) -> Fragment:
    """``LiftResult.failure_changes`` as a table: each condition beside the baseline (role A).

    Args:
        changes: The lift's ``failure_changes`` (``provider, baseline_condition, condition,
            outcome, cause, baseline, candidate, change``).
        table_id: ``id`` of the table.

    Returns:
        The table (``provider`` only when there are several), unfinished items first; an
        empty fragment when there is nothing to compare.
    """
    if changes.empty:
        return Fragment("")
    base = str(changes["baseline_condition"].iloc[0])
    shown = changes.drop(columns=["baseline_condition"])
    if shown["provider"].nunique() <= 1:
        shown = shown.drop(columns=["provider"])
    shown = shown.rename(columns={"baseline": f"{base} (A)", "candidate": "this condition"})
    return html_table(
        shown,
        formats={"change": lambda v: f"{int(v):+d}"},
        caption=f"Failing items by outcome and primary cause: each condition against {base} "
        "(A). Did not finish: a timeout, a limit, a cancellation, a sandbox kill or an error; "
        "answered wrong: the rest",
        table_id=table_id,
    )
