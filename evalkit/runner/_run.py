"""Run a suite: plan, schedule, score, stream results to disk, write the manifest.

The steps, in the order :func:`run` takes them: :func:`~evalkit.runner._prepare.prepare` (the
plan, nothing written), the run directory and its lock, the manifest of a started run (a resume
keeps what its previous manifest carried), the items
(:func:`~evalkit.runner._execute_all.execute_all`, SIGTERM raised like SIGINT while they run),
then compaction, the judge, and the final manifest.
"""

from __future__ import annotations

import os
import secrets
import shutil
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import evalkit.runner._run_manifest as _run_manifest
from evalkit._paths import safe_run_id
from evalkit.cases import Suite, load_suite, stable_hash, store_skill_texts
from evalkit.errors import ConfigError, RunInterrupted, RunOutOfSpace, RunStopped
from evalkit.results import (
    EVENTS_FILE,
    RESULTS_FILE,
    SKILLS_DIR,
    FailureRecord,
    RunStatus,
    RunSummary,
    append_event,
    end_torn_line,
    resume_command,
    write_manifest,
)
from evalkit.runner._config import RunConfig
from evalkit.runner._execute import ItemOutcome
from evalkit.runner._execute_all import execute_all
from evalkit.runner._lock import hold_run_lock
from evalkit.runner._prepare import Prepared, prepare
from evalkit.runner._progress import RunProgress
from evalkit.runner._resume import check_resumable
from evalkit.runner._run_manifest import check_extension, exposed_texts, run_manifest
from evalkit.runner._scratch import make_scratch
from evalkit.runner._signals import _Stop, _Terminated, sigterm_raises
from evalkit.runner._space import describe_location, is_out_of_space
from evalkit.runner._store import LOG_FILE, PartWriter, compact, remove_temporary_files


