"""Execute one work item in a worker: workspace, provider, scorers, a result row.

Everything an item produces leaves the worker through :func:`execute_item`, and it passes the
redactor there (:func:`redact_outcome`) before it is cached or sent back: the result row
(``error_message`` of HTTP errors and subprocess failures included), the score details, the
transcript and the item's log lines. Whatever the runner then writes (parquet parts,
transcript shards, ``items.log``, the outcome cache) and whatever a report shows of them holds
no secret the worker knew.
"""

from __future__ import annotations

import errno
import random
import shutil
import signal
import tempfile
import time
import traceback
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalkit._redact import redact_value, secret_values
from evalkit._settings import RETRIES
from evalkit._workspace_paths import relative_to_workspace
from evalkit.cases import AntiPatternRule, Case, SkillExposure
from evalkit.errors import InfraError, InputError, ProviderError, ProviderTimeout
from evalkit.matrix import WorkItem
from evalkit.providers import (
    AgentRequest,
    AgentResponse,
    Provider,
    cached_provider,
)
from evalkit.runner._cache import OutcomeCache
from evalkit.runner._collect import collect_artifacts
from evalkit.runner._space import disk_usage, filesystem_full, is_out_of_space
from evalkit.sandbox import Limits, copy_fixture, run_command
from evalkit.scorers import score_item

#: ``error_class`` of an item whose workspace used more than its quota.
WORKSPACE_QUOTA_CLASS = "workspace_quota"

#: ``error_class`` of an item whose provider could not be built or configured in the worker.
CONFIG_ERROR_CLASS = "config"

#: Error classes that mean no item can succeed until the user fixes something: the runner
#: stops the run at the first one instead of recording it.
STOPPING_ERROR_CLASSES = ("auth", CONFIG_ERROR_CLASS)


@dataclass(frozen=True)
class ItemTask:
    """Everything a worker needs to run one item (picklable).

    Attributes:
        item: The work item.
        case: Its case.
        exposure: Skill text its condition exposes.
        provider_settings: Provider settings (the provider is built once per worker).
        suite_root: Suite directory (fixtures are relative to it).
        workspace_root: Directory under which the item's workspace is created.
        pass_threshold: Suite pass threshold.
        anti_patterns: Suite-wide anti-pattern rules.
        retries: Retries of infrastructure errors.
        retry_backoff_s: Backoff base.
        workspace_quota_bytes: Disk space the item's workspace may use.
        cache_root: Outcome cache to store a successful outcome in (None: no caching).
        run_id: The run producing the outcome (stored in the cache entry as its origin).
        run_dir: Run directory that evidence items copy their artifacts into (None: none).
    """

    item: WorkItem
    case: Case
    exposure: tuple[SkillExposure, ...]
    provider_settings: tuple[tuple[str, Any], ...]
    suite_root: str
    workspace_root: str
    pass_threshold: float
    anti_patterns: tuple[AntiPatternRule, ...] = ()
    retries: int = RETRIES.default
    retry_backoff_s: float = 1.0
    workspace_quota_bytes: int = 2 << 30
    cache_root: str | None = None
    run_id: str = ""
    run_dir: str | None = None


@dataclass
class ItemOutcome:
    """What a worker sends back: the row's outcome fields, score rows, transcript and logs.

    Attributes:
        key: Item key.
        row: Outcome columns of the result row.
        scores: Rows of ``scores.parquet``.
        response: The transcript as JSON (``AgentResponse.to_json``), or None on error.
        logs: Buffered log lines.
        no_space: ``(errno, message, filename)`` when the item could not run because a disk
            was full (the runner then stops instead of recording an error row).
    """

    key: str
    row: dict[str, Any]
    scores: list[dict[str, Any]] = field(default_factory=list)
    response: dict[str, Any] | None = None
    logs: list[str] = field(default_factory=list)
    no_space: tuple[int, str, str | None] | None = None


#: ``error_message`` of a failed item is cut to this many characters, after redaction.
ERROR_MESSAGE_LIMIT = 2000


