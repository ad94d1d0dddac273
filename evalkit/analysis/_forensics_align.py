"""A passing and a failing transcript aligned at their first divergence (the forensics' steps).

Steps are compared on their kind: a skill load (and which skill), a tool call or result (and
which tool), a prompt, an answer. Where the kinds never differ, the first answer whose text
does is the divergence. The pair aligned isolates the top cause: the failing trial has it, the
passing one has not, and they differ as little as the trials allow in anything else, routing
first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from evalkit._skill_load import skill_loaded

#: Most steps of each transcript shown from the first divergence on (one more before it).
STEPS_AROUND = 3
#: Characters of a step's content shown.
STEP_CHARS = 300

DIVERGENCE_COLUMNS = ("step", "passing_kind", "passing", "failing_kind", "failing")


def events_of(record: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The events of a transcript record (``response.events``), or none."""
    response = record.get("response") if record else None
    events = response.get("events") if isinstance(response, Mapping) else None
    return [e for e in events if isinstance(e, Mapping)] if isinstance(events, list) else []


def tools_called(events: list[Mapping[str, Any]]) -> set[str]:
    """The names of the tools called, skill loads left out (they are features of their own)."""
    return {
        str(e.get("name") or "")
        for e in events
        if str(e.get("kind", "")) == "tool_call" and skill_loaded(e) is None and e.get("name")
    }


def count_tool_calls(events: list[Mapping[str, Any]]) -> int:
    """How many tool calls a transcript makes (skill loads included)."""
    return sum(1 for e in events if str(e.get("kind", "")) == "tool_call")


def signature(event: Mapping[str, Any]) -> str:
    """A step's kind, as aligned: ``skill load · NAME``, ``tool_call · TOOL``, ``assistant``."""
    skill = skill_loaded(event)
    if skill is not None:
        return f"skill load · {skill}"
    kind = str(event.get("kind", ""))
    name = str(event.get("name", "") or "")
    return f"{kind} · {name}" if name and kind in ("tool_call", "tool_result") else kind


def _clip(text: object) -> str:
    flat = " ".join(str(text if text is not None else "").split())
    return flat if len(flat) <= STEP_CHARS else flat[: STEP_CHARS - 1] + "…"


def first_divergence(
    passing: list[Mapping[str, Any]], failing: list[Mapping[str, Any]]
) -> tuple[int | None, str]:
    """The first step that differs in kind, or (the kinds all equal) in an answer's text.

    Args:
        passing: The passing transcript's events.
        failing: The failing transcript's events.

    Returns:
        ``(index, "kind" | "answer")``, or ``(None, "")`` when they are the same.
    """
    for index in range(max(len(passing), len(failing))):
        kind_a = signature(passing[index]) if index < len(passing) else None
        kind_b = signature(failing[index]) if index < len(failing) else None
        if kind_a != kind_b:
            return index, "kind"
    for index, (a, b) in enumerate(zip(passing, failing, strict=False)):
        if str(a.get("kind")) == "assistant" and str(a.get("content")) != str(b.get("content")):
            return index, "answer"
    return None, ""


def steps_around(
    passing: list[Mapping[str, Any]], failing: list[Mapping[str, Any]], index: int
) -> pd.DataFrame:
    """Both transcripts from one step before ``index`` to :data:`STEPS_AROUND` after it."""
    rows = []
    for step in range(max(0, index - 1), index + STEPS_AROUND):
        p = passing[step] if step < len(passing) else None
        f = failing[step] if step < len(failing) else None
        if p is None and f is None:
            break
        rows.append((
            step,
            signature(p) if p is not None else "(ended)",
            _clip(p.get("content")) if p is not None else "",
            signature(f) if f is not None else "(ended)",
            _clip(f.get("content")) if f is not None else "",
        ))
    return pd.DataFrame(rows, columns=list(DIVERGENCE_COLUMNS))


_COMPLEMENTS = (("the agent does not call ", "the agent calls "),
                ("the skill is not loaded", "a skill is loaded"))


def _complement(feature: str) -> str:
    """The feature that says the opposite (``calls X`` / ``does not call X``), or ``""``."""
    for negative, positive in _COMPLEMENTS:
        if feature.startswith(negative):
            return positive + feature[len(negative):]
        if feature.startswith(positive):
            return negative + feature[len(positive):]
    return ""


