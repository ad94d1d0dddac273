"""The item browser: every work item of a run (or two) in one filterable table, with transcripts.

The markup is plain escaped HTML that survives the report sanitizer and reads without any
script: a table whose case links jump to one collapsed ``<details>`` panel per item holding
its whole transcript. On a report page, a small embedded script (``templates/evalkit/static/
browser.js``, allowed by the page's Content-Security-Policy through its hash) adds a search box,
one drop-down per column such as condition and status, a live row count, and opens an item's
transcript when its row is clicked. The script only reads text and toggles attributes: it
never turns text into markup.

Large runs are cut to :data:`BROWSE_LIMIT` items, whole cases at a time: cases with a flip
(passing and failing items) first, then failing cases, then a seeded sample of the others. A
note above the table says "showing N of M items" whenever something was left out.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit._settings import RUNS_DIR, SEED
from evalkit.report._reasons_view import reason_line, shown_reasons
from evalkit.report._tables import Fragment, esc, rows_of
from evalkit.report._transcripts import event_html
from evalkit.results import read_transcripts

#: Most items a browser holds by default (the page stays a few MiB at most).
BROWSE_LIMIT = 500
#: Columns of the browser table: ``(result column, header)``.
BROWSER_COLUMNS: tuple[tuple[str, str], ...] = (
    ("case_id", "case"),
    ("condition", "condition"),
    ("provider", "provider"),
    ("trial", "trial"),
    ("status", "status"),
    ("passed", "passed"),
    ("cost_usd", "cost"),
    ("latency_s", "latency"),
    ("cause", "cause"),
    ("reason", "reason"),
)
#: Characters of an item's reason shown in its table cell (its panel shows the whole line).
REASON_CELL_CHARS = 120
_RANKS = ("flipped", "failing", "passing")


@dataclass(frozen=True)
class ItemSample:
    """The items a browser shows, chosen from a larger table.

    Attributes:
        rows: The chosen rows (in display order: case, condition, provider, trial).
        total: Number of items offered.
        cases: ``{"flipped": n, "failing": n, "passing": n}`` cases among the chosen rows.
        seed: Seed of the sample of the cases beyond the limit.
        offered: The same counts over every offered case (empty when not counted).
    """

    rows: pd.DataFrame
    total: int
    cases: Mapping[str, int]
    seed: int
    offered: Mapping[str, int] = dataclasses.field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Whether every offered item is shown."""
        return len(self.rows) == self.total

    def describe(self) -> str:
        """The note shown above the table.

        Returns:
            ``"showing N of M items: ..."``, or ``"all M items"``.
        """
        if self.complete:
            return f"all {self.total:,} items"
        shown, offered = self.cases, self.offered or self.cases
        return (
            f"showing {len(self.rows):,} of {self.total:,} items, whole cases "
            f"({sum(shown.values()):,} of {sum(offered.values()):,}): first cases whose items "
            f"both pass and fail ({shown.get('flipped', 0):,} of "
            f"{offered.get('flipped', 0):,}), then cases that never pass "
            f"({shown.get('failing', 0):,} of {offered.get('failing', 0):,}), then a random "
            f"sample of the cases that always pass ({shown.get('passing', 0):,} of "
            f"{offered.get('passing', 0):,}; seed {self.seed})"
        )


def _passed(rows: pd.DataFrame) -> pd.Series:
    return rows["passed"].fillna(False).astype(bool)


