"""``--format terminal-bench``: Terminal-Bench 1.0 run directories (``tb run``) as a run.

Terminal-Bench 1.0 writes a run directory holding ``run_metadata.json`` (the agent, the model,
the attempts), ``results.json`` (``BenchmarkResults``: every trial's ``TrialResults`` under
``results``) and one folder per trial, ``<task_id>/<trial_name>/``, with the trial's own
``results.json`` and its panes. A trial listed in the run's ``results.json`` and in its own
file is read once. The mapping (``docs/import.md``):

- ``task_id`` -> ``case_id``; ``agent_name/model_name`` of ``run_metadata.json`` ->
  ``provider`` and ``model_name`` -> ``model``;
- condition: the run directory's name (``run``, default), or ``agent-kwarg:NAME`` (the value
  of ``agent_kwargs[NAME]`` in ``run_metadata.json``);
- trials numbered 0, 1, ... within (case, condition, provider) by the attempt in the trial
  name (``task.2-of-3.run``), then by start time;
- ``is_resolved`` -> ``passed``; the share of ``parser_results`` tests that passed -> ``score``;
- ``failure_mode``: a trial the tests graded keeps its verdict (``status`` ``ok``, the failure
  mode as ``error_class``), except an agent timeout, which follows the timeout policy:
  ``graded`` (default: the verdict stands, as on the Terminal-Bench leaderboard), ``failed``
  (a ``timeout`` row, never a pass: evalkit's own rule) or ``error`` (an ``error`` row); a
  trial the tests did not grade is a ``timeout`` row (agent or test timeout) or an ``error``
  row (parse error, unknown agent error, installation failure, ...), never a pass;
- tokens from ``total_input_tokens``/``total_output_tokens``; ``latency_s`` from the agent's
  start and end;
- the reason: a ``verifier`` score row for every graded trial (value = share of tests passed,
  passed = ``is_resolved``, detail ``failed tests: test_a, test_b`` with the failure mode and
  the last lines of ``panes/post-test.txt``); an ungraded trial's message ends with those lines.

Every invalid trial is reported at once (up to
:data:`~evalkit.interop._import_refusal.MAX_LISTED`, then a count).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evalkit._paths import unsafe_component_reason
from evalkit.errors import InputError
from evalkit.interop._import_common import (
    ParsedSource,
    SourceRow,
    fail,
    file_tail,
    number_trials,
    read_json,
    short_error,
    source_text,
)
from evalkit.interop._import_options import TerminalBenchOptions
from evalkit.interop._import_refusal import refusal
from evalkit.interop._import_registry import ImportRequest
from evalkit.interop._import_transcripts import trial_response

RUN_FILE = "results.json"
METADATA_FILE = "run_metadata.json"
POST_TEST_PANE = "panes/post-test.txt"
_OUTPUT_LIMIT = 300
_INT64 = 2**63 - 1
_ATTEMPT = re.compile(r"\.(\d+)-of-(\d+)(?:\.|$)")
_EXPECTED = (
    "expected a Terminal-Bench 1.0 results.json: a run's BenchmarkResults (id, results: "
    "[TrialResults], accuracy, ...) or a trial's TrialResults (trial_name, task_id, "
    "is_resolved, failure_mode, parser_results, ...)"
)
#: Failure modes of a trial whose tests did not finish: a timeout row when ungraded.
TIMEOUT_MODES = frozenset({"agent_timeout", "test_timeout"})
#: Failure modes that say nothing went wrong.
CLEAN_MODES = frozenset({"unset", "none"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class TerminalBenchTrial(_Model):
    """The fields of Terminal-Bench 1.0's ``TrialResults`` that evalkit reads."""

    id: str | None = None
    """Trial id (a UUID)."""
    trial_name: str
    """``<task_id>.<attempt>-of-<n>.<run_id>``."""
    task_id: str
    """The task: the case."""
    is_resolved: bool | None = None
    """All tests passed; None when the tests did not grade the trial."""
    failure_mode: str = "unset"
    """``FailureMode`` value (``none``, ``agent_timeout``, ``parse_error``, ...)."""
    parser_results: dict[str, str] | None = None
    """Test name -> ``passed``/``failed``."""
    total_input_tokens: int | None = Field(default=None, ge=0, le=_INT64)
    """Input tokens."""
    total_output_tokens: int | None = Field(default=None, ge=0, le=_INT64)
    """Output tokens."""
    trial_started_at: datetime | None = None
    """Trial start."""
    trial_ended_at: datetime | None = None
    """Trial end."""
    agent_started_at: datetime | None = None
    """Agent start."""
    agent_ended_at: datetime | None = None
    """Agent end."""

    @field_validator("task_id", "trial_name")
    @classmethod
    def _one_directory_name(cls, value: str) -> str:
        # both name the trial's directory, <task_id>/<trial_name>, whose panes are read
        reason = unsafe_component_reason(value)
        if reason is not None:
            raise ValueError(f"{value!r} {reason}; Terminal-Bench names a directory with it")
        return value


