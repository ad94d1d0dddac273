"""``--format harbor``: Harbor job directories (one ``result.json`` per trial) as a run.

Harbor (the harness behind Terminal-Bench and SkillsBench) writes a job directory holding one
folder per trial, each with ``config.json`` (the ``TrialConfig``) and ``result.json`` (the
``TrialResult``: task, agent, verifier rewards, exception, tokens, timings); the job folder's
own ``result.json`` is a ``JobResult`` summary and is skipped (its trials are read from their
own files, so none is counted twice). The mapping (``docs/import.md``):

- ``task_name`` -> ``case_id``; the agent and its model -> ``provider`` (``agent/model``, so
  two models behind one harness are two providers) and ``model``; ``agent_info.version`` ->
  ``provider_version``;
- condition from the trial's skills (``config.agent.skills`` empty -> ``none``, else
  ``self-load``: Harbor installs them where the agent discovers them), or ``job`` (the job
  directory's name) or ``task-path:REGEX`` (the regex's first group, else its match, in
  ``config.task.path``);
- trials numbered 0, 1, ... within (case, condition, provider) by ``started_at``;
- ``verifier_result.rewards["reward"]`` -> ``score``; ``passed`` = reward >= the threshold;
- ``exception_info`` -> ``status`` and ``error_class``: an agent timeout is ``timeout`` (a
  failure, as everywhere in evalkit), unless the verifier graded it and ``--timeout-policy``
  says otherwise (``graded``: the verifier's verdict, status ``ok``; ``error``);
  infrastructure failures (environment build, agent setup, model API) are ``error`` rows
  whose message starts ``infrastructure:``; an agent failure the verifier still graded
  (non-zero exit, context window exceeded) keeps its reward with status ``ok`` and the
  exception as ``error_class``; a trial without a verifier result is an ``error`` row, never
  a pass;
- tokens and cost from ``agent_result``; ``latency_s`` from the agent-execution timing;
- the reason: a ``verifier`` score row for every graded trial (value = reward, passed = reward
  >= the threshold, detail ``reward 0.00 < 1.0`` with the exception of an agent failure the
  verifier still graded and the last lines of the verifier's output, ``verifier/test-stdout.txt``
  else ``verifier/test-stderr.txt`` in the trial directory); the last lines of that output are
  also added to an error row's message when the verifier ran.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from evalkit.errors import InputError
from evalkit.interop._import_common import (
    ParsedSource,
    SourceRow,
    check_score,
    fail,
    file_tail,
    number_trials,
    read_json,
    short_error,
)
from evalkit.interop._import_options import HarborOptions
from evalkit.interop._import_refusal import refusal
from evalkit.interop._import_registry import ImportRequest
from evalkit.interop._import_terminal_bench import is_terminal_bench
from evalkit.interop._import_transcripts import trial_response

TRIAL_FILE = "result.json"
#: Terminal-Bench 1.0 names its results ``results.json``; they are recognised to say so.
TERMINAL_BENCH_FILE = "results.json"
#: Where a trial directory keeps its verifier's output (Harbor's ``TrialPaths``), first found.
VERIFIER_OUTPUTS = ("verifier/test-stdout.txt", "verifier/test-stderr.txt")
#: Characters kept of the end of the verifier's output in a reason.
_OUTPUT_LIMIT = 300
_EXPECTED = (
    "expected a Harbor trial result (TrialResult: task_name, trial_name, config, agent_info, "
    "verifier_result, ...), the result.json of a trial directory"
)
#: Harbor exception types whose trial the verifier still graded: the agent failed on its own
#: account (harbor.models.trial.error_policy, has_valid_reward=True).
GRADED_AGENT_FAILURES = frozenset(
    {
        "NonZeroAgentExitCodeError",
        "ContextWindowExceededError",
        "OutputTokenExceededError",
        "ContextLengthExceededError",
        "OutputLengthExceededError",
        "AgentSafetyRefusalError",
        "ContentPolicyViolationError",
    }
)
#: The agent ran out of time: a failure, with status ``timeout``.
AGENT_TIMEOUTS = frozenset({"AgentTimeoutError"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Timing(_Model):
    started_at: datetime | None = None
    """Phase start."""
    finished_at: datetime | None = None
    """Phase end."""


class _ModelInfo(_Model):
    name: str
    """Model name."""
    provider: str | None = None
    """Model vendor, when the model string named one."""


class _AgentInfo(_Model):
    name: str
    """Agent (harness) name, e.g. ``claude-code``."""
    version: str | None = None
    """Agent version."""
    model_info: _ModelInfo | None = None
    """The model the agent ran."""


class _AgentConfig(_Model):
    name: str | None = None
    """Configured agent name."""
    model_name: str | None = None
    """Configured model."""
    skills: list[str] = []
    """Skill directories installed for the agent."""


class _TaskConfig(_Model):
    path: str | None = None
    """Local task directory."""
    name: str | None = None
    """Package task name."""


class _TrialConfig(_Model):
    task: _TaskConfig
    """The task."""
    agent: _AgentConfig = _AgentConfig()
    """The agent."""


class _AgentResult(_Model):
    n_input_tokens: int | None = None
    """Input tokens, cache included."""
    n_cache_tokens: int | None = None
    """Cached input tokens."""
    n_output_tokens: int | None = None
    """Output tokens."""
    cost_usd: float | None = None
    """Agent cost in USD."""


class _VerifierResult(_Model):
    rewards: dict[str, float] | None = None
    """Rewards by name (``reward`` is the one used)."""


class _ExceptionInfo(_Model):
    exception_type: str
    """Exception class name."""
    exception_message: str = ""
    """Its message."""


class HarborTrial(_Model):
    """The fields of Harbor's ``TrialResult`` that evalkit reads (others are ignored)."""

    id: str | None = None
    """Trial id (a UUID): one sample, however many copies of its directory are passed."""
    task_name: str
    """Task name: the case."""
    trial_name: str
    """Trial directory name."""
    config: _TrialConfig
    """The trial's configuration."""
    agent_info: _AgentInfo
    """The agent that ran."""
    agent_result: _AgentResult | None = None
    """Tokens and cost."""
    verifier_result: _VerifierResult | None = None
    """Rewards (None when the verifier did not run)."""
    exception_info: _ExceptionInfo | None = None
    """The exception that ended the trial, if any."""
    started_at: datetime | None = None
    """Trial start."""
    finished_at: datetime | None = None
    """Trial end."""
    agent_execution: _Timing | None = None
    """Agent-execution timing (latency)."""