def sample_items(
    rows: pd.DataFrame,
    *,
    max_items: int = BROWSE_LIMIT,
    seed: int = SEED.default,
    case_column: str = "case_id",
) -> ItemSample:
    """Choose at most ``max_items`` items, whole cases at a time, flipped and failing first.

    A case is *flipped* when some of its items pass and others fail (across trials,
    conditions or runs), *failing* when none passes, *passing* otherwise. Cases are taken in
    that order, in a seeded random order within each group, while they fit; a case larger
    than the room left is skipped so that the ones after it can still fit (when no case fits
    at all, the first case is cut to the limit). A run within the limit is returned whole.

    Args:
        rows: Result rows (``case_id`` and ``passed``; two runs may be concatenated).
        max_items: Most items chosen.
        seed: Seed of the random order within each group.
        case_column: Column naming the case.

    Returns:
        The :class:`ItemSample`.

    Raises:
        ValueError: ``max_items`` is smaller than 1.

    Examples:
        >>> rows = pd.DataFrame({"case_id": list("aabbcc"), "passed": [1, 0, 1, 1, 0, 0]})
        >>> sample = sample_items(rows, max_items=4)
        >>> sorted(sample.rows["case_id"].unique()), sample.describe()[:20]
        (['a', 'c'], 'showing 4 of 6 items')
    """
    if max_items < 1:
        raise ValueError(f"max_items must be at least 1, not {max_items}")
    passed = _passed(rows)
    case = rows[case_column].astype(str)
    stats = pd.DataFrame({"case": case, "passed": passed}).groupby("case", sort=True)["passed"]
    share = stats.mean()
    sizes = stats.size()
    rank = pd.Series(
        np.where((share > 0) & (share < 1), 0, np.where(share == 0, 1, 2)), index=share.index
    )
    order = pd.DataFrame(
        {
            "rank": rank,
            "draw": np.random.default_rng(seed).random(len(share)),
            "size": sizes,
        }
    )
    if len(rows) <= max_items:
        chosen = list(order.index)
    else:
        chosen, room = [], max_items
        for name, item in order.sort_values(["rank", "draw"], kind="stable").iterrows():
            if int(item["size"]) <= room:
                chosen.append(str(name))
                room -= int(item["size"])
            if room == 0:
                break
    picked = rows[case.isin(chosen)]
    if picked.empty:  # every case alone is larger than the limit: part of the first one
        first = str(order.sort_values(["rank", "draw"], kind="stable").index[0])
        chosen = [first]
        picked = rows[case == first].head(max_items)
    keys = [c for c in (case_column, "condition", "provider", "trial") if c in picked]
    if "run" in picked:
        keys.insert(1, "run")
    picked = picked.sort_values(keys, kind="stable") if keys else picked
    counts = {name: int((rank[chosen] == i).sum()) for i, name in enumerate(_RANKS)}
    offered = {name: int((rank == i).sum()) for i, name in enumerate(_RANKS)}
    return ItemSample(picked, len(rows), counts, seed, offered)


