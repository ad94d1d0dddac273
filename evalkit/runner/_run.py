"""Run a suite: plan, schedule, score, stream results to disk, write the manifest."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from evalkit._git import git_sha
from evalkit._paths import safe_run_id
from evalkit._redact import redact_settings, redact_value
from evalkit._version import __version__
from evalkit.cases import SkillExposure, Suite, load_suite, stable_hash
from evalkit.errors import ConfigError, RunInterrupted, RunOutOfSpace, RunStopped
from evalkit.judge import Judge, check_judgeable, make_judge, resolve_judge_spec
from evalkit.matrix import ProviderSpec, WorkItem, build_plan
from evalkit.providers import ProviderInfo, canonical_settings, create_provider
from evalkit.results import (
    EVENTS_FILE,
    RESULTS_FILE,
    ConditionRecord,
    EventLog,
    FailureRecord,
    Manifest,
    ProviderRecord,
    RunFilters,
    RunStatus,
    RunSummary,
    append_event,
    append_line,
    end_torn_line,
    resume_command,
    write_manifest,
)
from evalkit.runner._backends import close_quietly, parallel_map
from evalkit.runner._cache import CACHE_DIR, OutcomeCache
from evalkit.runner._collect import copy_origin_artifacts
from evalkit.runner._config import RunConfig
from evalkit.runner._execute import (
    STOPPING_ERROR_CLASSES,
    ItemOutcome,
    ItemTask,
    execute_item,
)
from evalkit.runner._lock import hold_run_lock
from evalkit.runner._progress import RunProgress
from evalkit.runner._resume import check_resumable
from evalkit.runner._scratch import make_scratch
from evalkit.runner._space import describe_location, is_out_of_space
from evalkit.runner._store import LOG_FILE, PartWriter, compact, remove_temporary_files

#: ``evalkit run -v`` lists up to this many cache hits one by one, more per case and condition.
CACHE_LIST_LIMIT = 20


class _Stop(Exception):
    """An outcome that stops the run (see :data:`STOPPING_ERROR_CLASSES`)."""

    def __init__(self, outcome: ItemOutcome) -> None:
        self.outcome = outcome
        super().__init__(outcome.key)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like SIGINT."""


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


def _apply_overrides(suite: Suite, config: RunConfig) -> Suite:
    for override in config.skills:
        path = Path(override.path)
        if not path.is_file():
            raise ConfigError(f"--skill {override.skill}={path}: file not found")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--skill {override.skill}={path}: cannot read text: {exc}") from None
        suite = suite.with_skill_text(override.skill, text, override.variant)
    for described in config.descriptions:
        suite = suite.with_skill_description(described.skill, described.text)
    return suite


@dataclass(frozen=True)
class _Prepared:
    suite: Suite
    provider_name: str
    settings: tuple[tuple[str, Any], ...]
    info: ProviderInfo
    conditions: tuple[str, ...]
    trials: int
    seed: int
    items: list[WorkItem]
    deterministic: bool = False
    judge: Judge | None = None
    carried: dict[str, Any] = field(default_factory=dict)
    """Manifest keys a resumed run keeps from its previous manifest (``sequential``,
    ``started_at``)."""


def _prepare_judge(suite: Suite, config: RunConfig, cases: list[Any]) -> Judge | None:
    """The judge of the planned cases' expectations (None when no planned case is judged)."""
    spec = resolve_judge_spec(
        suite.spec.judge, config.judge_provider, config.judge_model, config.judge_options
    )
    judged = [case for case in cases if case.is_judged]
    if not judged:
        return None
    judge = None if spec is None else make_judge(
        spec,
        config.runs_dir,
        use_cache=config.use_cache,
        retries=config.retries,
        retry_backoff_s=config.retry_backoff_s,
    )
    check_judgeable(judge, judged)
    return judge