def _condition_rule(text: str | None) -> tuple[str, re.Pattern[str] | None]:
    """Parse ``--condition-from`` (``skills``, ``job``, ``task-path:REGEX``)."""
    rule = text or "skills"
    if rule in ("skills", "job"):
        return rule, None
    if rule.startswith("task-path:"):
        try:
            return "task-path", re.compile(rule.removeprefix("task-path:"))
        except re.error as exc:
            raise InputError(
                f"--condition-from {rule}: not a valid regular expression ({exc})"
            ) from None
    raise InputError(
        f"--condition-from {rule!r}: a Harbor import takes 'skills' (default), 'job' or "
        "'task-path:REGEX' (e.g. task-path:tasks_(no_skills|with_skills))"
    )


def _is_job_result(data: dict[str, Any]) -> bool:
    return "n_total_trials" in data and "task_name" not in data


def _load(path: Path, listed: bool) -> HarborTrial | None:
    """One trial result; None for a job summary found while listing a directory."""
    data = read_json(path, _EXPECTED)
    if not isinstance(data, dict):
        raise fail(path, "", f"a JSON {type(data).__name__}, not an object; {_EXPECTED}")
    if _is_job_result(data):
        if listed:
            return None
        raise fail(
            path, "", "this is a Harbor job summary (JobResult), not a trial; pass the job "
            "directory, which holds one trial directory per trial"
        )
    missing = [k for k in ("task_name", "trial_name", "config", "agent_info") if k not in data]
    if missing:
        raise fail(path, "", f"no {', '.join(missing)}: not a Harbor trial result; {_EXPECTED}")
    try:
        return HarborTrial.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise fail(path, where, f"{err['msg']}; {_EXPECTED}") from None


def _seconds(timing: _Timing | None, path: Path, where: str) -> float | None:
    """A phase's duration; a naive time is read as UTC, so mixed zones still subtract."""
    if timing is None or timing.started_at is None or timing.finished_at is None:
        return None
    start = _utc(timing.started_at, path, f"{where}.started_at")
    end = _utc(timing.finished_at, path, f"{where}.finished_at")
    assert start is not None and end is not None
    return max(0.0, (end - start).total_seconds())