@dataclass(frozen=True)
class RunResult(RunSummary):
    """Summary of a finished run; ``.to_dict()`` (the shared keys) is ``evalkit run --json``.

    Attributes:
        cache_hits: Items whose outcome came from the cache.
        manifest: The run's manifest.
        status: ``complete``, or ``failed`` when every item of the run, of a condition or of a
            provider ended in an error or a timeout (:func:`evalkit.results.find_failure`).
        failure: Where the errors were and the dominant error, for a failed run.
        judge: What the judge of the run's expectations did and cost (None without one).
        ungraded: Items with status ``ungraded`` (no outcome until a judge grades them).

    The other attributes are those of :class:`~evalkit.results.RunSummary`.
    """

    cache_hits: int = 0
    manifest: dict[str, Any] = field(default_factory=dict)
    status: RunStatus = "complete"
    failure: FailureRecord | None = None
    judge: dict[str, Any] | None = None
    ungraded: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit run --json`` object.

        ``status`` and ``failure`` extend the shared keys of
        :class:`~evalkit.results.RunSummary` (``failure`` is null for a healthy run), and
        ``judge`` is added only when the run was judged. Extended with ``ungraded``: items
        whose judged statements the run's judge could not grade (left out of ``pass_rate``).
        """
        out = super().to_dict()
        out["status"] = self.status
        out["ungraded"] = self.ungraded
        out["failure"] = None if self.failure is None else self.failure.model_dump(mode="json")
        if self.judge is not None:
            out["judge"] = self.judge
        return out


def _resume_command(config: RunConfig, run_id: str) -> str:
    return resume_command(config.command_line, run_id)


def _open_run_dir(config: RunConfig, run_id: str) -> Path:
    run_dir = Path(config.runs_dir) / safe_run_id(run_id)
    if config.resume and run_dir.is_dir():
        return run_dir
    Path(config.runs_dir).mkdir(parents=True, exist_ok=True)
    try:
        run_dir.mkdir()
    except FileExistsError:
        raise ConfigError(
            f"run '{run_id}' already exists in {config.runs_dir}; pass --resume to continue it "
            "or choose another --run-id"
        ) from None
    return run_dir


def run(suite: str | os.PathLike[str] | Suite, config: RunConfig | None = None) -> RunResult:
    """Run a suite's matrix and write a run directory.

    Args:
        suite: A suite directory or a loaded :class:`~evalkit.cases.Suite`.
        config: Run options; defaults come from the suite.

    Returns:
        The run summary; the tidy table is ``evalkit.read_run(result.run_dir)``. Its
        ``status`` is ``failed`` (with ``failure``) when every item of the run, of a condition
        or of a provider ended in an error or a timeout.

    Raises:
        evalkit.errors.InputError: Invalid suite or options (nothing is run).
        RunStopped: The provider refused the credentials or could not start in a worker; the
            remaining items were not started and ``--resume`` continues once fixed.
        RunInterrupted: SIGINT or SIGTERM; every finished item is on disk.
        RunOutOfSpace: The disk holding the run filled up (or a file size limit was hit);
            every flushed item is kept, temporary files are removed, and ``--resume``
            continues once space is freed.

    Examples:
        >>> from evalkit.runner import RunConfig
        >>> import tempfile
        >>> config = RunConfig(case_ids=("shell-strict-mode-header",), trials=2, progress=False,
        ...                    runs_dir=tempfile.mkdtemp(), concurrency=1)
        >>> result = run("cases/demo", config)
        >>> result.items
        8
    """
    config = config or RunConfig()
    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    prep = prepare(loaded, config)
    run_id = config.run_id or datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
    run_dir = _open_run_dir(config, run_id)
    with hold_run_lock(run_dir):
        return _run_locked(prep, config, run_id, run_dir)


def _run_locked(prep: Prepared, config: RunConfig, run_id: str, run_dir: Path) -> RunResult:
    """Run the plan into ``run_dir``, whose lock the caller holds; a full disk stops it cleanly."""
    try:
        remove_temporary_files(run_dir)  # of a writer killed mid-write: none is alive
        for name in (EVENTS_FILE, LOG_FILE):
            end_torn_line(run_dir / name)  # cut short by a full disk
        return _run_steps(prep, config, run_id, run_dir)
    except OSError as exc:
        if not is_out_of_space(exc):
            raise
        remove_temporary_files(run_dir)
        location = describe_location(exc, run_dir)
        try:
            append_event(run_dir, "run_out_of_space", error=str(exc), location=location)
        except OSError:
            pass  # the disk is full: the message on stderr is what counts
        raise RunOutOfSpace(run_id, run_dir, location, _resume_command(config, run_id)) from None


def _run_steps(prep: Prepared, config: RunConfig, run_id: str, run_dir: Path) -> RunResult:
    """Run the plan into ``run_dir``: manifest, items, parts, compaction, final manifest."""
    prep = _carried_over(prep, config, run_id, run_dir)
    store_skill_texts(run_dir / SKILLS_DIR, exposed_texts(prep))  # before the manifest names them
    write_manifest(run_dir, run_manifest(prep, config, run_id, "partial", {}))
    append_event(run_dir, "run_started", run_id=run_id, items=len(prep.items), resume=config.resume)
    writer = PartWriter(run_dir)
    done, notes = _finished_before(writer, run_dir) if config.resume else (set(), [])
    workspace_root = make_scratch(run_id)
    try:
        with sigterm_raises(), RunProgress(
            len(prep.items), f"{prep.suite.name} ({run_id})", config.progress
        ) as bar:
            bar.advance(len(done))
            for note in notes:
                bar.log(note)
            rejected = execute_all(prep, config, run_id, run_dir, writer, done, workspace_root, bar)
    except _Stop as stop:
        writer.flush()
        raise _stopped(stop.outcome, prep, config, run_id, run_dir, writer) from None
    except KeyboardInterrupt as exc:
        writer.flush()
        code = 143 if isinstance(exc, _Terminated) else 130
        append_event(run_dir, "run_interrupted", signal="SIGTERM" if code == 143 else "SIGINT")
        raise RunInterrupted(run_id, _resume_command(config, run_id), code) from None
    finally:
        shutil.rmtree(workspace_root, ignore_errors=True)
    writer.flush()
    return _finish(prep, config, run_id, run_dir, rejected)


def _carried_over(prep: Prepared, config: RunConfig, run_id: str, run_dir: Path) -> Prepared:
    """The plan with what its manifest keeps: a resumed run's ``sequential`` and own start.

    Raises:
        ConfigError: ``--resume`` of a run planned otherwise (without ``extend``), or an
            extension its finished items do not fit.
    """
    previous = check_resumable(run_dir, run_id) if config.resume else None
    if previous is not None:
        plan_hash = stable_hash([i.item_hash for i in prep.items])
        if previous.plan_hash not in (None, plan_hash):
            if not config.extend:
                raise ConfigError(
                    f"--resume: run '{run_id}' was planned from a different suite or "
                    "options (plan hash differs); start a new run instead"
                )
            check_extension(prep, run_dir, run_id)
        if previous.sequential is not None:
            prep = replace(prep, carried={**prep.carried, "sequential": previous.sequential})
        if previous.started_at is not None:  # a resumed run keeps its own start
            prep = replace(prep, carried={**prep.carried, "started_at": previous.started_at})
    if "started_at" not in prep.carried:
        started = _run_manifest.now().isoformat(timespec="seconds")
        prep = replace(prep, carried={**prep.carried, "started_at": started})
    return prep


def _finished_before(writer: PartWriter, run_dir: Path) -> tuple[set[str], list[str]]:
    """The item keys a resumed run already has, and warnings for transcripts it lost."""
    done, missing = writer.finished_keys()
    notes = []
    for shard, keys in sorted(missing.items()):
        append_event(run_dir, "transcripts_missing", shard=shard, items=len(keys))
        notes.append(
            f"warning: transcripts shard {run_dir / shard} is missing; "
            f"its {len(keys)} item(s) are run again"
        )
    return done, notes


def _finish(
    prep: Prepared, config: RunConfig, run_id: str, run_dir: Path, rejected: int
) -> RunResult:
    """Compact the parts, apply the judge, count, and write the final manifest."""
    results = compact(run_dir)[0]  # the scores table is not kept alive (700,000 rows at 100k)
    # pandas and pyarrow: only once every item is done
    from evalkit.judge import apply_judge
    from evalkit.results import RESULT_SCHEMA, find_failure, read_table

    judged = None
    if prep.judge is not None:
        del results  # apply_judge reads and rewrites the tables: one copy at a time
        judged = apply_judge(run_dir, prep.suite, prep.judge, concurrency=config.concurrency)
        results = read_table(run_dir, RESULTS_FILE, RESULT_SCHEMA)
    statuses = results.column("status").to_pylist()
    passed = results.column("passed").to_pylist()
    hits = results.column("cache_hit").to_pylist()
    counts = {
        "items": results.num_rows,
        "ok": statuses.count("ok"),
        "error": statuses.count("error"),
        "timeout": statuses.count("timeout"),
        "ungraded": statuses.count("ungraded"),
        "passed": sum(bool(p) for p in passed),
        "cache_hits": sum(bool(h) for h in hits),
        "cache_rejected": rejected,
    }
    failure = find_failure(
        results.select(["condition", "provider", "status", "error_class", "error_message"])
        .to_pandas()
    )
    status: RunStatus = "complete" if failure is None else "failed"
    manifest = write_manifest(
        run_dir, run_manifest(prep, config, run_id, status, counts, failure)
    )
    append_event(run_dir, "run_finished", status=status, **counts)
    if failure is not None:
        append_event(run_dir, "run_failed", **failure.model_dump(mode="json"))
    return RunResult.from_counts(
        run_id,
        run_dir,
        counts,
        cache_hits=counts["cache_hits"],
        manifest=manifest,
        status=status,
        failure=failure,
        judge=None if judged is None else judged.to_dict(),
        ungraded=counts["ungraded"],
    )


def _stopped(
    outcome: ItemOutcome,
    prep: Prepared,
    config: RunConfig,
    run_id: str,
    run_dir: Path,
    writer: PartWriter,
) -> RunStopped:
    """Record a run stopped by ``outcome`` (manifest, event) and build its exception."""
    error_class = str(outcome.row.get("error_class"))
    detail = str(outcome.row.get("error_message") or "")
    failure = FailureRecord(
        scope="provider", groups=[prep.provider_name], items=1, error_class=error_class,
        count=1, message=detail,
    )
    finished = len(writer.finished_keys()[0])
    write_manifest(
        run_dir, run_manifest(prep, config, run_id, "stopped", {"items": finished}, failure)
    )
    append_event(run_dir, "run_stopped", key=outcome.key, **failure.model_dump(mode="json"))
    return RunStopped(
        run_id, prep.provider_name, error_class, detail, finished, _resume_command(config, run_id)
    )