def _cell(column: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return ""
    if column == "passed":
        return "yes" if bool(value) else "no"
    if column == "cost_usd":
        return f"${float(value):.4f}"
    if column == "latency_s":
        return f"{float(value):.1f} s"
    if column == "score":
        return f"{float(value):.2f}"
    if column == "reason":
        text = str(value)
        return text if len(text) <= REASON_CELL_CHARS else text[: REASON_CELL_CHARS - 1] + "…"
    return str(value)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _safe_id(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower())[:40] or "items"


def _panel(
    anchor: str,
    row: Mapping[str, Any],
    record: Mapping[str, Any] | None,
    *,
    run_label: str | None,
    max_chars: int,
    max_events: int,
) -> str:
    title_bits = [str(row.get("case_id", "")), str(row.get("condition", ""))]
    if row.get("trial") is not None:
        title_bits.append(f"trial {row.get('trial')}")
    if run_label:
        title_bits.insert(0, run_label)
    facts = []
    for column in ("provider", "model", "status", "error_class", "inferred_skill", "score"):
        text = _cell(column, row.get(column))
        if text:
            facts.append(f"<span>{esc(column)}: {esc(text)}</span>")
    facts.append(f"<span>passed: {esc(_cell('passed', row.get('passed')))}</span>")
    why = reason_line(row.get("reason"))
    message = row.get("error_message")
    error = (
        f'<p class="ek-browser-error">{esc(str(message)[:500])}</p>'
        if isinstance(message, str) and message
        else ""
    )
    response = (record or {}).get("response")
    events = response.get("events") if isinstance(response, Mapping) else None
    events = [e for e in events if isinstance(e, Mapping)] if isinstance(events, list) else []
    if not events:
        body = '<p class="ek-empty">no transcript</p>'
    else:
        shown = events if len(events) <= max_events else events[:max_events]
        body = "".join(event_html(event, max_chars) for event in shown)
        if len(events) > len(shown):
            body += f'<p class="ek-skipped">… {len(events) - len(shown)} more event(s) …</p>'
    return (
        f'<details class="ek-browser-item" id="{anchor}">'
        f"<summary>{esc(' · '.join(title_bits))}</summary>"
        f'<p class="ek-excerpt-facts">{" · ".join(facts)}</p>{why}{error}{body}</details>'
    )


def item_browser(
    run: str | os.PathLike[str],
    rows: pd.DataFrame,
    *,
    baseline: str | os.PathLike[str] | None = None,
    baseline_rows: pd.DataFrame | None = None,
    labels: tuple[str, str] = ("baseline", "candidate"),
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    max_items: int = BROWSE_LIMIT,
    max_chars: int = 2000,
    max_events: int = 80,
    seed: int = SEED.default,
    browser_id: str = "items",
) -> Fragment:
    """A searchable table of a run's items (or two runs'), each opening its transcript.

    Args:
        run: The run (directory or id) the rows belong to: the candidate with a baseline.
        rows: Its result rows.
        baseline: A second run shown in the same table (a ``run`` column tells them apart).
        baseline_rows: The baseline's result rows.
        labels: Names of the baseline and the candidate in the ``run`` column.
        runs_dir: Where run ids are looked up.
        max_items: Most items in the table (see :func:`sample_items`).
        max_chars: Most characters shown of one transcript event.
        max_events: Most events shown of one transcript.
        seed: Seed of the sample beyond ``max_items``.
        browser_id: Identifier of the browser on the page (letters, digits, dashes).

    Returns:
        The browser (a ``<section class="ek-browser">``).
    """
    arms: list[tuple[str | None, str | os.PathLike[str], pd.DataFrame]]
    if baseline is not None and baseline_rows is not None:
        arms = [(labels[0], baseline, baseline_rows), (labels[1], run, rows)]
    else:
        arms = [(None, run, rows)]
    frames = [
        frame.assign(run=label, _arm=index) if label is not None else frame.assign(_arm=index)
        for index, (label, _, frame) in enumerate(arms)
    ]
    offered = pd.concat(frames, ignore_index=True) if frames else rows.iloc[0:0]
    root = f"ekb-{_safe_id(browser_id)}"
    if offered.empty:
        return Fragment(
            f'<section class="ek-browser" id="{root}"><p class="ek-empty">no item</p></section>'
        )
    sample = sample_items(offered, max_items=max_items, seed=seed)
    chosen = sample.rows
    records: dict[int, dict[str, dict[str, Any]]] = {}
    reasons = []
    for index, (_, arm_run, arm_rows) in enumerate(arms):
        arm_items = chosen[chosen["_arm"] == index]
        keys = arm_items["item_key"].astype(str)
        records[index] = read_transcripts(arm_run, keys, runs_dir=runs_dir, rows=arm_rows)
        reasons.append(
            shown_reasons(arm_run, arm_items, runs_dir=runs_dir).set_index(arm_items.index)
        )
    chosen = chosen.join(pd.concat(reasons)[["cause", "reason"]])
    columns = [(c, h) for c, h in BROWSER_COLUMNS if c in chosen]
    if "provider" in chosen and chosen["provider"].nunique() <= 1:
        columns = [(c, h) for c, h in columns if c != "provider"]
    if len(arms) > 1:
        columns.insert(0, ("run", "run"))
    numeric = ("trial", "cost_usd", "latency_s")
    head = "".join(
        f'<th class="num">{esc(h)}</th>' if c in numeric else f"<th>{esc(h)}</th>"
        for c, h in columns
    )
    body_rows, panels = [], []
    for i, row in enumerate(rows_of(chosen)):
        anchor = f"{root}-item-{i}"
        status = "pass" if bool(row.get("passed") or False) else "fail"
        cells = []
        for column, _ in columns:
            text = esc(_cell(column, row.get(column)))
            if column == "case_id":
                cells.append(f'<td class="ek-cell-case"><a href="#{anchor}">{text}</a></td>')
            elif column in numeric:
                cells.append(f'<td class="num">{text}</td>')
            elif column in ("cause", "reason"):
                cells.append(f'<td class="ek-cell-{column}">{text}</td>')
            else:
                cells.append(f"<td>{text}</td>")
        body_rows.append(f'<tr class="ek-browser-row ek-{status}">{"".join(cells)}</tr>')
        label = row.get("run") if len(arms) > 1 else None
        panels.append(
            _panel(
                anchor,
                row,
                records[int(row["_arm"])].get(str(row["item_key"])),
                run_label=str(label) if label else None,
                max_chars=max_chars,
                max_events=max_events,
            )
        )
    note_kind = "info" if sample.complete else "warn"
    return Fragment(
        f'<section class="ek-browser" id="{root}" aria-label="Items">'
        f'<p class="ek-note ek-note-{note_kind} ek-browser-note">'
        f"{esc(_sentence(sample.describe()))}. Click a row to read its transcript.</p>"
        f'<div class="ek-table-wrap ek-browser-wrap"><table class="ek-table ek-browser-table">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body_rows)}</tbody></table></div>"
        f'<div class="ek-browser-panels">{"".join(panels)}</div></section>'
    )
