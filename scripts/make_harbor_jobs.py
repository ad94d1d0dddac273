"""Write Harbor job directories with Harbor's own pydantic models (run it with Harbor's Python).

Harbor needs Python >= 3.12 (``pip install harbor``), so this script runs in a separate
interpreter, e.g.::

    PYENV_VERSION=3.12.1 python3.12 -m venv .harbor && .harbor/bin/pip install harbor
    .harbor/bin/python scripts/make_harbor_jobs.py OUT_DIR [--tasks 4] [--trials 3]
        [--agents 2] [--seed 0]

It writes ``OUT_DIR/<job>/`` (one job per condition: ``no-skills`` without skills,
``with-skills`` with a skill installed for the agent), each with a ``JobResult`` summary in
``result.json`` and one directory per trial holding ``config.json`` (``TrialConfig``) and
``result.json`` (``TrialResult``). Some trials end in an agent timeout
(``AgentTimeoutError``, graded), an environment failure (``EnvironmentStartTimeoutError``,
never graded), an agent failure the verifier still graded (``NonZeroAgentExitCodeError``) or
a missing verifier result. A graded trial's ``verifier/test-stdout.txt`` holds its test
run's output (pytest's summary: which test failed and why). ``OUT_DIR/expected.json`` lists
what each trial holds (task, agent, model, skills, reward, exception, tokens, cost, the last
line of the verifier's output), for tests to check an import against.
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import uuid4

from harbor.models.agent.context import AgentContext
from harbor.models.job.result import JobResult, JobStats
from harbor.models.task.id import LocalTaskId
from harbor.models.trial.config import AgentConfig, TaskConfig, TrialConfig
from harbor.models.trial.result import (
    AgentInfo,
    ExceptionInfo,
    ModelInfo,
    TimingInfo,
    TrialResult,
)
from harbor.models.verifier.result import VerifierResult

AGENTS = (
    ("claude-code", "2.1.3", "claude-opus-4-5", "anthropic"),
    ("codex", "0.17.2", "gpt-5.5", "openai"),
    ("terminus-2", "1.0.0", "gemini-3-pro", "google"),
)
CONDITIONS = {"no-skills": [], "with-skills": ["/skills/terminal-tips"]}


def _failure(rng: random.Random, index: int) -> str | None:
    """Which failure a trial ends in (a fixed share of each kind, spread by the seed)."""
    kinds = [None] * 8 + [
        "AgentTimeoutError",
        "EnvironmentStartTimeoutError",
        "NonZeroAgentExitCodeError",
        "no-verifier",
    ]
    return kinds[(index * 7 + rng.randrange(12)) % len(kinds)]


def verifier_output(task: str, reward: float) -> str:
    """What a task's pytest verifier prints: its failure and summary, or the passing summary."""
    if reward >= 1.0:
        return (
            "============================= test session starts ==============================\n"
            "collected 2 items\n\n"
            "../tests/test_outputs.py ..                                              [100%]\n\n"
            "============================== 2 passed in 0.08s ===============================\n"
        )
    return (
        "============================= test session starts ==============================\n"
        "collected 2 items\n\n"
        "../tests/test_outputs.py .F                                              [100%]\n\n"
        "=================================== FAILURES ===================================\n"
        f"E   AssertionError: {task}: /app/out.txt holds '41', expected '42'\n"
        "=========================== short test summary info ============================\n"
        f"FAILED ../tests/test_outputs.py::test_output - AssertionError: {task}: /app/out.txt "
        "holds '41', expected '42'\n"
        "========================= 1 failed, 1 passed in 0.11s ==========================\n"
    )


