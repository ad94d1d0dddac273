"""The items of a run: cached outcomes first, then the rest on the backend, each recorded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from evalkit._redact import redact_value
from evalkit.cases import SkillExposure
from evalkit.matrix import WorkItem
from evalkit.results import EventLog, append_event, append_line
from evalkit.runner._backends import close_quietly, parallel_map
from evalkit.runner._cache import CACHE_DIR, OutcomeCache
from evalkit.runner._collect import copy_origin_artifacts
from evalkit.runner._config import RunConfig
from evalkit.runner._execute import STOPPING_ERROR_CLASSES, ItemOutcome, ItemTask, execute_item
from evalkit.runner._prepare import Prepared, base_row
from evalkit.runner._progress import RunProgress
from evalkit.runner._signals import _Stop
from evalkit.runner._store import LOG_FILE, PartWriter

#: ``evalkit run -v`` lists up to this many cache hits one by one, more per case and condition.
CACHE_LIST_LIMIT = 20


def execute_all(
    prep: Prepared,
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
        row = base_row(item, prep, run_id) | entry["row"]
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
    prep: Prepared,
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
    row = base_row(item, prep, run_id) | outcome.row
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
