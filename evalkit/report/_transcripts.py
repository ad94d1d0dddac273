"""Reading transcripts of a run and rendering escaped excerpts of them.

Transcripts are read by :func:`evalkit.results.read_transcripts` (re-exported by
``evalkit.report``). Everything in a transcript is model output, hence untrusted: the HTML here
escapes every string.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from evalkit._settings import RUNS_DIR
from evalkit._skill_load import skill_loaded as skill_loaded
from evalkit.report._reasons_view import reason_line, shown_reasons
from evalkit.report._tables import Fragment, esc, rows_of
from evalkit.results import read_transcripts

_KIND_CLASSES = {
    "system": "system",
    "user": "user",
    "assistant": "assistant",
    "tool_call": "tool-call",
    "tool_result": "tool-result",
}
def event_html(event: Mapping[str, Any], budget: int) -> str:
    """One escaped transcript event, tool calls and skill loads marked by their CSS class.

    Args:
        event: The event (``kind``, ``name``, ``content``).
        budget: Most characters of its content shown.

    Returns:
        The event's markup (``<div class="ek-event ek-event-KIND">``; a skill load also has
        ``ek-event-skill`` and its label names the skill).
    """
    kind = str(event.get("kind", ""))
    name = str(event.get("name", "") or "")
    label = f"{kind} · {name}" if name else kind
    css = f"ek-event ek-event-{_KIND_CLASSES.get(kind, 'other')}"
    skill = skill_loaded(event)
    if skill is not None:
        css += " ek-event-skill"
        label = f"skill load · {skill}"
    content = _clip(str(event.get("content", "")), budget)
    return (
        f'<div class="{css}"><div class="ek-event-kind">{esc(label)}</div>'
        f"<pre>{esc(content)}</pre></div>"
    )


def _events(record: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    if not record:
        return []
    response = record.get("response")
    events = response.get("events") if isinstance(response, Mapping) else None
    if not isinstance(events, list):
        return []
    return [e for e in events if isinstance(e, Mapping)]


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f" … [{len(text) - limit} more characters]"


def transcript_html(
    record: Mapping[str, Any] | None,
    *,
    title: str = "",
    facts: Mapping[str, Any] | None = None,
    max_chars: int = 1200,
    max_events: int = 6,
    reason: str | None = None,
) -> Fragment:
    """An escaped excerpt of one transcript: the prompt, then the last events.

    Args:
        record: A transcript record (None: "no transcript" is shown).
        title: Heading of the excerpt (escaped).
        facts: Small ``{label: value}`` line under the heading (status, error, score...).
        max_chars: Character budget for the whole excerpt.
        max_events: Most events shown (the first, then the last ones).
        reason: The item's reason line (:func:`evalkit.results.item_reasons`), shown under
            the facts.

    Returns:
        The excerpt as a :class:`Fragment`.

    Examples:
        >>> rec = {"response": {"events": [{"kind": "assistant", "content": "<script>x</script>"}]}}
        >>> "&lt;script&gt;" in transcript_html(rec).html
        True
    """
    events = _events(record)
    head = f'<p class="ek-excerpt-title">{esc(title)}</p>' if title else ""
    if facts:
        head += (
            '<p class="ek-excerpt-facts">'
            + " · ".join(
                f"<span>{esc(k)}: {esc(v)}</span>" for k, v in facts.items() if v not in (None, "")
            )
            + "</p>"
        )
    head += reason_line(reason)
    if not events:
        return Fragment(
            f'<article class="ek-excerpt">{head}<p class="ek-empty">no transcript</p></article>'
        )
    if len(events) > max_events:
        keep = [events[0], *events[-(max_events - 1) :]]
        skipped = len(events) - len(keep)
    else:
        keep, skipped = events, 0
    budget = max(160, max_chars // max(len(keep), 1))
    body = []
    for index, event in enumerate(keep):
        body.append(event_html(event, budget))
        if skipped and index == 0:
            body.append(f'<p class="ek-skipped">… {skipped} event(s) not shown …</p>')
    return Fragment(f'<article class="ek-excerpt">{head}{"".join(body)}</article>')


def side_by_side(left: Fragment, right: Fragment, *, caption: str = "") -> Fragment:
    """Two excerpts next to each other (stacked on narrow screens).

    Args:
        left: Left excerpt (e.g. the baseline).
        right: Right excerpt (e.g. the candidate).
        caption: Line above the pair (escaped).

    Returns:
        The pair.
    """
    head = f'<p class="ek-pair-caption">{esc(caption)}</p>' if caption else ""
    return Fragment(
        f'<section class="ek-pair">{head}<div class="ek-sbs">{left.html}{right.html}</div>'
        "</section>"
    )


def _facts(row: Mapping[str, Any]) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    for column in ("condition", "provider", "trial", "status", "error_class"):
        value = row.get(column)
        if value is not None and not (isinstance(value, float) and pd.isna(value)):
            facts[column] = value
    if "passed" in row:
        facts["passed"] = "yes" if bool(row["passed"]) else "no"
    score = row.get("score")
    if isinstance(score, float) and not pd.isna(score):
        facts["score"] = f"{score:.2f}"
    return facts


def excerpts(
    run: str | os.PathLike[str],
    items: pd.DataFrame,
    *,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    rows: pd.DataFrame | None = None,
    max_chars: int = 1200,
    empty: str = "no item to show",
) -> Fragment:
    """Excerpts of the transcripts of the given result rows, one after the other.

    Args:
        run: The run the rows belong to.
        items: Result rows (``item_key, case_id`` and the usual columns).
        runs_dir: Where run ids are looked up.
        rows: The run's full result rows when already loaded (for transcript paths).
        max_chars: Character budget per excerpt.
        empty: Text shown when ``items`` is empty.

    Returns:
        The excerpts.
    """
    if items.empty:
        return Fragment(f'<p class="ek-empty">{esc(empty)}</p>')
    records = read_transcripts(
        run, items["item_key"], runs_dir=runs_dir, rows=rows if rows is not None else items
    )
    reasons = shown_reasons(run, items, runs_dir=runs_dir)["reason"].tolist()
    parts = []
    for row, reason in zip(rows_of(items), reasons, strict=True):
        message = row.get("error_message")
        facts = _facts(row)
        if isinstance(message, str) and message:
            facts["error"] = message[:200]
        parts.append(
            transcript_html(
                records.get(str(row["item_key"])),
                title=f"case {row.get('case_id', '')}",
                facts=facts,
                max_chars=max_chars,
                reason=reason,
            ).html
        )
    return Fragment('<div class="ek-excerpts">' + "".join(parts) + "</div>")


def paired_excerpts(
    pairs: Sequence[tuple[str, Mapping[str, Any] | None, Mapping[str, Any] | None]],
    *,
    baseline_run: str | os.PathLike[str],
    candidate_run: str | os.PathLike[str],
    baseline_rows: pd.DataFrame,
    candidate_rows: pd.DataFrame,
    labels: tuple[str, str] = ("baseline", "candidate"),
    max_chars: int = 900,
) -> Fragment:
    """Baseline and candidate transcripts side by side, one pair per caption.

    Args:
        pairs: ``(caption, baseline row, candidate row)``; a missing row shows "no item".
        baseline_run: Run holding the baseline rows.
        candidate_run: Run holding the candidate rows.
        baseline_rows: The baseline run's result rows (for transcript paths).
        candidate_rows: The candidate run's result rows.
        labels: Headings of the two columns.
        max_chars: Character budget per excerpt.

    Returns:
        The pairs.
    """
    base_keys = [str(b["item_key"]) for _, b, _ in pairs if b is not None]
    cand_keys = [str(c["item_key"]) for _, _, c in pairs if c is not None]
    base = read_transcripts(baseline_run, base_keys, rows=baseline_rows)
    cand = read_transcripts(candidate_run, cand_keys, rows=candidate_rows)
    why: dict[str, str] = {}
    for run, side_rows in ((baseline_run, [b for _, b, _ in pairs if b is not None]),
                           (candidate_run, [c for _, _, c in pairs if c is not None])):
        if side_rows:
            found = shown_reasons(run, pd.DataFrame(side_rows))
            why.update({f"{run}\0{k}": r for k, r in zip(found["item_key"], found["reason"],
                                                          strict=True)})
    out = []
    for caption, b, c in pairs:
        sides = []
        for label, row, records, run in ((labels[0], b, base, baseline_run),
                                         (labels[1], c, cand, candidate_run)):
            if row is None:
                sides.append(
                    Fragment(
                        f'<article class="ek-excerpt"><p class="ek-excerpt-title">{esc(label)}'
                        '</p><p class="ek-empty">no matching item</p></article>'
                    )
                )
                continue
            sides.append(
                transcript_html(
                    records.get(str(row["item_key"])),
                    title=label,
                    facts=_facts(row),
                    max_chars=max_chars,
                    reason=why.get(f"{run}\0{row['item_key']}"),
                )
            )
        out.append(side_by_side(sides[0], sides[1], caption=caption).html)
    return Fragment("".join(out))
