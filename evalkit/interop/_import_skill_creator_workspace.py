"""One run of a skill-creator workspace: ``iteration-N/eval-ID/CONFIGURATION/run-K/grading.json``.

Read by ``evalkit import --format skill-creator`` (see :mod:`evalkit.interop._import_skill_creator`
for the mapping). The eval's id comes from ``eval_metadata.json`` in the eval's folder (else from
the folder's name, ``eval-3``), the configuration from the folder above the run, the run number
from ``run-K``; ``timing.json`` beside ``grading.json`` gives the time and the tokens.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from evalkit.interop._import_common import as_dict, fail, read_json

GRADING_FILE = "grading.json"
_RUN_DIR = re.compile(r"^run-(\d+)$")


def _optional_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    return as_dict(read_json(path, "expected a JSON object"))


def workspace_run(path: Path) -> dict[str, Any]:
    """A ``grading.json`` as one entry of ``benchmark.json``'s ``runs`` (same field names).

    Raises:
        InputError: The file does not sit in a workspace's ``CONFIGURATION/run-K/`` folder, or
            is not a grading (the message names the file and the fix).
    """
    run_dir = path.parent
    match = _RUN_DIR.match(run_dir.name)
    if match is None or path.name != GRADING_FILE:
        raise fail(path, "", "a workspace's grading.json sits in "
                   "iteration-N/eval-ID/CONFIGURATION/run-K/; this one does not")
    grading = as_dict(read_json(path, "expected skill-creator's grading.json "
                                "({expectations: [...], summary: {...}})"))
    if "summary" not in grading and "expectations" not in grading:
        raise fail(path, "", "no 'summary' and no 'expectations': not a skill-creator grading")
    eval_dir = run_dir.parent.parent
    metadata = _optional_json(eval_dir / "eval_metadata.json")
    eval_id: Any = metadata.get("eval_id")
    if eval_id is None:
        tail = eval_dir.name.split("-", 1)[-1]
        eval_id = int(tail) if tail.isdigit() else tail
    timing = {**as_dict(grading.get("timing")), **_optional_json(run_dir / "timing.json")}
    summary = as_dict(grading.get("summary"))
    metrics = as_dict(grading.get("execution_metrics"))
    result: dict[str, Any] = {
        k: summary[k] for k in ("pass_rate", "passed", "failed", "total") if k in summary
    }
    if "total_duration_seconds" in timing:
        result["time_seconds"] = timing["total_duration_seconds"]
    if "total_tokens" in timing:
        result["tokens"] = timing["total_tokens"]
    if "total_tool_calls" in metrics:
        result["tool_calls"] = metrics["total_tool_calls"]
    entry: dict[str, Any] = {
        "eval_id": eval_id,
        "configuration": run_dir.parent.name,
        "run_number": int(match.group(1)),
        "result": result,
        "expectations": grading.get("expectations") or [],
    }
    if "evalkit" in grading:
        entry["evalkit"] = grading["evalkit"]
    return entry


def row_where(path: Path) -> str:
    """How a workspace run is named in messages: its path from the iteration down."""
    parts = path.parts[-5:-1]
    return "/".join(parts)