def _prepare(suite: Suite, config: RunConfig) -> _Prepared:
    suite = _apply_overrides(suite, config)
    defaults = suite.spec.defaults
    provider_name = config.provider or defaults.provider
    settings = dict(suite.spec.providers.get(provider_name, {}))
    settings.update(config.provider_options)
    if config.model:
        settings["model"] = config.model
    provider = create_provider(provider_name, settings)
    info = provider.info()
    conditions = config.conditions or defaults.conditions
    for name in conditions:
        if name not in suite.conditions:
            known = ", ".join(sorted(suite.conditions))
            raise ConfigError(f"--conditions: unknown condition '{name}'; suite defines: {known}")
    cases = suite.select(
        case_ids=config.case_ids, lanes=config.lanes, tags=config.tags, splits=config.splits
    )
    if not cases:
        raise ConfigError("no cases match the filters (--case, --lane, --tags, --split)")
    for case in cases:
        for name in conditions:
            suite.exposure(case, name)  # raises ConfigError on a missing skill variant
    judge = _prepare_judge(suite, config, list(cases))
    trials = config.trials or defaults.trials
    seed = config.seed if config.seed is not None else defaults.seed
    outcome = tuple(sorted(provider.outcome_settings().items()))
    # validated once here; workers rebuild the provider from this canonical JSON form
    canonical = canonical_settings(provider, settings)
    spec = ProviderSpec(provider_name, info.model, tuple(sorted(canonical.items())), outcome)
    items = build_plan(
        suite,
        case_ids=[c.id for c in cases],
        conditions=conditions,
        providers=[spec],
        trials=trials,
        seed=seed,
        pass_threshold=defaults.pass_threshold,
        case_trials=config.case_trials,
    )
    return _Prepared(
        suite,
        provider_name,
        spec.settings,
        info,
        tuple(conditions),
        trials,
        seed,
        items,
        deterministic=bool(getattr(provider, "deterministic", False)),
        judge=judge,
    )


def _now() -> datetime:
    """The current UTC time: the runner's one clock (tests replace it to place runs in time)."""
    return datetime.now(UTC)


def _manifest(
    prep: _Prepared,
    config: RunConfig,
    run_id: str,
    status: RunStatus,
    counts: dict[str, int],
    failure: FailureRecord | None = None,
) -> Manifest:
    suite = prep.suite
    conditions = {}
    for name in prep.conditions:
        cond = suite.conditions[name]
        hashes = {
            skill: stable_hash(texts.texts.get(cond.variant, ""))
            for skill, texts in sorted(suite.skills.items())
            if cond.mode != "none"
        }
        record = ConditionRecord(mode=cond.mode, variant=cond.variant, skill_hashes=hashes)
        if cond.mode == "self-load":  # what the agent's skill index showed
            record.descriptions = {
                skill: texts.description for skill, texts in sorted(suite.skills.items())
            }
        conditions[name] = record
    return Manifest(
        run_id=run_id,
        created_at=_now().isoformat(timespec="seconds"),
        evalkit_version=__version__,
        suite=suite.name,
        suite_path=str(suite.root),
        suite_git_sha=git_sha(suite.root),
        dataset_version=suite.dataset_version,
        conditions=conditions,
        providers=[
            ProviderRecord(
                name=prep.info.name,
                model=prep.info.model,
                version=prep.info.version,
                settings=redact_settings(dict(prep.settings)),
            )
        ],
        trials=prep.trials,
        seed=prep.seed,
        concurrency=config.concurrency,
        backend=config.backend,
        filters=RunFilters(
            lanes=list(config.lanes),
            cases=list(config.case_ids),
            tags=list(config.tags),
            splits=list(config.splits),
        ),
        plan_hash=stable_hash([i.item_hash for i in prep.items]),
        command_line=config.command_line,
        status=status,
        counts=counts,
        **({"failure": failure} if failure is not None else {}),
        **({"judge": prep.judge.record()} if prep.judge is not None else {}),
        **prep.carried,
    )