class _RunMetadata(_Model):
    run_id: str | None = None
    agent_name: str | None = None
    model_name: str | None = None
    agent_kwargs: dict[str, Any] | None = None


class _Located:
    """A trial with where it was read and which run it belongs to."""

    def __init__(self, trial: TerminalBenchTrial, file: Path, where: str, run_dir: Path) -> None:
        self.trial, self.file, self.where, self.run_dir = trial, file, where, run_dir


def _condition_rule(text: str | None) -> tuple[str, str | None]:
    rule = text or "run"
    if rule == "run":
        return rule, None
    if rule.startswith("agent-kwarg:") and rule.removeprefix("agent-kwarg:"):
        return "agent-kwarg", rule.removeprefix("agent-kwarg:")
    raise InputError(
        f"--condition-from {rule!r}: a Terminal-Bench import takes 'run' (default: the run "
        "directory's name) or 'agent-kwarg:NAME' (agent_kwargs[NAME] in run_metadata.json)"
    )


def is_terminal_bench(data: Any) -> bool:
    """Whether parsed JSON is a Terminal-Bench 1.0 ``BenchmarkResults`` or ``TrialResults``."""
    if not isinstance(data, dict):
        return False
    if isinstance(data.get("results"), list) and "accuracy" in data:
        return True
    return "task_id" in data and "trial_name" in data and "is_resolved" in data