def write_jobs(out: Path, tasks: int, trials: int, agents: int, seed: int) -> list[dict]:
    """Write the jobs; return the expected record of every trial."""
    rng = random.Random(seed)
    start = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    expected: list[dict] = []
    index = 0
    for condition, skills in CONDITIONS.items():
        job = out / f"job-{condition}"
        job.mkdir(parents=True, exist_ok=True)
        n_trials = 0
        for task_number in range(tasks):
            task = f"task-{task_number:02d}"
            for agent, version, model, vendor in AGENTS[:agents]:
                for _trial in range(trials):
                    index += 1
                    failure = _failure(rng, index)
                    began = start + timedelta(minutes=rng.randrange(10_000))
                    run_s = rng.uniform(20.0, 600.0)
                    trial_name = f"{task}__{uuid4().hex[:7]}"
                    config = TrialConfig(
                        task=TaskConfig(path=Path(f"tasks_{condition.replace('-', '_')}/{task}")),
                        trial_name=trial_name,
                        trials_dir=job,
                        agent=AgentConfig(
                            name=agent, model_name=f"{vendor}/{model}", skills=list(skills)
                        ),
                    )
                    reward = None
                    if failure not in ("EnvironmentStartTimeoutError", "no-verifier"):
                        reward = float(rng.random() < 0.4 + 0.3 * bool(skills))
                    tokens = None
                    if failure != "EnvironmentStartTimeoutError":
                        tokens = AgentContext(
                            n_input_tokens=rng.randrange(1_000, 90_000),
                            n_cache_tokens=rng.randrange(0, 900),
                            n_output_tokens=rng.randrange(100, 9_000),
                            cost_usd=round(rng.uniform(0.01, 2.0), 4),
                        )
                    exception = None
                    if failure is not None and failure != "no-verifier":
                        exception = ExceptionInfo(
                            exception_type=failure,
                            exception_message=f"{failure} in trial {trial_name}",
                            exception_traceback="Traceback (most recent call last): ...",
                            occurred_at=began + timedelta(seconds=run_s),
                        )
                    result = TrialResult(
                        task_name=task,
                        trial_name=trial_name,
                        trial_uri=(job / trial_name).as_uri(),
                        task_id=LocalTaskId(path=Path(f"tasks/{task}")),
                        task_checksum=f"{task_number:064x}",
                        config=config,
                        agent_info=AgentInfo(
                            name=agent,
                            version=version,
                            model_info=ModelInfo(name=model, provider=vendor),
                        ),
                        agent_result=tokens,
                        verifier_result=None if reward is None
                        else VerifierResult(rewards={"reward": reward}),
                        exception_info=exception,
                        started_at=began,
                        finished_at=began + timedelta(seconds=run_s + 30),
                        agent_execution=None
                        if failure == "EnvironmentStartTimeoutError"
                        else TimingInfo(
                            started_at=began + timedelta(seconds=10),
                            finished_at=began + timedelta(seconds=10 + run_s),
                        ),
                    )
                    folder = job / trial_name
                    folder.mkdir()
                    (folder / "config.json").write_text(config.model_dump_json(indent=2))
                    (folder / "result.json").write_text(result.model_dump_json(indent=2))
                    output = None if reward is None else verifier_output(task, reward)
                    if output is not None:
                        (folder / "verifier").mkdir()
                        (folder / "verifier" / "test-stdout.txt").write_text(output)
                    n_trials += 1
                    expected.append(
                        {
                            "job": job.name,
                            "trial_name": trial_name,
                            "task": task,
                            "condition": condition,
                            "agent": agent,
                            "model": f"{vendor}/{model}",
                            "skills": list(skills),
                            "reward": reward,
                            "exception": None if exception is None else failure,
                            "started_at": began.isoformat(),
                            "agent_seconds": None
                            if failure == "EnvironmentStartTimeoutError"
                            else run_s,
                            "input_tokens": None if tokens is None else tokens.n_input_tokens,
                            "output_tokens": None if tokens is None else tokens.n_output_tokens,
                            "cost_usd": None if tokens is None else tokens.cost_usd,
                            "verifier_last_line": None
                            if output is None
                            else output.strip().splitlines()[-1],
                        }
                    )
        summary = JobResult(
            id=uuid4(), started_at=start, n_total_trials=n_trials, stats=JobStats()
        )
        (job / "result.json").write_text(summary.model_dump_json(indent=2))
    return expected


def main() -> int:
    """Write the jobs and ``expected.json``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--agents", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    expected = write_jobs(args.out, args.tasks, args.trials, args.agents, args.seed)
    (args.out / "expected.json").write_text(json.dumps(expected, indent=1))
    print(f"{args.out}: {len(expected)} trials")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