def _base_row(item: WorkItem, prep: _Prepared, run_id: str) -> dict[str, Any]:
    case = prep.suite.case(item.case_id)
    return {
        "run_id": run_id,
        "item_key": item.key,
        "item_hash": item.item_hash,
        "suite": prep.suite.name,
        "dataset_version": prep.suite.dataset_version,
        "lane": item.lane,
        "case_id": item.case_id,
        "category": case.category,
        "split": case.split,
        "tags": ",".join(sorted(case.tags)),
        "expected_skill": case.expected_skill,
        "condition": item.condition,
        "skill_hash": item.skill_hash,
        "provider": item.provider,
        "model": prep.info.model,
        "provider_version": prep.info.version,
        "trial": item.trial,
        "seed": item.seed,
        "cache_hit": False,
        "transcript_path": None,
        "origin_run_id": run_id,
        "provider_deterministic": prep.deterministic,
    }


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
    prep = _prepare(loaded, config)
    run_id = config.run_id or datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
    run_dir = _open_run_dir(config, run_id)
    with hold_run_lock(run_dir):
        return _run_locked(prep, config, run_id, run_dir)


def _run_locked(prep: _Prepared, config: RunConfig, run_id: str, run_dir: Path) -> RunResult:
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


def _run_steps(prep: _Prepared, config: RunConfig, run_id: str, run_dir: Path) -> RunResult:
    """Run the plan into ``run_dir``: manifest, items, parts, compaction, final manifest."""
    if config.resume:
        previous = check_resumable(run_dir, run_id)
        if previous is not None:
            plan_hash = stable_hash([i.item_hash for i in prep.items])
            if previous.plan_hash not in (None, plan_hash):
                if not config.extend:
                    raise ConfigError(
                        f"--resume: run '{run_id}' was planned from a different suite or "
                        "options (plan hash differs); start a new run instead"
                    )
                _check_extension(prep, run_dir, run_id)
            if previous.sequential is not None:
                prep = replace(prep, carried={**prep.carried, "sequential": previous.sequential})
            if previous.started_at is not None:  # a resumed run keeps its own start
                prep = replace(prep, carried={**prep.carried, "started_at": previous.started_at})
    if "started_at" not in prep.carried:
        started = _now().isoformat(timespec="seconds")
        prep = replace(prep, carried={**prep.carried, "started_at": started})
    write_manifest(run_dir, _manifest(prep, config, run_id, "partial", {}))
    append_event(run_dir, "run_started", run_id=run_id, items=len(prep.items), resume=config.resume)
    writer = PartWriter(run_dir)
    done: set[str] = set()
    notes: list[str] = []
    if config.resume:
        done, missing = writer.finished_keys()
        for shard, keys in sorted(missing.items()):
            append_event(run_dir, "transcripts_missing", shard=shard, items=len(keys))
            notes.append(
                f"warning: transcripts shard {run_dir / shard} is missing; "
                f"its {len(keys)} item(s) are run again"
            )
    workspace_root = make_scratch(run_id)
    previous_handler = signal.getsignal(signal.SIGTERM)

    def _on_term(signum: int, frame: FrameType | None) -> None:
        raise _Terminated()

    in_main = _is_main_thread()
    if in_main:
        signal.signal(signal.SIGTERM, _on_term)
    try:
        with RunProgress(len(prep.items), f"{prep.suite.name} ({run_id})", config.progress) as bar:
            bar.advance(len(done))
            for note in notes:
                bar.log(note)
            rejected = _execute_all(
                prep, config, run_id, run_dir, writer, done, workspace_root, bar
            )
    except _Stop as stop:
        writer.flush()
        raise _stopped(stop.outcome, prep, config, run_id, run_dir, writer) from None
    except KeyboardInterrupt as exc:
        writer.flush()
        code = 143 if isinstance(exc, _Terminated) else 130
        append_event(run_dir, "run_interrupted", signal="SIGTERM" if code == 143 else "SIGINT")
        raise RunInterrupted(run_id, _resume_command(config, run_id), code) from None
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous_handler)
        shutil.rmtree(workspace_root, ignore_errors=True)
    writer.flush()
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
        run_dir, _manifest(prep, config, run_id, status, counts, failure)
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