def _utc(moment: datetime | None, path: Path, where: str) -> datetime | None:
    """``moment`` in UTC (a naive time is taken as UTC).

    Raises:
        InputError: The time is out of range in UTC (e.g. year 1 at +05:00), naming the field.
    """
    if moment is None:
        return None
    try:
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (OverflowError, ValueError):
        raise fail(path, where, f"time {moment.isoformat()} is out of range in UTC; fix the "
                   "timestamp (or leave it out)") from None


def _provider(trial: HarborTrial) -> tuple[str, str | None]:
    agent = trial.agent_info.name or trial.config.agent.name or "agent"
    info = trial.agent_info.model_info
    model = info.name if info is not None else trial.config.agent.model_name
    if info is not None and info.provider and "/" not in info.name:
        model = f"{info.provider}/{info.name}"
    return (f"{agent}/{model}" if model else agent), model


def _condition(
    trial: HarborTrial, path: Path, rule: str, pattern: re.Pattern[str] | None
) -> str:
    if rule == "skills":
        return "self-load" if trial.config.agent.skills else "none"
    if rule == "job":
        return path.parent.parent.name or "job"
    task_path = trial.config.task.path or trial.config.task.name or ""
    match = pattern.search(task_path) if pattern is not None else None
    if match is None:
        raise fail(
            path, "config.task.path", f"{task_path!r} does not match --condition-from "
            f"task-path:{pattern.pattern if pattern else ''}"
        )
    return match.group(1) if match.groups() and match.group(1) else match.group(0)


def _reward(trial: HarborTrial, path: Path) -> float | None:
    rewards = trial.verifier_result.rewards if trial.verifier_result is not None else None
    if not rewards:
        return None
    if "reward" in rewards:
        return float(rewards["reward"])
    if len(rewards) == 1:
        return float(next(iter(rewards.values())))
    raise fail(
        path, "verifier_result.rewards", f"several rewards ({', '.join(sorted(rewards))}) and "
        "none called 'reward': evalkit cannot tell which one decides the trial"
    )


def _outcome(
    trial: HarborTrial, reward: float | None, threshold: float, policy: str = "failed"
) -> dict[str, Any]:
    """status, passed, score, error_class and error_message of one trial.

    ``policy`` (``--timeout-policy``) decides an agent timeout the verifier still graded:
    ``failed`` a timeout row, ``graded`` the verifier's verdict, ``error`` an error row.
    """
    exc = trial.exception_info
    if exc is not None and exc.exception_type in AGENT_TIMEOUTS:
        message = "agent: " + short_error(exc.exception_message)
        if reward is not None and policy == "graded":
            return {
                "status": "ok", "passed": reward >= threshold, "score": reward,
                "error_class": exc.exception_type, "error_message": message,
            }
        if reward is not None and policy == "error":
            message += (
                f" (the verifier then graded it: reward {reward:.2f}; --timeout-policy error)"
            )
        return {
            "status": "error" if reward is not None and policy == "error" else "timeout",
            "passed": False,
            "score": reward,
            "error_class": exc.exception_type,
            "error_message": message,
        }
    if exc is not None and (exc.exception_type not in GRADED_AGENT_FAILURES or reward is None):
        return {
            "status": "error",
            "passed": False,
            "score": None,
            "error_class": exc.exception_type,
            "error_message": "infrastructure: " + short_error(exc.exception_message)
            if exc.exception_type not in GRADED_AGENT_FAILURES
            else "agent: " + short_error(exc.exception_message) + " (no verifier result)",
        }
    if reward is None:
        return {
            "status": "error",
            "passed": False,
            "score": None,
            "error_class": "NoVerifierResult",
            "error_message": "the verifier did not run (result.json has no verifier_result "
            "rewards); a trial without a verifier result is never a pass",
        }
    return {
        "status": "ok",
        "passed": reward >= threshold,
        "score": reward,
        "error_class": None if exc is None else exc.exception_type,
        "error_message": None if exc is None else "agent: " + short_error(exc.exception_message),
    }


