"""``evalkit export --format skill-creator-workspace``: the directory skill-creator's tools read.

skill-creator's ``scripts/aggregate_benchmark.py`` and ``eval-viewer/generate_review.py`` read
a workspace, not a ``benchmark.json`` (its ``references/schemas.md``)::

    OUTPUT/
      evalkit.json                      the run, the conditions and evalkit's paired verdict
      iteration-1/
        eval-<ID>/
          eval_metadata.json            {eval_id, eval_name, prompt, assertions}
          with_skill/run-<K>/           (and without_skill/run-<K>/)
            grading.json                {expectations[{text, passed, evidence}], summary,
                                         execution_metrics, timing, evalkit}
            timing.json                 {total_tokens, duration_ms, total_duration_seconds}
            outputs/final_answer.md     the agent's final answer
            outputs/transcript.md       the transcript (the viewer reads the prompt from it)

``grading.json`` carries evalkit's own outcome of the item under the extra key ``evalkit``, so
``evalkit import OUTPUT --format skill-creator`` gives back the run's pass rates exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalkit.errors import InputError
from evalkit.interop._export_job import ExportJob

ITERATION = "iteration-1"


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def write_workspace(job: ExportJob) -> Path:
    """Write the workspace (see the module docstring).

    Returns:
        The workspace directory.

    Raises:
        InputError: The output directory exists and is not empty.
    """
    root = job.output
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise InputError(f"{root} exists and is not an empty directory; a workspace is written "
                         "into a new directory (choose another -o)")
    iteration = root / ITERATION
    statements: dict[int, list[str]] = {}
    for run in job.runs:
        entry = run.entry
        eval_dir = iteration / f"eval-{entry['eval_id']}"
        texts = statements.setdefault(entry["eval_id"], [])
        texts += [e["text"] for e in entry["expectations"] if e["text"] not in texts]
        if not (eval_dir / "eval_metadata.json").exists() or run.prompt:
            _write_json(eval_dir / "eval_metadata.json", {
                "eval_id": entry["eval_id"], "eval_name": entry["eval_name"],
                "prompt": run.prompt, "assertions": texts,
            })
        run_dir = eval_dir / entry["configuration"] / f"run-{entry['run_number']}"
        result = entry["result"]
        duration = result["time_seconds"]
        _write_json(run_dir / "timing.json", {
            "total_tokens": result["tokens"],
            "duration_ms": int(round(duration * 1000)),
            "total_duration_seconds": duration,
        })
        _write_json(run_dir / "grading.json", {
            "expectations": entry["expectations"],
            "summary": {key: result[key] for key in ("passed", "failed", "total", "pass_rate")},
            "execution_metrics": {
                "total_tool_calls": result["tool_calls"],
                "errors_encountered": result["errors"],
                "output_chars": len(run.answer),
                "transcript_chars": len(run.transcript),
            },
            "timing": {"total_duration_seconds": duration},
            "user_notes_summary": {"uncertainties": [], "needs_review": entry["notes"],
                                   "workarounds": []},
            "evalkit": entry["evalkit"],
        })
        outputs = run_dir / "outputs"
        outputs.mkdir(parents=True, exist_ok=True)
        (outputs / "final_answer.md").write_text(run.answer or "(no answer)\n", encoding="utf-8")
        (outputs / "transcript.md").write_text(run.transcript, encoding="utf-8")
    _write_json(root / "evalkit.json", {"metadata": job.metadata, "evalkit": job.evalkit})
    return root