def _check_extension(prep: _Prepared, run_dir: Path, run_id: str) -> None:
    """Refuse to extend a run whose finished items are not items of the new, larger plan.

    Raises:
        ConfigError: A finished item is absent from the plan or has another item hash.
    """
    from evalkit.results import RESULT_SCHEMA, read_table

    planned = {item.key: item.item_hash for item in prep.items}
    finished = read_table(run_dir, RESULTS_FILE, RESULT_SCHEMA).select(["item_key", "item_hash"])
    for key, item_hash in zip(
        finished.column("item_key").to_pylist(),
        finished.column("item_hash").to_pylist(),
        strict=True,
    ):
        if planned.get(key) != item_hash:
            raise ConfigError(
                f"--resume: run '{run_id}' cannot grow into this plan: its finished item "
                f"{key!r} is not an item of it (other suite, options or seed); start a new run "
                "instead"
            )


def _stopped(
    outcome: ItemOutcome,
    prep: _Prepared,
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
        run_dir, _manifest(prep, config, run_id, "stopped", {"items": finished}, failure)
    )
    append_event(run_dir, "run_stopped", key=outcome.key, **failure.model_dump(mode="json"))
    return RunStopped(
        run_id, prep.provider_name, error_class, detail, finished, _resume_command(config, run_id)
    )


def _is_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _execute_all(
    prep: _Prepared,
    config: RunConfig,
    run_id: str,
    run_dir: Path,
    writer: PartWriter,
    done: set[str],
    workspace_root: Path,
    bar: RunProgress,
) -> int:
    """Run every item not done: cached outcomes first, then the rest on the backend.

    Returns:
        The number of cache entries rejected (their items were run again).
    """
    cache = OutcomeCache(Path(config.runs_dir) / CACHE_DIR)
    pending: list[WorkItem] = []
    reused: list[WorkItem] = []
    by_key = {item.key: item for item in prep.items}
    rejected = 0
    for item in prep.items:
        if item.key in done:
            continue
        lookup = cache.lookup(item.item_hash) if config.use_cache else None
        if lookup is not None and lookup.rejected is not None:
            rejected += 1
            _report_rejected(run_dir, bar, item, lookup.path, lookup.rejected, rejected)
        entry = lookup.entry if lookup is not None else None
        if entry is None:
            pending.append(item)
            continue
        entry = redact_value(entry)  # entries written before outcomes were redacted
        # the producing run's id (None for entries written before it was recorded: unknown)
        origin = entry["row"].get("origin_run_id")
        row = _base_row(item, prep, run_id) | entry["row"]
        row |= {"cache_hit": True, "origin_run_id": origin}
        scores = [s | {"item_key": item.key} for s in entry["scores"]]
        if item.lane == "evidence":
            copy_origin_artifacts(Path(config.runs_dir), origin, run_dir, item.key)
        writer.add(row, scores, entry["response"])
        reused.append(item)
        bar.advance()
    if rejected > _REJECTED_SHOWN:
        bar.log(
            f"warning: {rejected} cache entries rejected in all (each is listed in "
            f"{run_dir / 'events.jsonl'}); their items were run again"
        )
    if reused:
        append_event(run_dir, "cache_hits", count=len(reused))
    if config.verbose:
        for line in cache_report(reused, cache.root):
            bar.log(line)

    suite = prep.suite
    suite_root = str(suite.root.resolve())
    cases = {case.id: case for case in suite.cases}
    exposures: dict[tuple[str, str], tuple[SkillExposure, ...]] = {}
    cache_root = str(cache.root) if config.use_cache else None

    def tasks() -> Iterator[ItemTask]:
        for item in pending:
            case = cases[item.case_id]
            pair = (item.case_id, item.condition)
            if pair not in exposures:
                exposures[pair] = suite.exposure(case, item.condition)
            yield ItemTask(
                item=item,
                case=case,
                exposure=exposures[pair],
                provider_settings=prep.settings,
                suite_root=suite_root,
                workspace_root=str(workspace_root),
                pass_threshold=suite.spec.defaults.pass_threshold,
                anti_patterns=suite.spec.anti_patterns,
                retries=config.retries,
                retry_backoff_s=config.retry_backoff_s,
                workspace_quota_bytes=config.workspace_quota_bytes,
                cache_root=cache_root,
                run_id=run_id,
                run_dir=str(run_dir.resolve()),
            )

    outcomes = parallel_map(
        execute_item,
        tasks(),
        backend=config.backend,
        concurrency=config.concurrency,
        scheduler=config.scheduler,
    )
    events = EventLog(run_dir)
    try:
        for outcome in outcomes:
            if outcome.row.get("error_class") in STOPPING_ERROR_CLASSES:
                raise _Stop(outcome)
            _record(
                outcome, by_key[outcome.key], prep, config, run_id, run_dir, writer, events, bar
            )
    finally:
        # items not started yet never start; those in flight are dropped (a resume runs them)
        close_quietly(outcomes)
        events.close()
    return rejected