def verifier_output(trial_dir: Path) -> str | None:
    """The last lines of the verifier's output in a trial directory (None when absent)."""
    for name in VERIFIER_OUTPUTS:
        tail = file_tail(trial_dir / name, limit=_OUTPUT_LIMIT)
        if tail is not None:
            return tail
    return None


def _reasons(
    trial: HarborTrial, values: dict[str, Any], threshold: float, output: str | None
) -> list[dict[str, Any]]:
    """The ``verifier`` score row of a graded trial; an error row gets the output instead.

    Args:
        trial: The trial result.
        values: The row's values (``status``, ``score``, ``error_message``); the verifier's
            output is appended to an error row's message.
        threshold: The pass threshold.
        output: The last lines of the verifier's output, if the trial directory holds it.

    Returns:
        The score rows of the trial (none for an error row).
    """
    reward = values["score"]
    if reward is None or values["status"] == "error":
        if output is not None and values["error_class"] == "NoVerifierResult":
            values["error_message"] = f"the verifier recorded no reward; its output: {output}"
        elif output is not None and values["status"] == "error":
            values["error_message"] = f"{values['error_message']} · verifier output: {output}"
        return []
    passed = reward >= threshold
    detail = f"reward {reward:.2f} {'>=' if passed else '<'} {threshold:.2f}"
    exc = trial.exception_info
    if exc is not None and values["status"] == "ok":
        message = short_error(exc.exception_message, 200)
        detail += f" (agent ended with {exc.exception_type}" + (f": {message})" if message else ")")
    if output is not None:
        detail += f": {output}"
    return [
        {"component": "verifier", "value": reward, "max_value": 1.0, "passed": passed,
         "detail": detail}
    ]


def _refuse_terminal_bench(files: list[Path]) -> None:
    """Raise an error that names ``--format terminal-bench`` when a file is Terminal-Bench 1.0's.

    Raises:
        InputError: One of the ``results.json`` files holds Terminal-Bench 1.0 results.
    """
    for path in files:
        if path.name != TERMINAL_BENCH_FILE:
            continue
        if is_terminal_bench(read_json(path)):
            raise fail(
                path, "", "this is a Terminal-Bench 1.0 result (a run's BenchmarkResults or a "
                "trial's TrialResults), not Harbor output: import the run directory with "
                "--format terminal-bench (docs/import.md)"
            )


def _row(
    trial: HarborTrial,
    path: Path,
    request: ImportRequest,
    condition_rule: tuple[str, re.Pattern[str] | None],
    threshold: float,
    policy: str,
) -> SourceRow:
    """The result row of one trial (with its reasons).

    Raises:
        InputError: Its rewards do not say which one decides, its reward lies outside [0, 1],
            its task path does not match, or a time is out of range.
    """
    reward = _reward(trial, path)
    provider, model = _provider(trial)
    outcome = _outcome(trial, reward, threshold, policy)
    row = SourceRow(
        values={
            "lane": request.lane,
            "case_id": trial.task_name,
            "condition": _condition(trial, path, *condition_rule),
            "provider": provider,
            "model": model,
            "provider_version": trial.agent_info.version,
            "trial": None,
            "latency_s": _seconds(trial.agent_execution, path, "agent_execution"),
            "input_tokens": None if trial.agent_result is None
            else trial.agent_result.n_input_tokens,
            "output_tokens": None if trial.agent_result is None
            else trial.agent_result.n_output_tokens,
            "cost_usd": None if trial.agent_result is None else trial.agent_result.cost_usd,
            "started_at": _utc(trial.started_at, path, "started_at"),
            "finished_at": _utc(trial.finished_at, path, "finished_at"),
            **outcome,
        },
        file=str(path),
        where=f"trial {trial.trial_name}",
        identity={"trial_name": trial.trial_name, "task_name": trial.task_name,
                  "started_at": None if trial.started_at is None
                  else trial.started_at.isoformat()},
    )
    if outcome["score"] is not None:
        check_score(outcome["score"], row, " (Harbor reward; evalkit scores lie in [0, 1])")
    row.scores = _reasons(trial, row.values, threshold, verifier_output(path.parent))
    row.transcript, row.transcript_note = trial_response(path.parent, model)
    return row


