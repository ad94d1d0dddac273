"""The crash-safe writers every run directory and ledger goes through."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from evalkit.results import EVENTS_FILE, EventLog, append_event, append_line, write_json_atomic

LINE = 8192  # larger than a pipe buffer and than stdio's: only a single write keeps it whole


def _writer(path: str, tag: str, count: int) -> None:
    for i in range(count):
        append_line(path, json.dumps({"tag": tag, "i": i, "pad": tag * LINE}))


def test_concurrent_processes_never_tear_a_line(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_writer, args=(str(path), tag, 200)) for tag in "abcd"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 800
    for tag in "abcd":
        mine = [r["i"] for r in records if r["tag"] == tag]
        assert mine == list(range(200))
        assert all(r["pad"] == r["tag"] * LINE for r in records)


def test_event_log_and_append_event_write_the_same_lines(tmp_path: Path) -> None:
    log = EventLog(tmp_path)
    log.emit("run_started", items=3)
    log.close()
    append_event(tmp_path, "run_finished", items=3, where=tmp_path)
    lines = (tmp_path / EVENTS_FILE).read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    assert [e["event"] for e in events] == ["run_started", "run_finished"]
    assert all(isinstance(e["ts"], float) and e["items"] == 3 for e in events)
    assert events[1]["where"] == str(tmp_path)


def test_append_line_adds_exactly_one_newline(tmp_path: Path) -> None:
    path = tmp_path / "items.log"
    append_line(path, "a")
    append_line(path, "b\n")
    append_line(path, "c\nd")
    assert path.read_text(encoding="utf-8") == "a\nb\nc\nd\n"


def test_write_json_atomic_replaces_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    write_json_atomic(path, {"n": 1})
    write_json_atomic(path, {"n": 2, "when": tmp_path})
    assert json.loads(path.read_text(encoding="utf-8")) == {"n": 2, "when": str(tmp_path)}
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]