def _distinct(features: pd.DataFrame, top: str | None, routing: frozenset[str]) -> list[str]:
    """The features other than ``top`` that say something of their own.

    Left out: one of each complementary pair (called / not called), ``top``'s complement,
    and, when ``top`` is about routing, the routing features that say the same of every
    trial (``a skill is loaded`` and ``the agent loads X`` with one skill).
    """
    same: pd.Series | None = features[top].astype(bool) if top in features else None
    out: list[str] = []
    for feature in map(str, features.columns):
        if feature == top or _complement(feature) in (top, *out):
            continue
        if same is not None and top in routing and feature in routing:
            values = features[feature].astype(bool)
            if values.equals(same) or values.equals(~same):
                continue
        out.append(feature)
    return out


def _pair(
    failing: pd.DataFrame,
    passing: pd.DataFrame,
    top: str | None,
    features: pd.DataFrame,
    routing: frozenset[str],
) -> tuple[Any, Any, list[str]]:
    """The failing and passing trial that differ in ``top`` and as little else as possible.

    Pairs are ranked by the routing features they differ in, then by the other features
    (``top`` aside), then, between two runs, the same work item first, then trial order.

    Returns:
        The failing row, the passing row, and the other features they differ in.
    """
    if top is not None and top in features:
        marked = features.loc[failing.index, top].astype(bool)
        failing = failing[marked] if marked.any() else failing
        clean = ~features.loc[passing.index, top].astype(bool)
        passing = passing[clean] if clean.any() else passing
    others = _distinct(features, top, routing)
    best: tuple[tuple[int, int, int, int], Any, Any, list[str]] | None = None
    for order, (fi, frow) in enumerate(failing.iterrows()):
        for pi, prow in passing.iterrows():
            differ = [f for f in others if bool(features.at[fi, f]) != bool(features.at[pi, f])]
            key = (
                sum(f in routing for f in differ),
                len(differ),
                int(str(prow["item_key"]) != str(frow["item_key"])),
                order,
            )
            if best is None or key < best[0]:
                best = (key, frow, prow, differ)
    assert best is not None
    return best[1], best[2], best[3]


def divergence(
    trials: pd.DataFrame,
    top: str | None,
    features: pd.DataFrame,
    records: Mapping[tuple[str, str], Any],
    routing: frozenset[str] = frozenset(),
    *,
    name_top: bool = True,
) -> tuple[pd.DataFrame, int | None, str]:
    """Align the pair of trials that isolates the top feature.

    The failing trial has the top feature and the passing one has not, when such trials
    exist; among those pairs, the one that differs least in routing (``routing`` names those
    features), then least in every other feature. Between two runs the same work item in the
    other run is preferred among equally close pairs. The note names what else the pair
    differs in.

    Args:
        trials: The trials of one cell (``side``, ``item_key``, ``trial``, ``passed``).
        top: The best distinguishing feature, or None.
        features: The cell's feature table (the features the pair is compared on).
        records: Transcript records by ``(side, item_key)``.
        routing: The routing features among ``features``.
        name_top: Whether the note names the top feature and what else the pair differs in
            (not for a scoring component, which every passing and failing pair differs in).

    Returns:
        ``(steps, first divergence, note)``; the steps are empty when nothing was aligned
        and the note says why.
    """
    empty = pd.DataFrame(columns=list(DIVERGENCE_COLUMNS))
    passed = trials["passed"].astype("boolean").fillna(False).astype(bool)
    if passed.all() or not passed.any():
        return empty, None, "no flip: nothing to align"
    ids = list(zip(trials["side"].astype(str), trials["item_key"].astype(str), strict=True))
    with_record = pd.Series([i in records for i in ids], index=trials.index)
    failing = trials[~passed & with_record]
    passing = trials[passed & with_record]
    if failing.empty or passing.empty:
        return empty, None, "no transcript for a passing and a failing trial"
    b, a, differ = _pair(failing, passing, top, features, routing)
    pass_events = events_of(records[(str(a["side"]), str(a["item_key"]))])
    fail_events = events_of(records[(str(b["side"]), str(b["item_key"]))])
    label = (f"passing {a['side']} trial {a['trial']} against failing {b['side']} trial "
             f"{b['trial']}")
    if name_top and top is not None and top in features:
        isolated = bool(features.at[b.name, top]) and not bool(features.at[a.name, top])
        if isolated:
            label += (f" (they differ in '{top}'" + (
                f", and also in {', '.join(repr(f) for f in differ)})" if differ
                else " and in no other feature)"))
    index, how = first_divergence(pass_events, fail_events)
    if index is None:
        return empty, None, f"{label}: the transcripts are the same step by step"
    where = "differ in kind" if how == "kind" else "take the same steps; the answers differ"
    return steps_around(pass_events, fail_events, index), index, (
        f"{label}: they {where} first at step {index}"
    )