def read_harbor(request: ImportRequest) -> ParsedSource:
    """Read Harbor trial ``result.json`` files into result rows (see the module docstring).

    Args:
        request: The files (trial ``result.json`` files; a directory is listed for them),
            and its :class:`~evalkit.interop._import_options.HarborOptions`.

    Returns:
        The rows, trials numbered by start time within (case, condition, provider).

    Raises:
        InputError: Files that are not Harbor trial results, rewards outside [0, 1] (every
            bad trial named, up to :data:`~evalkit.interop._import_refusal.MAX_LISTED`, then
            counted; nothing is imported), a bad ``--condition-from``.
    """
    options = request.options_as(HarborOptions)
    rule, pattern = _condition_rule(options.condition_from)
    threshold = options.pass_threshold
    # an agent timeout is a failure by default, as in evalkit's own runs, even when the
    # verifier graded the trial afterwards (``graded`` keeps the verifier's verdict)
    policy = options.timeout_policy
    _refuse_terminal_bench(request.files)
    files = [f for f in request.files if f not in request.listed or f.name == TRIAL_FILE]
    rows: list[tuple[tuple[Any, ...], SourceRow]] = []
    problems: list[str] = []
    skipped = 0
    infra: Counter[str] = Counter()
    graded_timeouts = 0
    seen: dict[tuple[str, ...], Path] = {}
    twice: list[str] = []
    for path in files:
        try:
            trial = _load(path, path in request.listed)
            if trial is None:
                skipped += 1
                continue
            # one trial seen twice (a copied trial or job folder) counts once
            key = ("id", trial.id) if trial.id is not None else (
                "name", str(path.parent.parent.resolve()), trial.trial_name)
            if key in seen:
                twice.append(f"{path} (the same trial as {seen[key]})")
                continue
            seen[key] = path
            row = _row(trial, path, request, (rule, pattern), float(threshold), policy)
        except InputError as exc:
            problems.append(str(exc))
            continue
        outcome = row.values
        if outcome["status"] == "error" and str(outcome["error_message"]).startswith("infra"):
            infra[str(outcome["error_class"])] += 1
        if outcome["error_class"] in AGENT_TIMEOUTS and outcome["score"] is not None:
            graded_timeouts += 1
        order = (
            outcome["case_id"], outcome["condition"], outcome["provider"],
            outcome["started_at"] or datetime.max.replace(tzinfo=UTC), trial.trial_name,
        )
        rows.append((order, row))
    if len(problems) == 1:
        raise InputError(problems[0])
    if problems:
        raise refusal(
            problems, len(rows) + len(problems), "Harbor trial result(s) cannot be imported"
        )
    if not rows:
        raise InputError(
            f"{request.files[0] if request.files else 'input'}: no Harbor trial result found "
            f"({skipped} job summary file(s) skipped); pass a job directory or trial directories"
        )
    ordered = [row for _, row in sorted(rows, key=lambda item: item[0])]
    number_trials(ordered, ("case_id", "condition", "provider"))
    warnings = []
    if twice:
        warnings.append(
            f"{len(twice)} trial result(s) repeat a trial already read (by id, or by trial name "
            f"within a job) and count once: first {twice[0]}"
        )
    if graded_timeouts:
        rule_text = {
            "failed": "are timeout rows, never a pass, evalkit's rule",
            "graded": "keep the verifier's verdict (status ok, error_class AgentTimeoutError)",
            "error": "are error rows, never a pass",
        }[policy]
        warnings.append(
            f"{graded_timeouts} trial(s) timed out and were still graded by the verifier; under "
            f"--timeout-policy {policy} they {rule_text} (graded, failed or error)"
        )
    if infra:
        said = ", ".join(f"{name} x{count}" for name, count in infra.most_common())
        warnings.append(
            f"{sum(infra.values())} trial(s) failed before the agent could answer "
            f"(infrastructure: {said}); they are error rows, counted as failures by the "
            "analyses: rerun them with Harbor to measure the agent"
        )
    suites = {Path(row.file).parent.parent.name for row in ordered}
    return ParsedSource(
        rows=ordered,
        suite=suites.pop() if len(suites) == 1 else "harbor",
        tool="harbor",
        warnings=warnings,
        duplicate_hint="two trial results are the same trial; pass each job directory once",
        files=[Path(row.file) for row in ordered],
    )
