"""The index of a runs directory: one row per run, cheap enough to rebuild every second.

A run's row comes from its manifest (suite, providers, conditions, trials, status, start), its
lock (running or interrupted, :mod:`evalkit.viewer._state`) and, while it runs, from its
``events.jsonl``: ``run_started`` says how many items are planned and each ``item_finished``
adds one done (and one passed, under its condition). A finished run's pass rates per condition
and its items served from the cache (and the runs they came from) are read from its
``results.parquet`` (:mod:`evalkit.viewer._outcomes`). The events file only grows, so each run's
file is read from where the last look stopped. A directory that is not a readable run gives a
row with its ``error`` instead of stopping the index.

Only regular files are read, in bounded reads (:mod:`evalkit.viewer._files`): a FIFO, a device
or a link in place of a run's manifest or events is an error row, never a reader that waits.
No lock is held while a file is read: a look takes a run's offset under the lock, reads without
it, and keeps what it read only if no other look moved the offset meanwhile.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit._keys import parse_item_key
from evalkit._paths import is_inside, unsafe_component_reason
from evalkit._untrusted import load_json
from evalkit.errors import InputError
from evalkit.results import EVENTS_FILE, MANIFEST_FILE
from evalkit.viewer._files import read_bounded, read_regular
from evalkit.viewer._outcomes import GRADED, OutcomeCache, Outcomes
from evalkit.viewer._state import run_state

#: Most bytes of new events read for one run in one look (the rest at the next look).
EVENTS_CHUNK_BYTES = 8 * 1024 * 1024
#: Most bytes of a manifest the index reads (a run's manifest is a few kilobytes).
MANIFEST_MAX_BYTES = 16 * 1024 * 1024


@dataclass
class _Tail:
    """How far a run's events file has been read, and what it said so far."""

    offset: int = 0
    planned: int | None = None
    done: int = 0
    finished: int = 0
    passed: int = 0
    cached: int = 0
    by_condition: dict[str, list[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class RunRow:
    """One run of the index (``to_dict()`` is a row of ``/api/runs``).

    ``pass_rate`` pools every condition (kept for scripts); the page shows ``rates``, one per
    condition (``condition, graded, passed, rate``), and ``rates_cover`` says which items
    they cover. ``state`` is ``running``, ``interrupted``, ``stopped``, ``failed`` or
    ``complete`` (``status`` is the manifest's), ``resume`` the command that resumes an
    interrupted or stopped run; ``cached`` counts the items served from the cache and
    ``cache_from`` names the runs that produced them.
    """

    run_id: str
    suite: str = ""
    providers: list[str] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    trials: int | None = None
    done: int | None = None
    planned: int | None = None
    status: str = ""
    started_at: str = ""
    pass_rate: float | None = None
    error: str = ""
    state: str = ""
    state_note: str = ""
    resume: str = ""
    rates: list[dict[str, Any]] = field(default_factory=list)
    rates_cover: str = ""
    cached: int | None = None
    cache_from: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return dict(self.__dict__)


class RunIndex:
    """The runs of one directory, looked at again on every :meth:`rows` call.

    Args:
        runs_dir: The runs directory (only its direct subdirectories are runs).
    """

    def __init__(self, runs_dir: str | Path) -> None:
        self.root = Path(runs_dir).resolve()
        self._tails: dict[str, _Tail] = {}
        self._lock = threading.Lock()
        self._outcomes = OutcomeCache()

    def run_dir(self, run_id: str) -> Path | None:
        """The directory of ``run_id`` when it is a run inside the root (no link out).

        A run id is one plain directory name of the root (no separator, no leading ``.``, no
        control or format character), never a path: nothing outside the root is looked at,
        the current directory included.
        """
        if run_id.startswith(".") or unsafe_component_reason(run_id) is not None:
            return None
        path = self.root / run_id
        if not is_inside(run_id, self.root) or not os.path.lexists(path / MANIFEST_FILE):
            return None
        return path

    def rows(self) -> list[RunRow]:
        """Every run, newest start first (a damaged one with its ``error``)."""
        found = []
        try:
            entries = sorted(p for p in self.root.iterdir() if p.is_dir())
        except OSError:
            return []
        for path in entries:
            if path.name.startswith(".") or not os.path.lexists(path / MANIFEST_FILE):
                continue
            unsafe = unsafe_component_reason(path.name)
            if unsafe is not None:
                found.append(RunRow(path.name, error=f"not served: the directory name {unsafe}; "
                                    "rename it to a plain name"))
                continue
            if self.run_dir(path.name) is None:
                found.append(RunRow(path.name, error="links outside the runs directory"))
                continue
            found.append(self._row(path))
        return sorted(found, key=lambda r: (r.started_at, r.run_id), reverse=True)

    def _row(self, path: Path) -> RunRow:
        try:
            manifest = _manifest(path)
        except Exception as exc:  # a hostile or damaged run is a row, never a crash
            return RunRow(path.name, error=f"manifest unreadable: {str(exc)[:300]}")
        if not isinstance(manifest, dict):
            return RunRow(path.name, error="manifest is not a JSON object")
        try:
            tail = self._events(path)
        except Exception as exc:
            return RunRow(path.name, error=f"events unreadable: {str(exc)[:300]}")
        found_counts = manifest.get("counts")
        counts: dict[str, Any] = found_counts if isinstance(found_counts, dict) else {}
        status = str(manifest.get("status") or "")
        finished = status in ("complete", "failed", "stopped")
        items = counts.get("items") if finished else None
        done = items if isinstance(items, int) else tail.done
        passed = counts.get("passed") if finished else tail.passed
        planned = tail.planned if tail.planned is not None else (
            items if isinstance(items, int) else None
        )
        graded = (counts.get("ok", 0) + counts.get("error", 0) + counts.get("timeout", 0)) if (
            finished) else tail.finished  # while it runs: the items finished here
        rate = (passed / graded) if isinstance(passed, int) and graded else None
        found_providers = manifest.get("providers")
        providers: list[Any] = found_providers if isinstance(found_providers, list) else []
        conditions = manifest.get("conditions")
        state = run_state(path, manifest)
        outcomes: Outcomes | None = None
        if finished:
            try:
                outcomes = self._outcomes.get(path)
            except Exception:  # a damaged results file: the pooled counts still stand
                outcomes = None
        if outcomes is not None and outcomes.by_condition:
            tallies = {c: list(v) for c, v in outcomes.by_condition.items()}
            cover = f"all {sum(g for g, _ in outcomes.by_condition.values()):,} graded items"
            cached: int | None = outcomes.cached
            cache_from = list(outcomes.cache_from)
        else:
            tallies = tail.by_condition
            cover = (f"the {tail.finished:,} items finished so far (it moves until the "
                     "run ends)") if not finished else "the items its events record"
            if tail.cached:
                cover += f"; {tail.cached:,} items from the cache are not in them"
            cached = tail.cached if tail.cached or tail.planned is not None else None
            cache_from = []
        rates = [
            {"condition": c, "graded": g, "passed": p, "rate": (p / g) if g else None}
            for c, (g, p) in sorted(tallies.items())
        ]
        return RunRow(
            run_id=path.name,
            suite=str(manifest.get("suite") or ""),
            providers=[str(p.get("name", "")) + (f"/{p['model']}" if p.get("model") else "")
                       for p in providers if isinstance(p, dict)],
            conditions=sorted(str(c) for c in conditions) if isinstance(conditions, dict) else [],
            trials=manifest.get("trials") if isinstance(manifest.get("trials"), int) else None,
            done=done,
            planned=planned,
            status=status,
            started_at=str(manifest.get("started_at") or manifest.get("created_at") or ""),
            pass_rate=rate,
            state=state.state,
            state_note=state.note,
            resume=state.resume,
            rates=rates,
            rates_cover=cover if rates else "",
            cached=cached,
            cache_from=cache_from,
        )

    def _events(self, run_dir: Path) -> _Tail:
        """The run's events read on from the last look (a partial last line waits).

        The lock guards the offsets only; the file is read without it.
        """
        with self._lock:
            tail = self._tails.setdefault(run_dir.name, _Tail())
            start = tail.offset
        chunk = read_regular(run_dir / EVENTS_FILE, EVENTS_CHUNK_BYTES, offset=start)
        end = chunk.rfind(b"\n") if chunk else -1
        with self._lock:
            if end >= 0 and tail.offset == start:  # else another look read it meanwhile
                tail.offset += end + 1
                for line in chunk[: end + 1].splitlines():  # type: ignore[index]
                    _read_event(tail, line)
            return dataclasses.replace(
                tail, by_condition={c: list(v) for c, v in tail.by_condition.items()})


def _manifest(run_dir: Path) -> object:
    """A run's manifest as plain JSON, read as a regular file within the bound ({} if none)."""
    path = run_dir / MANIFEST_FILE
    data = read_bounded(path, MANIFEST_MAX_BYTES)
    if data is None:
        return {}
    try:
        return load_json(data, path)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from exc


def _read_event(tail: _Tail, line: bytes) -> None:
    if not any(kind in line for kind in (b'"item_finished"', b'"run_started"', b'"cache_hits"')):
        return
    try:
        event = load_json(line, EVENTS_FILE)  # within the bounds of untrusted JSON
    except ValueError:
        return
    if not isinstance(event, dict):
        return
    kind = event.get("event")
    if kind == "run_started":
        items = event.get("items")
        if isinstance(items, int):
            tail.planned = items
        if not event.get("resume"):
            tail.done = tail.finished = tail.passed = tail.cached = 0
            tail.by_condition = {}
    elif kind == "cache_hits" and isinstance(event.get("count"), int):
        tail.done += event["count"]  # outcomes taken from the cache: done, not run here
        tail.cached += event["count"]
    elif kind == "item_finished":
        tail.done += 1
        tail.finished += 1
        tail.passed += event.get("passed") is True
        if event.get("status") in GRADED:
            tally = tail.by_condition.setdefault(_condition(event.get("key")), [0, 0])
            tally[0] += 1
            tally[1] += event.get("passed") is True


def _condition(key: object) -> str:
    """The condition of an item key (``?`` when the key is not one)."""
    try:
        return parse_item_key(str(key)).condition
    except ValueError:
        return "?"
