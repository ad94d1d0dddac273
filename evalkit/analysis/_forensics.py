"""Flip forensics: why a case passes in some trials and fails in others (``evalkit explain``).

For one case of a run (each of its conditions and providers on its own, since trials repeat
only within one work-item cell), or for the same case in two runs, :func:`explain` lines up
the trials side by side, finds what separates the passing trials from the failing ones, and
aligns a passing and a failing transcript at their first divergence:

- ``trials``: one row per item (pass/fail, score, status, skill loaded, tool calls, tokens,
  latency, primary cause and reason line from :func:`evalkit.results.item_reasons`);
- ``components``: each scoring component's pass/fail per item;
- ``distinguishing``: features of a trial (a component failing, the skill loaded or not, the
  skill loaded, the status) ranked by how well they separate failing from passing trials, each
  with a sentence such as "fails exactly when the skill is not loaded: 4 of 4 failing trials,
  none of the 3 passing";
- ``divergence``: a passing and a failing transcript step by step around the first step where
  they differ in kind (a skill load, a tool call, an answer), or where the answers differ when
  the steps are the same.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from evalkit._display import rich_html
from evalkit._skill_load import skill_loaded
from evalkit.errors import InputError
from evalkit.results import (
    item_reasons,
    load_results,
    read_scores,
    read_transcripts,
    resolve_run_dir,
)

#: Most steps of each transcript shown around the first divergence.
STEPS_AROUND = 3
#: Characters of a step's content shown.
STEP_CHARS = 300
_CONTEXT = frozenset(
    {"total", "evidence_completeness", "report_completeness", "taxonomy_usage", "skill_trigger"}
)

TRIAL_COLUMNS = (
    "side", "item_key", "condition", "provider", "trial", "passed", "score", "status",
    "skill_loaded", "inferred_skill", "tool_calls", "input_tokens", "output_tokens",
    "latency_s", "cause", "reason",
)
DISTINGUISHING_COLUMNS = (
    "feature", "failing_with", "failing", "passing_with", "passing", "separation", "sentence",
)
DIVERGENCE_COLUMNS = ("step", "passing_kind", "passing", "failing_kind", "failing")


@dataclass(frozen=True)
class CellExplanation:
    """The explanation of one case in one condition and provider.

    Attributes:
        case_id: The case.
        condition: Its condition.
        provider: Its provider.
        summary: One line: how many trials pass, on which side.
        trials: One row per item (:data:`TRIAL_COLUMNS`).
        components: ``item_key, component, passed`` of every scoring component.
        distinguishing: Features that separate failing from passing trials, best first
            (:data:`DISTINGUISHING_COLUMNS`); empty when every trial passes or every trial
            fails.
        divergence: The two transcripts around their first divergence
            (:data:`DIVERGENCE_COLUMNS`); empty without a flip or transcripts.
        first_divergence: Index (0-based) of the first step that differs, or None.
        divergence_note: What was aligned (which trials) or why nothing was.
    """

    case_id: str
    condition: str
    provider: str
    summary: str
    trials: pd.DataFrame
    components: pd.DataFrame
    distinguishing: pd.DataFrame
    divergence: pd.DataFrame
    first_divergence: int | None
    divergence_note: str

    @property
    def flips(self) -> bool:
        """Whether some trials pass and others fail."""
        passed = self.trials["passed"].astype(bool)
        return bool(passed.any() and not passed.all())

    def to_dict(self) -> dict[str, Any]:
        """The JSON of this cell (frames as lists of records, NaN as None)."""
        return {
            "case_id": self.case_id,
            "condition": self.condition,
            "provider": self.provider,
            "summary": self.summary,
            "flips": self.flips,
            "trials": _records(self.trials),
            "components": _records(self.components),
            "distinguishing": _records(self.distinguishing),
            "first_divergence": self.first_divergence,
            "divergence_note": self.divergence_note,
            "divergence": _records(self.divergence),
        }


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain` found for one case (``evalkit explain --json`` is ``to_dict()``).

    Attributes:
        case_id: The case.
        run: The run explained (a path or run id; ``"<frame>"`` for a DataFrame).
        baseline: The baseline run, or None within one run.
        cells: One explanation per condition and provider.
        notes: What could not be read (scores, transcripts) and why.
    """

    case_id: str
    run: str
    baseline: str | None
    cells: tuple[CellExplanation, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def trials(self) -> pd.DataFrame:
        """Every cell's trials in one frame."""
        return pd.concat([c.trials for c in self.cells], ignore_index=True)

    @property
    def distinguishing(self) -> pd.DataFrame:
        """Every cell's distinguishing features, with ``condition`` and ``provider``."""
        return pd.concat(
            [c.distinguishing.assign(condition=c.condition, provider=c.provider)
             for c in self.cells],
            ignore_index=True,
        )

    def _repr_html_(self) -> str | None:
        """Rich display in Jupyter (``evalkit.report``)."""
        return rich_html(self)

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit explain --json`` object."""
        return {
            "case_id": self.case_id,
            "run": self.run,
            "baseline": self.baseline,
            "notes": list(self.notes),
            "cells": [c.to_dict() for c in self.cells],
        }


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for record in frame.to_dict("records"):
        out.append({str(k): _plain(v) for k, v in record.items()})
    return out


def _plain(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, float) and value != value:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


# -- reading ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Side:
    """One run's items of the case, with what could be read beside them."""

    name: str
    label: str
    rows: pd.DataFrame
    scores: pd.DataFrame | None
    run_dir: str | None


def _side(
    data: pd.DataFrame | str | os.PathLike[str],
    runs_dir: str | os.PathLike[str],
    name: str,
    what: str,
) -> _Side:
    rows = load_results(data, runs_dir, what=what)
    if isinstance(data, pd.DataFrame):
        run_dir = data.attrs.get("run_dir")
        label = str(run_dir) if run_dir else "<frame>"
    else:
        run_dir = str(resolve_run_dir(data, runs_dir))
        label = str(data)
    scores = read_scores(run_dir) if run_dir else None
    return _Side(name, label, rows, scores, str(run_dir) if run_dir else None)


def _pick(
    rows: pd.DataFrame, column: str, value: str | None, what: str, where: str
) -> pd.DataFrame:
    if value is None or column not in rows.columns:
        return rows
    chosen = rows[rows[column].astype(str) == value]
    if chosen.empty:
        known = sorted(rows[column].astype(str).unique())
        raise InputError(
            f"{where}: no {what} {value!r} for this case; it has {', '.join(map(repr, known))}"
        )
    return chosen


def _case_rows(side: _Side, case: str) -> pd.DataFrame:
    rows = side.rows[side.rows["case_id"].astype(str) == case]
    if rows.empty:
        known = sorted(side.rows["case_id"].astype(str).unique())
        shown = ", ".join(repr(k) for k in known[:8]) + (
            f" and {len(known) - 8} more" if len(known) > 8 else ""
        )
        raise InputError(
            f"{side.label}: no case {case!r} (field case_id); the run has {shown}. "
            "List them with evalkit cases list SUITE or read_run(RUN)['case_id'].unique()."
        )
    return rows


# -- features -----------------------------------------------------------------------------


def _events(record: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    response = record.get("response") if record else None
    events = response.get("events") if isinstance(response, Mapping) else None
    return [e for e in events if isinstance(e, Mapping)] if isinstance(events, list) else []


def _feature_table(trials: pd.DataFrame, components: pd.DataFrame) -> pd.DataFrame:
    """One boolean column per feature of a trial, indexed like ``trials``."""
    features: dict[str, pd.Series] = {}
    index = trials.index
    if "skill_loaded" in trials and trials["skill_loaded"].notna().any():
        loaded = trials["skill_loaded"].fillna(False).astype(bool)
        features["the skill is not loaded"] = ~loaded
        features["a skill is loaded"] = loaded
    if "inferred_skill" in trials:
        for skill in sorted(trials["inferred_skill"].dropna().astype(str).unique()):
            if skill != "none":
                features[f"the agent loads {skill}"] = trials["inferred_skill"].astype(str) == skill
    for status in sorted(trials["status"].dropna().astype(str).unique()):
        if status != "ok":
            features[f"the item ends in {status}"] = trials["status"].astype(str) == status
    if not components.empty:
        failing = components[~components["passed"].astype("boolean").fillna(False).astype(bool)]
        for component in sorted(components["component"].unique()):
            keys = set(failing.loc[failing["component"] == component, "item_key"])
            features[f"{component} fails"] = trials["item_key"].isin(keys)
    return pd.DataFrame(features, index=index)


def _sentence(
    feature: str, failing_with: int, failing: int, passing_with: int, passing: int
) -> str:
    counts = (
        f"{failing_with} of {failing} failing trial{'s' if failing != 1 else ''}, "
        + (f"none of the {passing} passing" if passing_with == 0 else
           f"{passing_with} of {passing} passing")
    )
    if failing_with == failing and passing_with == 0:
        return f"fails exactly when {feature}: {counts}"
    return f"fails more often when {feature}: {counts}"


def _distinguishing(trials: pd.DataFrame, components: pd.DataFrame) -> pd.DataFrame:
    passed = trials["passed"].fillna(False).astype(bool)
    n_fail, n_pass = int((~passed).sum()), int(passed.sum())
    if n_fail == 0 or n_pass == 0:
        return pd.DataFrame(columns=list(DISTINGUISHING_COLUMNS))
    table = _feature_table(trials, components)
    rows = []
    for feature in table.columns:
        values = table[feature].astype(bool)
        failing_with = int((values & ~passed).sum())
        passing_with = int((values & passed).sum())
        separation = failing_with / n_fail - passing_with / n_pass
        if separation <= 0:
            continue
        rows.append((feature, failing_with, n_fail, passing_with, n_pass, separation,
                     _sentence(feature, failing_with, n_fail, passing_with, n_pass)))
    out = pd.DataFrame(rows, columns=list(DISTINGUISHING_COLUMNS))
    # at equal separation what happens first explains more: routing, then the status, then
    # the scoring components it led to
    upstream = out["feature"].map(
        lambda f: 0 if "skill" in f or "loads" in f else 1 if f.startswith("the item") else 2
    )
    return (
        out.assign(_upstream=upstream)
        .sort_values(["separation", "_upstream", "feature"], ascending=[False, True, True],
                     kind="stable")
        .drop(columns="_upstream")
        .reset_index(drop=True)
    )


# -- divergence ---------------------------------------------------------------------------


def _signature(event: Mapping[str, Any]) -> str:
    skill = skill_loaded(event)
    if skill is not None:
        return f"skill load · {skill}"
    kind = str(event.get("kind", ""))
    name = str(event.get("name", "") or "")
    return f"{kind} · {name}" if name and kind in ("tool_call", "tool_result") else kind


def _clip(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= STEP_CHARS else text[: STEP_CHARS - 1] + "…"


def _align(passing: list[Mapping[str, Any]], failing: list[Mapping[str, Any]]) -> tuple[
    int | None, str
]:
    """The first step that differs in kind (or, the kinds all equal, in an answer's text)."""
    for index in range(max(len(passing), len(failing))):
        kind_a = _signature(passing[index]) if index < len(passing) else None
        kind_b = _signature(failing[index]) if index < len(failing) else None
        if kind_a != kind_b:
            return index, "kind"
    for index, (a, b) in enumerate(zip(passing, failing, strict=False)):
        if str(a.get("kind")) == "assistant" and str(a.get("content")) != str(b.get("content")):
            return index, "answer"
    return None, ""


def _divergence(
    trials: pd.DataFrame, top: str | None, features: pd.DataFrame, records: Mapping[str, Any]
) -> tuple[pd.DataFrame, int | None, str]:
    empty = pd.DataFrame(columns=list(DIVERGENCE_COLUMNS))
    passed = trials["passed"].fillna(False).astype(bool)
    if passed.all() or not passed.any():
        return empty, None, "no flip: nothing to align"
    with_record = trials["item_key"].isin(records.keys())
    failing = trials[~passed & with_record]
    passing = trials[passed & with_record]
    if failing.empty or passing.empty:
        return empty, None, "no transcript for a passing and a failing trial"
    if top is not None and top in features:
        marked = features.loc[failing.index, top].astype(bool)
        failing = failing[marked] if marked.any() else failing
        clean = ~features.loc[passing.index, top].astype(bool)
        passing = passing[clean] if clean.any() else passing
    a, b = passing.iloc[0], failing.iloc[0]
    pass_events = _events(records[str(a["item_key"])])
    fail_events = _events(records[str(b["item_key"])])
    label = (f"passing {a['side']} trial {a['trial']} against failing {b['side']} trial "
             f"{b['trial']}")
    index, how = _align(pass_events, fail_events)
    if index is None:
        return empty, None, f"{label}: the transcripts are the same step by step"
    start, stop = max(0, index - 1), index + STEPS_AROUND
    rows = []
    for step in range(start, stop):
        p = pass_events[step] if step < len(pass_events) else None
        f = fail_events[step] if step < len(fail_events) else None
        if p is None and f is None:
            break
        rows.append((
            step,
            _signature(p) if p is not None else "(ended)",
            _clip(p.get("content", "")) if p is not None else "",
            _signature(f) if f is not None else "(ended)",
            _clip(f.get("content", "")) if f is not None else "",
        ))
    where = "differ in kind" if how == "kind" else "take the same steps; the answers differ"
    note = f"{label}: they {where} first at step {index}"
    return pd.DataFrame(rows, columns=list(DIVERGENCE_COLUMNS)), index, note


# -- assembly -----------------------------------------------------------------------------


def _trials(side: _Side, rows: pd.DataFrame, records: Mapping[str, Any]) -> pd.DataFrame:
    reasons = item_reasons(rows, side.scores).set_index("item_key")
    out = pd.DataFrame({"side": side.name, "item_key": rows["item_key"].astype(str)})
    for column in ("condition", "provider", "trial", "passed", "score", "status",
                   "skill_loaded", "inferred_skill", "input_tokens", "output_tokens",
                   "latency_s"):
        out[column] = rows[column].to_numpy() if column in rows else None
    out["tool_calls"] = [
        sum(1 for e in _events(records.get(k)) if str(e.get("kind")) == "tool_call")
        if k in records else None
        for k in out["item_key"]
    ]
    out["cause"] = reasons.loc[out["item_key"], "cause"].to_numpy()
    out["reason"] = reasons.loc[out["item_key"], "reason"].to_numpy()
    return out[list(TRIAL_COLUMNS)].reset_index(drop=True)


def _components(side: _Side, keys: pd.Series) -> pd.DataFrame:
    if side.scores is None or side.scores.empty:
        return pd.DataFrame(columns=["item_key", "component", "passed"])
    chosen = side.scores[side.scores["item_key"].isin(set(keys))]
    chosen = chosen[~chosen["component"].isin(_CONTEXT)]
    return chosen[["item_key", "component", "passed"]].reset_index(drop=True)


def _summary(trials: pd.DataFrame) -> str:
    parts = []
    for side, group in trials.groupby("side", sort=False):
        n, passes = len(group), int(group["passed"].fillna(False).astype(bool).sum())
        parts.append(f"{side}: {passes} of {n} trial{'s' if n != 1 else ''} pass")
    passed = trials["passed"].fillna(False).astype(bool)
    mixed = passed.groupby(trials["side"]).agg(lambda p: bool(p.any() and not p.all()))
    if mixed.any():
        head = "flips"
    elif passed.any() and not passed.all():
        head = "changed between the runs"
    else:
        head = "no flip: every trial passes" if passed.all() else "no flip: every trial fails"
    return f"{head} ({'; '.join(parts)})"


def explain(
    run: pd.DataFrame | str | os.PathLike[str],
    case: str,
    *,
    baseline: pd.DataFrame | str | os.PathLike[str] | None = None,
    condition: str | None = None,
    provider: str | None = None,
    runs_dir: str | os.PathLike[str] = "runs",
) -> Explanation:
    """Why a case flips: its trials, what separates passes from failures, where they part.

    The trials are lined up side by side, the features that separate failing from passing
    trials ranked, and a passing and a failing transcript aligned at their first divergence.
    Trials repeat only within one work-item cell, so each condition and provider of the case
    is explained on its own (``condition`` and ``provider`` narrow them). With ``baseline``,
    each cell holds the case's trials in both runs (``side`` tells them apart): what separates
    the candidate's failures from the baseline's passes, or the other way round.

    Args:
        run: A run directory or run id, or a frame from :func:`evalkit.read_run` (its
            ``attrs["run_dir"]`` locates the scores and transcripts; a frame without it is
            explained from its rows alone).
        case: The case id.
        baseline: A second run to compare the case with, or None.
        condition: Only this condition.
        provider: Only this provider.
        runs_dir: Where run ids are looked up.

    Returns:
        :class:`Explanation`, one :class:`CellExplanation` per condition and provider.

    Raises:
        InputError: Unknown case, condition or provider (the message lists the known ones).
        RunNotFoundError: A run does not exist.

    Examples:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"item_key": ["a", "b"], "case_id": "q", "condition": "none",
        ...     "provider": "p", "trial": [0, 1], "passed": [True, False], "status": "ok",
        ...     "skill_loaded": [True, False]})
        >>> explain(rows, "q").cells[0].distinguishing["sentence"].iloc[0]
        'fails exactly when the skill is not loaded: 1 of 1 failing trial, none of the 1 passing'
    """
    sides = [_side(run, runs_dir, "candidate" if baseline is not None else "run", "run")]
    if baseline is not None:
        sides.insert(0, _side(baseline, runs_dir, "baseline", "baseline"))
    notes = [
        f"{s.label}: no scores recorded (components and reasons unavailable)"
        for s in sides if s.scores is None or s.scores.empty
    ]
    picked = []
    for side in sides:
        rows = _case_rows(side, str(case))
        rows = _pick(rows, "condition", condition, "condition", side.label)
        rows = _pick(rows, "provider", provider, "provider", side.label)
        picked.append((side, rows))
    cell_keys = [c for c in ("condition", "provider") if all(c in r for _, r in picked)]
    frames = []
    records: dict[str, Any] = {}
    components = []
    for side, rows in picked:
        if side.run_dir is not None:
            found = read_transcripts(side.run_dir, rows["item_key"], rows=side.rows)
        else:
            found = {}
        if side.run_dir is not None and not found:
            notes.append(f"{side.label}: no transcript for this case")
        records.update(found)
        frames.append(_trials(side, rows, found))
        components.append(_components(side, rows["item_key"].astype(str)))
    trials = pd.concat(frames, ignore_index=True)
    every_component = pd.concat(components, ignore_index=True)
    cells = []
    groups = trials.groupby(cell_keys, sort=True, dropna=False) if cell_keys else [((), trials)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        values = dict(zip(cell_keys, key, strict=True))
        group = group.sort_values(["side", "trial"], kind="stable").reset_index(drop=True)
        comp = every_component[every_component["item_key"].isin(set(group["item_key"]))]
        distinguishing = _distinguishing(group, comp)
        features = _feature_table(group, comp)
        top = str(distinguishing["feature"].iloc[0]) if len(distinguishing) else None
        divergence, first, note = _divergence(group, top, features, records)
        cells.append(
            CellExplanation(
                case_id=str(case),
                condition=str(values.get("condition", "")),
                provider=str(values.get("provider", "")),
                summary=_summary(group),
                trials=group,
                components=comp.reset_index(drop=True),
                distinguishing=distinguishing,
                divergence=divergence,
                first_divergence=first,
                divergence_note=note,
            )
        )
    return Explanation(
        case_id=str(case),
        run=sides[-1].label,
        baseline=sides[0].label if baseline is not None else None,
        cells=tuple(cells),
        notes=tuple(dict.fromkeys(notes)),
    )