def _validation_problem(exc: ValidationError) -> str:
    """Every field a validation error names, with what is wrong with it."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
    )


def _trials(
    path: Path, listed: bool, problems: list[str]
) -> tuple[list[_Located], bool]:
    """The trials of one file (problems appended, not raised); False when not Terminal-Bench."""
    data = read_json(path, _EXPECTED)
    if not is_terminal_bench(data):
        if listed:
            return [], False
        raise fail(path, "", f"not a Terminal-Bench 1.0 result; {_EXPECTED}")
    if "results" in data:  # the run's BenchmarkResults
        items = [(item, f"results[{i}]") for i, item in enumerate(data["results"])]
        run_dir = path.parent
    else:
        items, run_dir = [(data, "")], path.parent.parent.parent
    found = []
    for item, where in items:
        label = f"{path}: {where}" if where else str(path)
        if not isinstance(item, dict):
            problems.append(f"{label}: a JSON {type(item).__name__}, not a TrialResults object")
            continue
        name = item.get("trial_name")
        if name:
            label += f" (trial {name})"
        try:
            trial = TerminalBenchTrial.model_validate(item)
        except ValidationError as exc:
            problems.append(f"{label}: {_validation_problem(exc)}")
            continue
        found.append(_Located(trial, path, where or f"trial {trial.trial_name}", run_dir))
    return found, True


def _metadata(run_dir: Path, cache: dict[Path, _RunMetadata | None]) -> _RunMetadata | None:
    if run_dir not in cache:
        path = run_dir / METADATA_FILE
        meta = None
        if path.is_file():
            data = read_json(path, "expected Terminal-Bench's RunMetadata")
            try:
                meta = _RunMetadata.model_validate(data)
            except ValidationError as exc:
                raise fail(path, "", _validation_problem(exc)) from None
        cache[run_dir] = meta
    return cache[run_dir]


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    began, ended = _utc(start), _utc(end)
    if began is None or ended is None:
        return None
    return max(0.0, (ended - began).total_seconds())


def _share_passed(trial: TerminalBenchTrial) -> float:
    results = trial.parser_results or {}
    if not results:
        return float(bool(trial.is_resolved))
    return sum(v == "passed" for v in results.values()) / len(results)


def outcome(trial: TerminalBenchTrial, policy: str) -> dict[str, Any]:
    """status, passed, score, error_class and error_message of one trial under ``policy``."""
    mode = trial.failure_mode
    named = None if mode in CLEAN_MODES else mode
    if trial.is_resolved is not None:
        score = _share_passed(trial)
        if mode == "agent_timeout" and policy != "graded":
            verdict = "resolved" if trial.is_resolved else "unresolved"
            return {
                "status": "timeout" if policy == "failed" else "error", "passed": False,
                "score": score, "error_class": mode,
                "error_message": f"the agent timed out; the tests then graded the trial "
                f"{verdict} (--timeout-policy {policy})",
            }
        return {
            "status": "ok", "passed": bool(trial.is_resolved), "score": score,
            "error_class": named,
            "error_message": None if named is None else f"agent ended with {mode}; "
            "the tests still graded the trial",
        }
    if mode in TIMEOUT_MODES:
        what = "the agent" if mode == "agent_timeout" else "the tests"
        return {
            "status": "timeout", "passed": False, "score": None, "error_class": mode,
            "error_message": f"{what} timed out; the trial was not graded",
        }
    return {
        "status": "error", "passed": False, "score": None, "error_class": named or "not_graded",
        "error_message": "the trial was not graded (is_resolved is null)",
    }


def _reasons(
    trial: TerminalBenchTrial, values: dict[str, Any], output: str | None
) -> list[dict[str, Any]]:
    """The ``verifier`` score row of a graded trial; an ungraded one's message gets the pane."""
    if trial.is_resolved is None:
        if output is not None:
            values["error_message"] = f"{values['error_message']} · test pane: {output}"
        return []
    results = trial.parser_results or {}
    failed = [name for name, status in results.items() if status != "passed"]
    if failed:
        detail = "failed tests: " + ", ".join(failed)
    elif results:
        detail = f"all {len(results)} tests passed"
    else:
        detail = "no test results parsed"
    if trial.failure_mode not in CLEAN_MODES:
        detail += f" (agent ended with {trial.failure_mode})"
    if output is not None:
        detail += f": {output}"
    return [
        {"component": "verifier", "value": values["score"], "max_value": 1.0,
         "passed": bool(trial.is_resolved), "detail": source_text(detail)}
    ]


def _attempt(name: str) -> int | None:
    match = _ATTEMPT.search(name)
    return int(match.group(1)) if match else None


def _refuse(problems: list[str], total: int) -> InputError:
    return refusal(problems, total, "Terminal-Bench trial(s) are not valid TrialResults")


