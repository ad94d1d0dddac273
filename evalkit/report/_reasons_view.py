"""Reasons on report pages: each shown item's reason line, and what the failures are made of.

The reasons themselves come from :mod:`evalkit.results` (:func:`~evalkit.results.item_reasons`,
:func:`~evalkit.results.failure_causes`); this module reads a run's scores once per page and
turns the reasons into escaped markup.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import pandas as pd

from evalkit.report._tables import Fragment, esc, html_table, pct
from evalkit.results import (
    SCORES_FILE,
    describe_causes,
    failure_causes,
    item_reasons,
    read_scores,
    resolve_run_dir,
)


@lru_cache(maxsize=8)
def _scores(run_dir: str, stamp: float) -> pd.DataFrame:
    del stamp  # part of the cache key only: a rewritten file is read again
    return read_scores(run_dir)


def run_scores(
    run: str | os.PathLike[str] | None, runs_dir: str | os.PathLike[str] = "runs"
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
    runs_dir: str | os.PathLike[str] = "runs",
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


def failure_summary(
    rows: pd.DataFrame,
    scores: pd.DataFrame | None,
    *,
    by: Sequence[str] = ("provider", "condition"),
    table_id: str = "failure-causes",
    causes: pd.DataFrame | None = None,
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

    Returns:
        The summary lines and the table.
    """
    keep = _by(rows, by)
    if causes is None or not set(keep) <= set(causes.columns):
        causes = failure_causes(rows, scores, by=keep)
    else:
        causes = causes.drop(columns=[c for c in causes.columns if c not in {
            *keep, "cause", "failures", "share"}])
    if causes.empty:
        return Fragment('<p class="ek-empty">No failing item.</p>')
    lines = "".join(f"<li>{esc(line)}</li>" for line in describe_causes(causes, by=keep))
    table = html_table(
        causes,
        formats={"share": pct},
        caption="Failing items by primary cause (each failure counted once)",
        table_id=table_id,
    )
    return Fragment(f'<ul class="ek-causes">{lines}</ul>') + table


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
        The table: ``*by, cause, <baseline>, <candidate>, change`` (failing items).
    """
    keep = _by(pd.concat([baseline, candidate], ignore_index=True), by)
    if "condition" in keep and not set(baseline["condition"]) & set(candidate["condition"]):
        keep.remove("condition")  # two conditions of one run: compare them as two sides
    sides = []
    for label, rows, scores in ((labels[0], baseline, baseline_scores),
                                (labels[1], candidate, candidate_scores)):
        counts = failure_causes(rows, scores, by=keep)
        sides.append(counts.set_index([*keep, "cause"])["failures"].rename(label))
    table = pd.concat(sides, axis=1).fillna(0).astype(int).reset_index()
    if table.empty:
        return Fragment('<p class="ek-empty">No failing item on either side.</p>')
    table["change"] = table[labels[1]] - table[labels[0]]
    table = table.sort_values([*keep, "change"], ascending=[True] * len(keep) + [False])
    return html_table(
        table,
        formats={"change": lambda v: f"{int(v):+d}"},
        caption="Failing items by primary cause, baseline and candidate",
        table_id=table_id,
    )