#: Rejected cache entries named one by one on stderr (all of them go to ``events.jsonl``).
_REJECTED_SHOWN = 20


def _report_rejected(
    run_dir: Path, bar: RunProgress, item: WorkItem, path: Path, reason: str, count: int
) -> None:
    """Log one rejected cache entry: always in ``events.jsonl``, on stderr for the first few."""
    append_event(run_dir, "cache_rejected", key=item.key, path=str(path), reason=reason)
    if count <= _REJECTED_SHOWN:
        bar.log(f"warning: cache entry {path} rejected: {reason}; {item.key} is run again")


def cache_report(reused: list[WorkItem], cache_root: Path) -> list[str]:
    """What ``evalkit run -v`` says about the items it took from the cache.

    Args:
        reused: The items whose outcome came from the cache, in plan order.
        cache_root: The cache directory.

    Returns:
        A count line, then one line per item key, or (beyond :data:`CACHE_LIST_LIMIT` items)
        one line per ``lane:case_id:condition:provider`` with its count of trials.
    """
    if not reused:
        return []
    lines = [
        f"cache: {len(reused)} item(s) reused from {cache_root} (same item hash: case, skill "
        "text, provider settings, scorer version, trial and seed); --no-cache reruns them"
    ]
    if len(reused) <= CACHE_LIST_LIMIT:
        return lines + [f"cache hit: {item.key}" for item in reused]
    groups: dict[str, int] = {}
    for item in reused:
        group = ":".join((item.lane, item.case_id, item.condition, item.provider))
        groups[group] = groups.get(group, 0) + 1
    return lines + [f"cache hit: {group}: {count} trial(s)" for group, count in groups.items()]


def _record(
    outcome: ItemOutcome,
    item: WorkItem,
    prep: _Prepared,
    config: RunConfig,
    run_id: str,
    run_dir: Path,
    writer: PartWriter,
    events: EventLog,
    bar: RunProgress,
) -> None:
    if outcome.no_space is not None:
        code, message, filename = outcome.no_space
        raise OSError(code, message, filename)  # not a result: the run stops, the item reruns
    row = _base_row(item, prep, run_id) | outcome.row
    if outcome.logs:
        lines = [f"[{item.key}] {line}" for log in outcome.logs for line in log.splitlines()]
        append_line(run_dir / LOG_FILE, "\n".join(lines))
        if config.verbose:
            for line in lines:
                bar.log(line)
    writer.add(row, outcome.scores, outcome.response)
    events.emit(
        "item_finished",
        key=item.key,
        status=row["status"],
        passed=row.get("passed"),
        score=row.get("score"),
    )
    bar.advance(error=row["status"] != "ok")