def read_terminal_bench(request: ImportRequest) -> ParsedSource:
    """Read Terminal-Bench 1.0 run directories or ``results.json`` files (module docstring).

    Args:
        request: The ``results.json`` files (a directory is listed for them),
            and its :class:`~evalkit.interop._import_options.TerminalBenchOptions`.

    Returns:
        The rows, trials numbered by attempt, then start time, within (case, condition,
        provider).

    Raises:
        InputError: A file that is not Terminal-Bench output, invalid trials (all of them
            named, up to :data:`~evalkit.interop._import_refusal.MAX_LISTED`), a bad
            ``--condition-from``.
    """
    options = request.options_as(TerminalBenchOptions)
    rule, kwarg = _condition_rule(options.condition_from)
    # an agent timeout the tests still graded keeps its verdict by default, as the
    # leaderboard counts it
    policy = options.timeout_policy
    problems: list[str] = []
    located: list[_Located] = []
    skipped = 0
    for path in request.files:
        found, recognised = _trials(path, path in request.listed, problems)
        skipped += not recognised
        located += found
    total = len(located) + len(problems)
    if problems:
        raise _refuse(problems, total)
    seen: dict[str, _Located] = {}
    unique: list[_Located] = []
    for item in located:
        key = item.trial.id or f"{item.run_dir}/{item.trial.trial_name}"
        first = seen.get(key)
        if first is None:
            seen[key] = item
            unique.append(item)
        elif first.run_dir.resolve() != item.run_dir.resolve():
            raise fail(
                item.file, item.where, f"trial {key} is also in {first.file}: one trial passed "
                "twice (a copied run directory?); pass each run once"
            )
    if not unique:
        raise InputError(
            f"{request.files[0] if request.files else 'input'}: no Terminal-Bench trial found "
            f"({skipped} other results.json file(s) skipped); pass a run directory (tb run's "
            "runs/<run_id>) or its results.json"
        )
    metadata: dict[Path, _RunMetadata | None] = {}
    rows: list[tuple[tuple[Any, ...], SourceRow]] = []
    modes: Counter[str] = Counter()
    for item in unique:
        trial, meta = item.trial, _metadata(item.run_dir, metadata)
        agent = (meta.agent_name if meta else None) or "agent"
        model = meta.model_name if meta else None
        provider = f"{agent}/{model}" if model else agent
        if rule == "run":
            condition = (meta.run_id if meta and meta.run_id else None) or item.run_dir.name
        else:
            value = (meta.agent_kwargs or {}).get(kwarg or "") if meta else None
            if value is None:
                raise fail(
                    item.run_dir / METADATA_FILE, f"agent_kwargs.{kwarg}",
                    f"missing: --condition-from agent-kwarg:{kwarg} needs it in every run",
                )
            condition = str(value)
        values = {
            "lane": request.lane,
            "case_id": trial.task_id,
            "condition": condition,
            "provider": provider,
            "model": model,
            "trial": None,
            "latency_s": _seconds(trial.agent_started_at, trial.agent_ended_at),
            "input_tokens": trial.total_input_tokens,
            "output_tokens": trial.total_output_tokens,
            "started_at": _utc(trial.trial_started_at),
            "finished_at": _utc(trial.trial_ended_at),
            **outcome(trial, policy),
        }
        if values["error_message"] is not None:
            values["error_message"] = short_error(values["error_message"])
        row = SourceRow(
            values=values, file=str(item.file), where=item.where,
            identity={"trial_name": trial.trial_name, "task_id": trial.task_id,
                      "id": trial.id},
        )
        trial_dir = item.run_dir / trial.task_id / trial.trial_name
        output = file_tail(trial_dir / POST_TEST_PANE, limit=_OUTPUT_LIMIT)
        row.scores = _reasons(trial, values, output)
        row.transcript, row.transcript_note = trial_response(trial_dir, values.get("model"))
        if trial.is_resolved is not None and trial.failure_mode == "agent_timeout":
            modes["graded agent_timeout"] += 1
        attempt = _attempt(trial.trial_name)
        order = (
            trial.task_id, condition, provider, attempt if attempt is not None else 1 << 30,
            values["started_at"] or datetime.max.replace(tzinfo=UTC), trial.trial_name,
        )
        rows.append((order, row))
    ordered = [row for _, row in sorted(rows, key=lambda pair: pair[0])]
    number_trials(ordered, ("case_id", "condition", "provider"))
    warnings = []
    if modes:
        graded = modes["graded agent_timeout"]
        rule_text = {
            "graded": "kept their verdict (status ok, error_class agent_timeout), as the "
            "Terminal-Bench leaderboard counts them",
            "failed": "are timeout rows, never a pass",
            "error": "are error rows, never a pass",
        }[policy]
        warnings.append(
            f"{graded} trial(s) timed out and were still graded by their tests; under "
            f"--timeout-policy {policy} they {rule_text} (graded, failed or error)"
        )
    runs = {item.run_dir.name for item in unique}
    return ParsedSource(
        rows=ordered,
        suite=runs.pop() if len(runs) == 1 else "terminal-bench",
        tool="terminal-bench",
        warnings=warnings,
        duplicate_hint="two trials share a task, condition and attempt; pass each run once",
        files=sorted({item.file for item in unique}),
    )