def redact_outcome(outcome: ItemOutcome) -> ItemOutcome:
    """The outcome with every string redacted (row, scores, transcript, log lines).

    The secrets are the secret environment variables of this process, including the ones the
    provider registered as its key (see :mod:`evalkit._redact`). ``error_message`` is cut to
    :data:`ERROR_MESSAGE_LIMIT` characters only after redaction, so no half secret survives.

    Args:
        outcome: The outcome as the item produced it.

    Returns:
        A redacted copy.
    """
    known = secret_values()
    row = redact_value(outcome.row, known)
    if isinstance(row.get("error_message"), str):
        row["error_message"] = row["error_message"][:ERROR_MESSAGE_LIMIT]
    return replace(
        outcome,
        row=row,
        scores=redact_value(outcome.scores, known),
        response=redact_value(outcome.response, known),
        logs=redact_value(outcome.logs, known),
    )


def _now() -> datetime:
    return datetime.now(UTC)


def _file_size_limited(exit_code: int | None, output: str) -> bool:
    """Whether a failed command hit this process's file size limit, lower than the sandbox's."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if soft == resource.RLIM_INFINITY or soft >= Limits().file_bytes:
        return False
    killed = exit_code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ)
    return killed or "File too large" in output or "FSIZE" in output


def _prepare_workspace(task: ItemTask, log: list[str]) -> Path:
    workspace = Path(tempfile.mkdtemp(prefix="ws-", dir=task.workspace_root))
    case = task.case
    if case.fixture:
        copy_fixture(Path(task.suite_root) / case.fixture, workspace)
    for command in case.setup:
        outcome = run_command(command, workspace, case.budgets.timeout_s)
        log.append(f"setup `{command}` -> exit {outcome.exit_code}")
        if outcome.exit_code != 0:
            if _file_size_limited(outcome.exit_code, outcome.output):
                # an inherited file size limit (ulimit -f) below the sandbox's: the disk
                # stop (exit 75), not a failure of every item's setup
                raise OSError(errno.EFBIG, "File too large (setup command)", str(workspace))
            raise ProviderError(f"setup command failed (exit {outcome.exit_code}): {command}")
    return workspace


def _invoke(
    provider: Provider, task: ItemTask, request: AgentRequest, log: list[str]
) -> AgentResponse:
    rng = random.Random(task.item.seed)
    for attempt in range(task.retries + 1):
        try:
            return provider.invoke(request)
        except InfraError as exc:
            if attempt == task.retries:
                raise
            delay = task.retry_backoff_s * (2**attempt) * (0.5 + rng.random())
            log.append(
                f"attempt {attempt + 1} failed ({exc.error_class}: {exc}); retry in {delay:.2f}s"
            )
            time.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def execute_item(task: ItemTask) -> ItemOutcome:
    """Run one work item; never raises (all-settled): failures become rows.

    Args:
        task: The item and everything needed to run it.

    Returns:
        The outcome. ``status`` is ``ok``, ``error`` or ``timeout``; errors and timeouts have
        ``passed=False`` and ``score=0``.
    """
    item, case = task.item, task.case
    logs: list[str] = []
    started = _now()
    t0 = time.perf_counter()
    row: dict[str, Any] = {"started_at": started, "status": "ok"}
    scores: list[dict[str, Any]] = []
    response_json = None
    no_space: tuple[int, str, str | None] | None = None
    workspace: Path | None = None
    try:
        provider = cached_provider(item.provider, task.provider_settings)
        hermetic = case.lane != "prompt" or getattr(provider, "needs_prompt_workspace", True)
        workspace = _prepare_workspace(task, logs) if hermetic else None
        request = AgentRequest(
            item_key=item.key,
            case=case,
            condition=item.condition,
            exposure=task.exposure,
            workspace=workspace or Path(task.workspace_root),
            seed=item.seed,
            timeout_s=case.budgets.timeout_s,
            max_steps=case.budgets.max_steps,
            log=logs.append,
        )
        response = _invoke(provider, task, request, logs)
        latency = time.perf_counter() - t0
        result = score_item(
            case,
            response,
            workspace,
            pass_threshold=task.pass_threshold,
            suite_anti_patterns=task.anti_patterns,
        )
        response_json = response.to_json()
        if result.evidence is not None and workspace is not None and task.run_dir is not None:
            logs += collect_artifacts(
                workspace, result.evidence, Path(task.run_dir), item.key, secret_values()
            )
        row.update(
            passed=result.passed,
            score=result.score,
            inferred_skill=result.inferred_skill,
            skill_loaded=result.skill_loaded,
            model=response.model,
            input_tokens=response.input_tokens,
            output_tokens=response.output_tokens,
            cost_usd=response.cost_usd,
            n_steps=response.n_steps,
            latency_s=latency,
        )
        scores = [
            {
                "item_key": item.key,
                "component": c.component,
                "value": float(c.value),
                "max_value": float(c.max_value),
                "passed": c.passed,
                "detail": c.detail,
            }
            for c in result.components
        ]
        scores.append(
            {
                "item_key": item.key,
                "component": "total",
                "value": result.score,
                "max_value": 1.0,
                "passed": result.passed,
                "detail": ", ".join(f"gate failed: {g}" for g in result.gate_failures),
            }
        )
    except Exception as exc:  # noqa: BLE001 - all-settled: every failure becomes a row
        if isinstance(exc, OSError) and is_out_of_space(exc):
            filename = str(exc.filename) if exc.filename is not None else None
            no_space = (exc.errno or 0, exc.strerror or str(exc), filename)
        elif filesystem_full(Path(task.workspace_root)):
            # e.g. shutil.Error from copying a fixture, which carries no errno
            no_space = (errno.ENOSPC, "No space left on device", task.workspace_root)
        status = "timeout" if isinstance(exc, ProviderTimeout) else "error"
        # a provider that cannot start in the worker (a binary gone since the run started,
        # a setting only the worker checks) is a configuration error, like a refused key
        error_class = (
            CONFIG_ERROR_CLASS
            if isinstance(exc, InputError)
            else getattr(exc, "error_class", type(exc).__name__)
        )
        if not isinstance(exc, ProviderError | InputError):
            logs.append("".join(traceback.format_exception(exc)).rstrip())
        row.update(
            status=status,
            error_class=error_class,
            error_message=relative_to_workspace(str(exc), workspace),
            passed=False,
            score=0.0,
            latency_s=time.perf_counter() - t0,
        )
    finally:
        if workspace is not None:
            used = disk_usage(workspace)
            if used > task.workspace_quota_bytes:
                # the item itself took the space: its own failure, recorded (so --resume
                # finishes), even when it filled the disk and its commands failed for it
                no_space = None
                row.update(
                    status="error",
                    error_class=WORKSPACE_QUOTA_CLASS,
                    error_message=(
                        f"the item's workspace used {used:,} bytes, more than its quota of "
                        f"{task.workspace_quota_bytes:,} (RunConfig.workspace_quota_bytes, "
                        "--workspace-quota)"
                    ),
                    passed=False,
                    score=0.0,
                )
                scores = []
                response_json = None
            elif no_space is None and filesystem_full(workspace):
                # commands that could not write in the workspace failed for lack of space,
                # not on their merits: the outcome is not used and the run stops
                no_space = (errno.ENOSPC, "No space left on device", task.workspace_root)
            shutil.rmtree(workspace, ignore_errors=True)
    row["finished_at"] = _now()
    outcome = redact_outcome(
        ItemOutcome(
            key=item.key,
            row=row,
            scores=scores,
            response=response_json,
            logs=logs,
            no_space=no_space,
        )
    )
    if task.cache_root is not None and outcome.row["status"] == "ok" and no_space is None:
        cached_row = dict(outcome.row) | {"origin_run_id": task.run_id or None}
        for key in ("started_at", "finished_at"):
            cached_row[key] = cached_row[key].isoformat()
        entry = {
            "row": cached_row,
            "scores": [{k: v for k, v in s.items() if k != "item_key"} for s in outcome.scores],
            "response": outcome.response,
        }
        try:
            OutcomeCache(Path(task.cache_root)).put(item.item_hash, entry)
        except OSError as exc:  # a full disk: the outcome stands, only its cache entry is lost
            outcome.logs.append(f"cache entry not written: {exc}")
    return outcome
