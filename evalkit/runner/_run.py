"""Run a suite: plan, schedule, score, stream results to disk, write the manifest."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from evalkit._git import git_sha
from evalkit._paths import safe_run_id
from evalkit._version import __version__
from evalkit.cases import SkillExposure, Suite, load_suite, stable_hash
from evalkit.errors import ConfigError, EvalkitError
from evalkit.matrix import ProviderSpec, WorkItem, build_plan
from evalkit.providers import ProviderInfo, canonical_settings, create_provider
from evalkit.results import (
    ConditionRecord,
    EventLog,
    Manifest,
    ProviderRecord,
    RunFilters,
    RunStatus,
    append_event,
    append_line,
    load_manifest,
    write_manifest,
)
from evalkit.runner._backends import parallel_map
from evalkit.runner._cache import CACHE_DIR, OutcomeCache
from evalkit.runner._config import RunConfig
from evalkit.runner._execute import ItemOutcome, ItemTask, execute_item
from evalkit.runner._lock import hold_run_lock
from evalkit.runner._progress import RunProgress
from evalkit.runner._resume import check_resumable
from evalkit.runner._scratch import make_scratch
from evalkit.runner._store import LOG_FILE, PartWriter, compact

_SECRET_WORDS = ("key", "token", "secret", "password", "authorization")


#: ``evalkit run -v`` lists up to this many cache hits one by one, more per case and condition.
CACHE_LIST_LIMIT = 20


class RunInterrupted(EvalkitError):
    """A run stopped by SIGINT or SIGTERM; everything finished is on disk.

    Attributes:
        run_id: The run.
        resume_command: The command that continues it.
        exit_code: 130 for SIGINT, 143 for SIGTERM.
    """

    def __init__(self, run_id: str, resume_command: str, exit_code: int) -> None:
        self.run_id = run_id
        self.resume_command = resume_command
        self.exit_code = exit_code
        super().__init__(f"run '{run_id}' interrupted; resume with: {resume_command}")


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like SIGINT."""


@dataclass(frozen=True)
class RunResult:
    """Summary of a finished run.

    Attributes:
        run_id: Run id.
        run_dir: Run directory.
        items: Work items in the run.
        ok: Items with status ``ok``.
        errors: Items with status ``error`` or ``timeout``.
        pass_rate: Share of items that passed (errors and timeouts count as failures).
        cache_hits: Items whose outcome came from the cache.
        manifest: The run's manifest.
    """

    run_id: str
    run_dir: Path
    items: int
    ok: int
    errors: int
    pass_rate: float
    cache_hits: int = 0
    manifest: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit run --json`` object."""
        return {
            "run_id": self.run_id,
            "run_dir": str(self.run_dir),
            "items": self.items,
            "ok": self.ok,
            "errors": self.errors,
            "pass_rate": self.pass_rate,
        }


def _redact(settings: dict[str, Any]) -> dict[str, Any]:
    return {
        k: ("***" if any(w in k.lower() for w in _SECRET_WORDS) else v) for k, v in settings.items()
    }


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
    )
    return _Prepared(
        suite, provider_name, spec.settings, info, tuple(conditions), trials, seed, items
    )


def _manifest(
    prep: _Prepared, config: RunConfig, run_id: str, status: RunStatus, counts: dict[str, int]
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
        conditions[name] = ConditionRecord(
            mode=cond.mode, variant=cond.variant, skill_hashes=hashes
        )
    return Manifest(
        run_id=run_id,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
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
                settings=_redact(dict(prep.settings)),
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
    }


def _resume_command(config: RunConfig, run_id: str) -> str:
    line = config.command_line or "evalkit run SUITE"
    if "--resume" not in line:
        line += " --resume"
    if "--run-id" not in line:
        line += f" --run-id {run_id}"
    return line


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
        The run summary; the tidy table is ``evalkit.read_run(result.run_dir)``.

    Raises:
        evalkit.errors.InputError: Invalid suite or options (nothing is run).
        RunInterrupted: SIGINT or SIGTERM; every finished item is on disk.

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
    """Run the plan into ``run_dir``, whose lock the caller holds."""
    if config.resume:
        check_resumable(run_dir, run_id)
        previous = load_manifest(run_dir)
        if previous is not None:
            plan_hash = stable_hash([i.item_hash for i in prep.items])
            if previous.plan_hash not in (None, plan_hash):
                raise ConfigError(
                    f"--resume: run '{run_id}' was planned from a different suite or options "
                    "(plan hash differs); start a new run instead"
                )
    write_manifest(run_dir, _manifest(prep, config, run_id, "partial", {}))
    append_event(run_dir, "run_started", run_id=run_id, items=len(prep.items), resume=config.resume)
    writer = PartWriter(run_dir)
    done = writer.finished_keys() if config.resume else set()
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
            _execute_all(prep, config, run_id, run_dir, writer, done, workspace_root, bar)
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
    results, _ = compact(run_dir)
    status = results.column("status").to_pylist()
    passed = results.column("passed").to_pylist()
    hits = results.column("cache_hit").to_pylist()
    counts = {
        "items": results.num_rows,
        "ok": status.count("ok"),
        "error": status.count("error"),
        "timeout": status.count("timeout"),
        "passed": sum(bool(p) for p in passed),
        "cache_hits": sum(bool(h) for h in hits),
    }
    manifest = write_manifest(run_dir, _manifest(prep, config, run_id, "complete", counts))
    append_event(run_dir, "run_finished", **counts)
    return RunResult(
        run_id=run_id,
        run_dir=run_dir,
        items=counts["items"],
        ok=counts["ok"],
        errors=counts["error"] + counts["timeout"],
        pass_rate=counts["passed"] / counts["items"] if counts["items"] else 0.0,
        cache_hits=counts["cache_hits"],
        manifest=manifest,
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
) -> None:
    cache = OutcomeCache(Path(config.runs_dir) / CACHE_DIR)
    pending: list[WorkItem] = []
    reused: list[WorkItem] = []
    by_key = {item.key: item for item in prep.items}
    for item in prep.items:
        if item.key in done:
            continue
        entry = cache.get(item.item_hash) if config.use_cache else None
        if entry is None:
            pending.append(item)
            continue
        row = _base_row(item, prep, run_id) | entry["row"] | {"cache_hit": True}
        for key in ("started_at", "finished_at"):
            row[key] = datetime.fromisoformat(row[key]) if row.get(key) else None
        scores = [s | {"item_key": item.key} for s in entry["scores"]]
        writer.add(row, scores, entry["response"])
        reused.append(item)
        bar.advance()
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
                cache_root=cache_root,
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
            _record(
                outcome, by_key[outcome.key], prep, config, run_id, run_dir, writer, events, bar
            )
    finally:
        events.close()


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
