"""``evalkit export``: an evalkit run in another tool's format (skill-creator's benchmark.json).

skill-creator's viewer reads ``benchmark.json`` by exact field names (``configuration``, not
``config``; ``pass_rate`` nested under ``result``). The export writes those fields with the
types the viewer expects and adds what skill-creator lacks, a paired verdict with its
interval, under the extra top-level key ``evalkit``, which the viewer ignores.

Mapping (the inverse of ``evalkit import --format skill-creator``): the baseline condition
(default ``none``) is ``without_skill``, the skill condition (default ``preloaded``) is
``with_skill``; trial N is ``run_number`` N + 1; a case id that is a whole number becomes an
integer ``eval_id``. A run's expectations are its ``scores.parquet`` rows (judged expectations,
scorers, verifiers): each becomes ``{text, passed, evidence}`` (the text is a judged row's
statement, else the component's name); an item without score rows
gets one expectation, ``passed``, from its result row.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._plain import plain_fields
from evalkit._version import __version__
from evalkit.analysis._compare import compare
from evalkit.errors import InputError
from evalkit.results import load_results, read_manifest, read_scores, resolve_run_dir

#: The formats ``evalkit export`` writes.
EXPORT_FORMATS: tuple[str, ...] = ("skill-creator",)

_WITHOUT, _WITH = "without_skill", "with_skill"


@dataclass(frozen=True)
class ExportResult:
    """Summary of an export.

    Attributes:
        path: The file written.
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


def _eval_id(case_id: str) -> int | str:
    return int(case_id) if case_id.isdigit() else case_id


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


def _expectations(row: dict[Any, Any], scores: pd.DataFrame | None) -> list[dict[str, Any]]:
    if scores is not None and len(scores):
        return [
            {
                "text": str(s.get("expectation") or s["component"]),
                "passed": bool(s["passed"]) if s["passed"] is not None else False,
                "evidence": "" if s["detail"] is None else str(s["detail"]),
            }
            for s in scores.to_dict("records")
        ]
    evidence = row.get("error_message") or f"status {row.get('status')}"
    return [{"text": "the item passed", "passed": bool(row["passed"]), "evidence": evidence}]


def _run_entry(
    row: dict[Any, Any], configuration: str, scores: pd.DataFrame | None
) -> dict[str, Any]:
    expectations = _expectations(row, scores)
    passed = sum(e["passed"] for e in expectations)
    tokens = int(_number(row.get("input_tokens")) + _number(row.get("output_tokens")))
    return {
        "eval_id": _eval_id(str(row["case_id"])),
        "eval_name": str(row["case_id"]),
        "configuration": configuration,
        "run_number": int(row["trial"]) + 1,
        "result": {
            "pass_rate": round(passed / len(expectations), 4),
            "passed": passed,
            "failed": len(expectations) - passed,
            "total": len(expectations),
            "time_seconds": float(_number(row.get("latency_s"))),
            "tokens": tokens,
            "tool_calls": int(_number(row.get("n_steps"))),
            "errors": 0 if row.get("status") == "ok" else 1,
        },
        "expectations": expectations,
        "notes": (
            [] if row.get("status") == "ok" else [f"{row['status']}: {row.get('error_message')}"]
        ),
    }


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
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


def export_run(
    run: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    format: str = "skill-creator",
    baseline: str = "none",
    skill: str = "preloaded",
    runs_dir: str | os.PathLike[str] = "runs",
) -> ExportResult:
    """Write a run as skill-creator's ``benchmark.json`` (``evalkit export``).

    Args:
        run: A run directory or run id.
        output: The file to write.
        format: ``skill-creator`` (the only format so far).
        baseline: The condition written as ``without_skill``.
        skill: The condition written as ``with_skill``.
        runs_dir: Where run ids are looked up.

    Returns:
        An :class:`ExportResult`.

    Raises:
        RunNotFoundError: The run does not exist.
        InputError: Unknown format, or a condition the run does not hold.
    """
    if format not in EXPORT_FORMATS:
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
    scores = read_scores(run_dir)
    by_item = {key: group for key, group in scores.groupby("item_key", sort=False)}
    configuration = {baseline: _WITHOUT, skill: _WITH}
    chosen = results[results["condition"].isin([baseline, skill])]
    runs = [
        _run_entry(row, configuration[row["condition"]], by_item.get(row["item_key"]))
        for row in chosen.sort_values(["case_id", "condition", "trial"]).to_dict("records")
    ]
    manifest = read_manifest(run_dir)
    verdict = compare(results, conditions=(baseline, skill)).to_dict()
    models = sorted({str(m) for m in chosen["model"].dropna()})
    benchmark = {
        "metadata": {
            "skill_name": str(manifest.get("suite") or run_dir.name),
            "skill_path": "",
            "executor_model": ", ".join(models) or str(chosen["provider"].iloc[0]),
            "analyzer_model": "",
            "timestamp": str(manifest.get("created_at") or ""),
            "evals_run": sorted({r["eval_id"] for r in runs}, key=lambda v: (str(type(v)), v)),
            "runs_per_configuration": int(chosen["trial"].max()) + 1,
        },
        "runs": runs,
        "run_summary": _summary(runs),
        "notes": [
            f"exported by evalkit {__version__} from run {run_dir.name}: {baseline} is "
            f"without_skill, {skill} is with_skill; the paired verdict is under 'evalkit'"
        ],
        "evalkit": {
            "run_id": run_dir.name,
            "evalkit_version": __version__,
            "baseline_condition": baseline,
            "skill_condition": skill,
            "paired_comparison": verdict,
        },
    }
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(benchmark, indent=2) + "\n", encoding="utf-8")
    return ExportResult(path=path, format=format, runs=len(runs), verdict=verdict["verdict"])
