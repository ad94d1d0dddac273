"""``evalkit export``: an evalkit run in skill-creator's formats.

Two formats, each one entry of :data:`EXPORTERS`:

- ``skill-creator``: its ``benchmark.json``. The viewer reads it by exact field names
  (``configuration``, not ``config``; ``pass_rate`` nested under ``result``); the export writes
  those fields with the types the schema gives (``eval_id`` a number) and adds what
  skill-creator lacks, a paired verdict with its interval, under the extra top-level key
  ``evalkit``, which the viewer ignores;
- ``skill-creator-workspace``: the directory skill-creator's own tools read
  (:mod:`evalkit.interop._export_workspace`).

Mapping (the inverse of ``evalkit import --format skill-creator``): the baseline condition
(default ``none``) is ``without_skill``, the skill condition (default ``preloaded``) is
``with_skill``; trial N is ``run_number`` N + 1. ``eval_id`` is a number: a case id that is a
whole number, or ends in one (``eval-3``), keeps it, the others are numbered after the
largest, in natural order (``trigger-2`` before ``trigger-10``); ``eval_name`` is the case id.

A run's expectations are its graded checks, from ``scores.parquet``: each judged statement
(``expectation:N``, ``rubric:N``) with its text and the judge's evidence, each deterministic
scorer (patterns, verifier, ...) as a statement of what it checks with its detail, and, in a
routing case (a trigger query), whether the skill was routed right. The scorers' ``total`` and
an unweighted ``skill_trigger`` are summaries, not expectations, and are not written. A judged
statement nobody graded is left out and named in the run's ``notes``. An item without score
rows gets one expectation, ``passed``, from its result row. Each run also carries evalkit's
own outcome of the item under ``evalkit`` (``case_id``, ``condition``, ``trial``, ``status``,
``passed``, ``score``), so that importing the export gives back the run's pass rates exactly.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._plain import plain_fields
from evalkit._settings import RUNS_DIR
from evalkit._version import __version__
from evalkit.analysis import compare
from evalkit.errors import InputError
from evalkit.interop._export_job import ExportedRun, ExportJob
from evalkit.results import load_manifest, load_results, read_scores, resolve_run_dir

_WITHOUT, _WITH = "without_skill", "with_skill"
_NUMBER = re.compile(r"^(?:.*?-)?(\d+)$")
_DIGITS = re.compile(r"(\d+)")
_SUMMARIES = ("total",)

#: What each deterministic scorer checks, as skill-creator's expectation text.
CHECK_TEXT: dict[str, str] = {
    "expected_patterns": "The answer matches every expected pattern",
    "forbidden_patterns": "The answer recommends none of the forbidden patterns",
    "anti_patterns": "The answer shows none of the anti-patterns",
    "workflow": "The workflow steps appear, in order",
    "verifier": "The verifier's checks pass on the workspace",
    "artifacts": "Every required artifact exists",
    "skill_trigger": "The agent routed to the expected skill",
}


@dataclass(frozen=True)
class ExportResult:
    """Summary of an export.

    Attributes:
        path: The file (or, for a workspace, the directory) written.
        format: The format written.
        runs: Entries written (one per item of the two conditions).
        verdict: evalkit's paired verdict between the two conditions (None when there are no
            paired cases).
    """

    path: Path
    format: str
    runs: int
    verdict: str | None

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit export --json`` object."""
        return plain_fields(self)


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key that orders numbers by value: ``trigger-2`` before ``trigger-10``.

    Examples:
        >>> sorted(["trigger-10", "trigger-2", "eval-1"], key=natural_key)
        ['eval-1', 'trigger-2', 'trigger-10']
    """
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in _DIGITS.split(text) if p)


def eval_ids(case_ids: list[str]) -> dict[str, int]:
    """A number per case id (see the module docstring).

    Examples:
        >>> eval_ids(["eval-1", "eval-csv", "7", "trigger-1"])
        {'7': 7, 'eval-1': 1, 'eval-csv': 8, 'trigger-1': 9}
    """
    ordered = sorted(set(case_ids), key=natural_key)
    numbers: dict[str, int] = {}
    taken: set[int] = set()
    for case_id in ordered:
        match = _NUMBER.match(case_id)
        if match and int(match.group(1)) not in taken:
            numbers[case_id] = int(match.group(1))
            taken.add(numbers[case_id])
    following = max(taken, default=0)
    for case_id in ordered:
        if case_id not in numbers:
            following += 1
            numbers[case_id] = following
    return dict(sorted(numbers.items(), key=lambda kv: natural_key(kv[0])))


def _stats(values: list[float]) -> dict[str, float]:
    """skill-creator's summary of one metric: mean, sample stddev, min, max (4 decimals)."""
    if not values:
        return {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    stddev = statistics.stdev(values) if len(values) > 1 else 0.0
    return {
        "mean": round(statistics.fmean(values), 4),
        "stddev": round(stddev, 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def _number(value: Any) -> float:
    return 0.0 if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _expectations(
    row: dict[Any, Any], scores: pd.DataFrame | None
) -> tuple[list[dict[str, Any]], int]:
    """The run's expectations, and how many judged statements were left ungraded."""
    if scores is None or not len(scores):
        evidence = row.get("error_message") or f"status {row.get('status')}"
        return [{"text": "the item passed", "passed": bool(row["passed"]),
                 "evidence": evidence}], 0
    records = scores.to_dict("records")
    components = {str(s["component"]) for s in records}
    routing = not (components - {"skill_trigger", *_SUMMARIES})
    out: list[dict[str, Any]] = []
    ungraded = 0
    for s in records:
        component = str(s["component"])
        if component in _SUMMARIES or (component == "skill_trigger" and not routing):
            continue
        if not _present(s["passed"]):
            ungraded += 1
            continue
        statement = s.get("expectation")
        text = str(statement) if _present(statement) else CHECK_TEXT.get(component, component)
        detail = s.get("detail")
        out.append({"text": text, "passed": bool(s["passed"]),
                    "evidence": str(detail) if _present(detail) else ""})
    return out, ungraded


def _entry(
    row: dict[Any, Any], configuration: str, eval_id: int, scores: pd.DataFrame | None
) -> dict[str, Any]:
    expectations, ungraded = _expectations(row, scores)
    passed = sum(e["passed"] for e in expectations)
    total = len(expectations)
    tokens = int(_number(row.get("input_tokens")) + _number(row.get("output_tokens")))
    notes = [] if row.get("status") == "ok" else [f"{row['status']}: {row.get('error_message')}"]
    if ungraded:
        notes.append(f"{ungraded} judged expectation(s) not graded (no outcome yet); "
                     "grade them with evalkit judge RUN --judge-provider NAME")
    score = row.get("score")
    return {
        "eval_id": eval_id,
        "eval_name": str(row["case_id"]),
        "configuration": configuration,
        "run_number": int(row["trial"]) + 1,
        "result": {
            "pass_rate": round(passed / total, 4) if total else 0.0,
            "passed": passed,
            "failed": total - passed,
            "total": total,
            "time_seconds": float(_number(row.get("latency_s"))),
            "tokens": tokens,
            "tool_calls": int(_number(row.get("n_steps"))),
            "errors": 0 if row.get("status") in ("ok", "ungraded") else 1,
        },
        "expectations": expectations,
        "notes": notes,
        "evalkit": {
            "case_id": str(row["case_id"]),
            "condition": str(row["condition"]),
            "trial": int(row["trial"]),
            "status": str(row.get("status") or "ok"),
            "passed": bool(row["passed"]),
            "score": float(score) if score is not None and _present(score) else None,
        },
    }


def _markdown(events: list[dict[str, Any]], prompt: str) -> str:
    lines = ["## Eval Prompt", "", prompt.strip(), "", "## Transcript", ""]
    for event in events:
        name = f" `{event['name']}`" if event.get("name") else ""
        lines += [f"### {event.get('kind', 'event')}{name}", "", str(event.get("content", "")), ""]
    return "\n".join(lines)


def exported_runs(
    run_dir: Path, results: pd.DataFrame, configuration: dict[str, str]
) -> list[ExportedRun]:
    """The items of the exported conditions, in natural case order, with their transcripts."""
    from evalkit.results import read_transcripts

    scores = read_scores(run_dir)
    by_item = {key: group for key, group in scores.groupby("item_key", sort=False)}
    chosen = results[results["condition"].isin(list(configuration))]
    numbers = eval_ids([str(c) for c in chosen["case_id"]])
    rows = sorted(chosen.to_dict("records"), key=lambda r: (
        natural_key(str(r["case_id"])), configuration[r["condition"]] != _WITH, int(r["trial"])))
    transcripts = read_transcripts(run_dir, [str(r["item_key"]) for r in rows], rows=chosen)
    out = []
    for row in rows:
        entry = _entry(row, configuration[row["condition"]], numbers[str(row["case_id"])],
                       by_item.get(row["item_key"]))
        events = transcripts.get(str(row["item_key"]), {}).get("response", {}).get("events", [])
        prompt = next((str(e.get("content", "")) for e in events if e.get("kind") == "user"), "")
        answer = "\n".join(str(e.get("content", "")) for e in events
                           if e.get("kind") == "assistant")
        out.append(ExportedRun(entry, {str(k): v for k, v in row.items()}, prompt, answer,
                               _markdown(events, prompt)))
    return out


def run_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """skill-creator's ``run_summary``: mean, stddev, min, max per configuration, and delta."""
    summary: dict[str, Any] = {}
    for configuration in (_WITH, _WITHOUT):
        chosen = [r["result"] for r in runs if r["configuration"] == configuration]
        summary[configuration] = {
            metric: _stats([float(r[metric]) for r in chosen])
            for metric in ("pass_rate", "time_seconds", "tokens")
        }
    with_, without = summary[_WITH], summary[_WITHOUT]
    summary["delta"] = {
        "pass_rate": f"{with_['pass_rate']['mean'] - without['pass_rate']['mean']:+.2f}",
        "time_seconds": f"{with_['time_seconds']['mean'] - without['time_seconds']['mean']:+.1f}",
        "tokens": f"{with_['tokens']['mean'] - without['tokens']['mean']:+.0f}",
    }
    return summary


def write_benchmark(job: ExportJob) -> Path:
    """Write ``benchmark.json`` (format ``skill-creator``).

    Returns:
        The file written.
    """
    entries = [r.entry for r in job.runs]
    benchmark = {
        "metadata": job.metadata,
        "runs": entries,
        "run_summary": run_summary(entries),
        "notes": [
            f"exported by evalkit {__version__} from run {job.run_dir.name}: "
            f"{job.evalkit['baseline_condition']} is without_skill, "
            f"{job.evalkit['skill_condition']} is with_skill; the paired verdict is under "
            "'evalkit'"
        ],
        "evalkit": job.evalkit,
    }
    job.output.parent.mkdir(parents=True, exist_ok=True)
    job.output.write_text(json.dumps(benchmark, indent=2) + "\n", encoding="utf-8")
    return job.output


def _write_workspace(job: ExportJob) -> Path:
    from evalkit.interop._export_workspace import write_workspace

    return write_workspace(job)


#: Format name -> exporter. A new format is one line here.
EXPORTERS: dict[str, Callable[[ExportJob], Path]] = {
    "skill-creator": write_benchmark,
    "skill-creator-workspace": _write_workspace,
}

#: The formats ``evalkit export`` writes.
EXPORT_FORMATS: tuple[str, ...] = tuple(EXPORTERS)


def export_run(
    run: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    format: str = "skill-creator",
    baseline: str = "none",
    skill: str = "preloaded",
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
) -> ExportResult:
    """Write a run in a skill-creator format (``evalkit export``).

    Args:
        run: A run directory or run id.
        output: The file (``skill-creator``) or directory (``skill-creator-workspace``,
            which must not exist or be empty) to write.
        format: One of :data:`EXPORT_FORMATS`.
        baseline: The condition written as ``without_skill``.
        skill: The condition written as ``with_skill``.
        runs_dir: Where run ids are looked up.

    Returns:
        An :class:`ExportResult`.

    Raises:
        RunNotFoundError: The run does not exist.
        InputError: Unknown format, a condition the run does not hold, or a workspace
            directory that is not empty.
    """
    if format not in EXPORTERS:
        raise InputError(
            f"The value for `format` must be one of {list(EXPORT_FORMATS)}, but {format!r} "
            "was passed."
        )
    run_dir = resolve_run_dir(run, runs_dir)
    results = load_results(run_dir, runs_dir)
    missing = [c for c in (baseline, skill) if c not in set(results["condition"])]
    if missing:
        raise InputError(
            f"{run_dir}: no items in condition(s) {missing}; the run holds "
            f"{sorted(set(results['condition']))}: pick them with --baseline and --skill"
        )
    runs = exported_runs(run_dir, results, {baseline: _WITHOUT, skill: _WITH})
    manifest = load_manifest(run_dir)
    verdict = compare(results, conditions=(baseline, skill)).to_dict()
    chosen = results[results["condition"].isin([baseline, skill])]
    models = sorted({str(m) for m in chosen["model"].dropna()})
    metadata = {
        "skill_name": (manifest.suite if manifest is not None else "") or run_dir.name,
        "skill_path": "",
        "executor_model": ", ".join(models) or str(chosen["provider"].iloc[0]),
        "analyzer_model": "",
        "timestamp": manifest.created_at if manifest is not None else "",
        "evals_run": sorted({r.entry["eval_id"] for r in runs}),
        "runs_per_configuration": int(chosen["trial"].max()) + 1,
    }
    block = {
        "run_id": run_dir.name,
        "evalkit_version": __version__,
        "baseline_condition": baseline,
        "skill_condition": skill,
        "paired_comparison": verdict,
    }
    path = EXPORTERS[format](ExportJob(run_dir, runs, metadata, block, Path(output)))
    return ExportResult(path=path, format=format, runs=len(runs), verdict=verdict["verdict"])
