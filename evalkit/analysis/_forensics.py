"""Flip forensics: why a case passes in some trials and fails in others (``evalkit explain``).

For one case of a run (each of its conditions and providers on its own, since trials repeat
only within one work-item cell), or for the same case in two runs, :func:`explain` lines up
the trials side by side, finds what separates the passing trials from the failing ones, and
aligns a passing and a failing transcript at their first divergence:

- ``trials``: one row per item (pass/fail, score, status, skill loaded, tool calls, tokens,
  latency, primary cause and reason line from :func:`evalkit.results.item_reasons`, error
  class, the tools called);
- ``components``: each scoring component's pass/fail per item;
- ``distinguishing``: the causes, features of a trial (the skill loaded or not, the skill
  loaded, the status and error class, a tool called or not) ranked by how well they separate
  failing from passing trials (:mod:`evalkit.analysis._forensics_features`), each with a
  sentence such as "fails exactly when the skill is not loaded: 4 of 4 failing trials, none of
  the 3 passing";
- ``score_saw``: the scoring components that failed in the failing trials, ranked the same
  way: what the score saw, which restates the outcome rather than explaining it;
- ``chance``: whether the pass/fail split is more than the flip rate of the run's other cases
  makes likely, with the probability that chance alone gives it
  (:mod:`evalkit.analysis._forensics_chance`);
- ``divergence``: the passing and failing transcripts that isolate the top cause (they
  differ in it and as little else, routing first, as the trials allow), step by step around
  the first step where they differ in kind (a skill load, a tool call, an answer), or where
  the answers differ when the steps are the same (:mod:`evalkit.analysis._forensics_align`).

Between two runs an item key names the same work item on both sides, so every item is told
apart by ``(side, item_key)``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from evalkit._display import RichDisplay
from evalkit._settings import RUNS_DIR
from evalkit.analysis._forensics_align import (
    count_tool_calls,
    divergence,
    events_of,
    tools_called,
)
from evalkit.analysis._forensics_chance import ChanceCheck, chance_check, run_flip_rate
from evalkit.analysis._forensics_features import (
    distinguishing,
    feature_table,
    is_routing,
    restates_outcome,
    score_saw,
    trial_ids,
)
from evalkit.errors import InputError
from evalkit.results import (
    item_reasons,
    load_manifest,
    load_results,
    read_scores,
    read_transcripts,
    resolve_run_dir,
)

_CONTEXT = frozenset(
    {"total", "evidence_completeness", "report_completeness", "taxonomy_usage", "skill_trigger"}
)

TRIAL_COLUMNS = (
    "side", "item_key", "condition", "provider", "trial", "passed", "score", "status",
    "skill_loaded", "inferred_skill", "tool_calls", "input_tokens", "output_tokens",
    "latency_s", "cause", "reason", "error_class", "tools", "preloaded",
)

#: Condition modes that inject the skill up front: nothing for the agent to load.
_INJECTED = frozenset({"preloaded", "stale"})


@dataclass(frozen=True)
class CellExplanation:
    """The explanation of one case in one condition and provider.

    Attributes:
        case_id: The case.
        condition: Its condition.
        provider: Its provider.
        summary: One line: how many trials pass, on which side.
        trials: One row per item (:data:`TRIAL_COLUMNS`).
        components: ``side, item_key, component, passed`` of every scoring component.
        distinguishing: Causes that separate failing from passing trials, best first
            (:data:`DISTINGUISHING_COLUMNS`); empty when every trial passes or every trial
            fails.
        divergence: The two transcripts around their first divergence
            (:data:`DIVERGENCE_COLUMNS`); empty without a flip or transcripts.
        first_divergence: Index (0-based) of the first step that differs, or None.
        divergence_note: What was aligned (which trials) or why nothing was.
        score_saw: The scoring components that fail more often in the failing trials (the
            same columns as ``distinguishing``): what the score saw, not a cause.
        chance: Whether chance alone explains the pass/fail split.
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
    score_saw: pd.DataFrame
    chance: ChanceCheck

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
            "score_saw": _records(self.score_saw),
            "chance": self.chance.to_dict(),
            "first_divergence": self.first_divergence,
            "divergence_note": self.divergence_note,
            "divergence": _records(self.divergence),
        }


@dataclass(frozen=True)
class Explanation(RichDisplay):
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
    if value is None or value is pd.NA or value is pd.NaT:
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
    injected: frozenset[str] = frozenset(_INJECTED)


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
    return _Side(name, label, rows, scores, str(run_dir) if run_dir else None,
                 _injected_conditions(run_dir))


