"""Write Terminal-Bench 1.0 run directories in the layout ``tb run`` writes.

Terminal-Bench 1.0 (``terminal_bench.harness``) writes one directory per run::

    <runs>/<run_id>/
        run_metadata.json            RunMetadata: run_id, agent_name, model_name, n_attempts, ...
        results.json                 BenchmarkResults: id, results (every TrialResults),
                                     n_resolved, n_unresolved, resolved_ids, unresolved_ids,
                                     accuracy, pass_at_k
        <task_id>/<trial_name>/      one per trial, trial_name = <task_id>.<k>-of-<n>.<run_id>
            results.json             TrialResults: id, trial_name, task_id, instruction,
                                     is_resolved, failure_mode, parser_results, recording_path,
                                     total_input_tokens, total_output_tokens, trial_started_at,
                                     trial_ended_at, agent_started_at, agent_ended_at,
                                     test_started_at, test_ended_at
            panes/post-test.txt      the test session's pane (pytest's short summary)

This script writes such runs from the published field list of those models (no
Terminal-Bench code is needed)::

    python scripts/make_terminal_bench_run.py OUT_DIR [--tasks 5] [--attempts 3] [--seed 0]

It writes ``OUT_DIR/no-skills/`` and ``OUT_DIR/with-skills/`` (one run per condition, the same
agent and model) and ``OUT_DIR/expected.json`` (what each trial holds, for tests). Every run
has trials of each kind the harness produces: resolved and unresolved ones, agent timeouts
the tests still graded (resolved or not) and one they did not, a test timeout, a parse error,
an unknown agent error and an agent that exceeded its context window but was still graded.
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

AGENT = "terminus"
MODEL = "anthropic/claude-sonnet-4-20250514"
RUNS = ("no-skills", "with-skills")
TESTS = ("test_file_exists", "test_output_format", "test_values_correct")
#: (failure_mode, is_resolved), one per trial in turn: None when the tests did not grade the
#: trial, "draw" when the seed decides (more often resolved in the run with skills).
KINDS: tuple[tuple[str, bool | None | str], ...] = (
    ("none", "draw"),
    ("unset", "draw"),
    ("agent_timeout", True),
    ("none", "draw"),
    ("agent_timeout", False),
    ("test_timeout", None),
    ("none", "draw"),
    ("agent_timeout", None),
    ("parse_error", None),
    ("none", "draw"),
    ("unknown_agent_error", None),
    ("context_length_exceeded", False),
)


def _iso(moment: datetime) -> str:
    return moment.isoformat()


def _parser_results(
    rng: random.Random, resolved: bool | None
) -> dict[str, str] | None:
    if resolved is None:
        return None
    if resolved:
        return dict.fromkeys(TESTS, "passed")
    failing = rng.sample(TESTS, rng.randint(1, len(TESTS)))
    return {name: "failed" if name in failing else "passed" for name in TESTS}


def _pane(results: dict[str, str] | None, mode: str) -> str:
    if results is None:
        if mode == "test_timeout":
            return "root@box:/app# bash /tests/run-tests.sh\ncollecting ...\n"
        return "root@box:/app# bash /tests/run-tests.sh\nbash: /tests/run-tests.sh: broken\n"
    lines = ["root@box:/app# bash /tests/run-tests.sh", "=" * 20 + " short test summary info "
             + "=" * 20]
    for name, status in results.items():
        mark = "PASSED" if status == "passed" else "FAILED"
        why = "" if status == "passed" else " - AssertionError: expected 42, found 41"
        lines.append(f"{mark} ../tests/test_outputs.py::{name}{why}")
    failed = sum(s == "failed" for s in results.values())
    lines.append(f"{'=' * 10} {failed} failed, {len(results) - failed} passed in 0.31s {'=' * 10}")
    return "\n".join(lines) + "\n"


def write_run(out: Path, run_id: str, tasks: int, attempts: int, rng: random.Random,
              skill_bonus: float) -> list[dict[str, Any]]:
    """Write one run directory; return what each trial holds."""
    run_dir = out / run_id
    run_dir.mkdir(parents=True)
    start = datetime(2025, 9, 5, 16, 26, 44, tzinfo=UTC)
    trials: list[dict[str, Any]] = []
    expected: list[dict[str, Any]] = []
    index = 0
    for t in range(tasks):
        task_id = f"task-{t:02d}"
        for attempt in range(1, attempts + 1):
            mode, resolved = KINDS[index % len(KINDS)]
            index += 1
            if resolved == "draw":
                resolved = rng.random() < 0.45 + skill_bonus
            verdict = resolved if isinstance(resolved, bool) else None
            results = _parser_results(rng, verdict)
            trial_name = f"{task_id}.{attempt}-of-{attempts}.{run_id}"
            began = start + timedelta(minutes=7 * index, seconds=rng.randint(0, 50))
            agent_start = began + timedelta(seconds=20)
            agent_end = agent_start + timedelta(seconds=rng.randint(30, 900))
            test_start = agent_end + timedelta(seconds=3)
            test_end = test_start + timedelta(seconds=rng.randint(5, 60))
            trial = {
                "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                "trial_name": trial_name,
                "task_id": task_id,
                "instruction": f"Write the answer of {task_id} to /app/answer.txt.",
                "is_resolved": verdict,
                "failure_mode": mode,
                "parser_results": results,
                "recording_path": f"{run_id}/{task_id}/{trial_name}/sessions/agent.cast",
                "total_input_tokens": rng.randint(2_000, 90_000),
                "total_output_tokens": rng.randint(200, 9_000),
                "trial_started_at": _iso(began),
                "trial_ended_at": _iso(test_end + timedelta(seconds=2)),
                "agent_started_at": _iso(agent_start),
                "agent_ended_at": _iso(agent_end),
                "test_started_at": _iso(test_start),
                "test_ended_at": _iso(test_end),
            }
            trial_dir = run_dir / task_id / trial_name
            (trial_dir / "panes").mkdir(parents=True)
            (trial_dir / "results.json").write_text(json.dumps(trial, indent=4))
            (trial_dir / "panes" / "post-test.txt").write_text(_pane(results, mode))
            trials.append(trial)
            expected.append({"run": run_id, **{k: trial[k] for k in (
                "id", "trial_name", "task_id", "is_resolved", "failure_mode", "parser_results",
                "total_input_tokens", "total_output_tokens")}, "attempt": attempt})
    resolved_ids = [t["task_id"] for t in trials if t["is_resolved"]]
    unresolved_ids = [t["task_id"] for t in trials if not t["is_resolved"]]
    benchmark = {
        "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "results": trials,
        "pass_at_k": {},
        "n_resolved": len(resolved_ids),
        "n_unresolved": len(unresolved_ids),
        "resolved_ids": resolved_ids,
        "unresolved_ids": unresolved_ids,
        "accuracy": len(resolved_ids) / len(trials),
    }
    (run_dir / "results.json").write_text(json.dumps(benchmark, indent=4))
    metadata = {
        "run_id": run_id,
        "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "dataset_path": "tasks",
        "dataset_name": "terminal-bench-core",
        "dataset_version": "0.1.1",
        "output_path": "runs",
        "agent_name": AGENT,
        "no_rebuild": False,
        "cleanup": True,
        "log_level": 20,
        "task_ids": [f"task-{t:02d}" for t in range(tasks)],
        "exclude_task_ids": None,
        "n_tasks": tasks,
        "n_concurrent_trials": 4,
        "n_attempts": attempts,
        "dataset_size": tasks,
        "accuracy": benchmark["accuracy"],
        "model_name": MODEL,
        "start_time": _iso(start),
        "end_time": _iso(start + timedelta(hours=3)),
        "commit_hash": "unknown",
        "username": "unknown",
        "s3_bucket": None,
        "agent_kwargs": {"skills": run_id == "with-skills"},
        "pass_at_k": {},
        "resumed_at": None,
    }
    (run_dir / "run_metadata.json").write_text(json.dumps(metadata, indent=4))
    return expected


def main() -> None:
    """Write the runs and ``expected.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--attempts", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    expected: list[dict[str, Any]] = []
    for run_id, bonus in zip(RUNS, (0.0, 0.3), strict=True):
        expected += write_run(args.out, run_id, args.tasks, args.attempts, rng, bonus)
    (args.out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