def _injected_conditions(run_dir: str | os.PathLike[str] | None) -> frozenset[str]:
    """The conditions that preload the skill: by the manifest's modes, else by their names."""
    manifest = load_manifest(run_dir) if run_dir else None
    conditions = manifest.conditions if manifest is not None and manifest.conditions else {}
    modes = {name: record.mode for name, record in conditions.items()}
    known = {name for name, mode in modes.items() if mode in _INJECTED}
    return frozenset(known | {name for name in _INJECTED if modes.get(name) is None})


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


# -- assembly -----------------------------------------------------------------------------


def _trials(side: _Side, rows: pd.DataFrame, records: Mapping[str, Any]) -> pd.DataFrame:
    reasons = item_reasons(rows, side.scores).set_index("item_key")
    out = pd.DataFrame({"side": side.name, "item_key": rows["item_key"].astype(str)})
    for column in ("condition", "provider", "trial", "passed", "score", "status",
                   "skill_loaded", "inferred_skill", "input_tokens", "output_tokens",
                   "latency_s", "error_class"):
        out[column] = rows[column].to_numpy() if column in rows else None
    events = {k: events_of(records[k]) for k in out["item_key"] if k in records}
    out["tool_calls"] = [count_tool_calls(events[k]) if k in events else None
                         for k in out["item_key"]]
    out["tools"] = [", ".join(sorted(tools_called(events[k]))) if k in events else None
                    for k in out["item_key"]]
    for column in ("tool_calls", "input_tokens", "output_tokens"):
        # counts stay whole numbers beside an item that has none (an error row)
        out[column] = pd.Series(
            [None if pd.isna(v) else int(v) for v in out[column]], index=out.index, dtype=object
        )
    out["preloaded"] = (
        out["condition"].astype(str).isin(side.injected).to_numpy()
        if "condition" in rows else False
    )
    out["cause"] = reasons.loc[out["item_key"], "cause"].to_numpy()
    out["reason"] = reasons.loc[out["item_key"], "reason"].to_numpy()
    return out[list(TRIAL_COLUMNS)].reset_index(drop=True)


def _components(side: _Side, keys: pd.Series) -> pd.DataFrame:
    if side.scores is None or side.scores.empty:
        return pd.DataFrame(columns=["side", "item_key", "component", "passed"])
    chosen = side.scores[side.scores["item_key"].isin(set(keys))]
    chosen = chosen[~chosen["component"].isin(_CONTEXT)]
    return chosen[["item_key", "component", "passed"]].assign(side=side.name)[
        ["side", "item_key", "component", "passed"]
    ].reset_index(drop=True)


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
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
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
        f"{s.label}: no run directory (a frame from evalkit.read_run records it in "
        "attrs['run_dir']): components, reasons and transcripts unavailable"
        if s.run_dir is None else
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
    records: dict[tuple[str, str], Any] = {}
    components = []
    for side, rows in picked:
        if side.run_dir is not None:
            found = read_transcripts(side.run_dir, rows["item_key"], rows=side.rows)
        else:
            found = {}
        if side.run_dir is not None and not found:
            notes.append(f"{side.label}: no transcript for this case")
        records.update({(side.name, str(key)): record for key, record in found.items()})
        frames.append(_trials(side, rows, found))
        components.append(_components(side, rows["item_key"].astype(str)))
    trials = pd.concat(frames, ignore_index=True)
    rate, pairs = run_flip_rate([side.rows for side in sides], str(case))
    every_component = pd.concat(components, ignore_index=True)
    cells = []
    groups = trials.groupby(cell_keys, sort=True, dropna=False) if cell_keys else [((), trials)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        values = dict(zip(cell_keys, key, strict=True))
        group = group.sort_values(["side", "trial"], kind="stable").reset_index(drop=True)
        comp = every_component[trial_ids(every_component).isin(trial_ids(group))]
        features = feature_table(group, comp, records)
        separating = distinguishing(group, features)
        saw = score_saw(group, features)
        top = next((str(t["feature"].iloc[0]) for t in (separating, saw) if len(t)), None)
        compared = [f for f in features.columns if f == top or not restates_outcome(str(f))]
        steps, first, note = divergence(
            group, top, features[compared], records,
            routing=frozenset(f for f in compared if is_routing(str(f))),
            name_top=top is not None and not restates_outcome(top),
        )
        cells.append(
            CellExplanation(
                case_id=str(case),
                condition=str(values.get("condition", "")),
                provider=str(values.get("provider", "")),
                summary=_summary(group),
                trials=group,
                components=comp.reset_index(drop=True),
                distinguishing=separating,
                divergence=steps,
                first_divergence=first,
                divergence_note=note,
                score_saw=saw,
                chance=chance_check(group, rate, pairs, two_runs=baseline is not None),
            )
        )
    return Explanation(
        case_id=str(case),
        run=sides[-1].label,
        baseline=sides[0].label if baseline is not None else None,
        cells=tuple(cells),
        notes=tuple(dict.fromkeys(notes)),
    )

