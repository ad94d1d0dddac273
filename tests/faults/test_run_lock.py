"""One writer per run: a second writer is refused while the first lives; resume needs a manifest."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import evalkit
from evalkit.results import load_manifest
from tests.conftest import TINY

pytestmark = pytest.mark.serial  # a lock held by a killed process: not beside other tests

ARGS = ["--no-progress", "--no-cache", "--trials", "6", "--seed", "3", "--concurrency", "2"]


def _argv(runs_dir: Path, run_id: str, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "evalkit", "run", str(TINY), "--runs-dir", str(runs_dir),
        "--run-id", run_id, *ARGS, *extra,
    ]  # fmt: skip


def _start(runs_dir: Path, run_id: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _argv(runs_dir, run_id, *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _wait_for_items(events: Path, count: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if events.exists() and events.read_text().count('"item_finished"') >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} items finished in {timeout}s")


def test_second_writer_is_refused_while_the_first_runs(runs_dir: Path) -> None:
    # The first run is stopped (SIGSTOP) after its second item: alive, lock held, mid-run,
    # however long the two second writers take to start on a busy machine; then it goes on.
    first = _start(runs_dir, "busy", "--trials", "10", "--provider-opt", "latency_s=0.02")
    try:
        _wait_for_items(runs_dir / "busy" / "events.jsonl", 2)
        os.killpg(first.pid, signal.SIGSTOP)
        resume, fresh = (
            subprocess.Popen(
                _argv(runs_dir, "busy", *extra),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            for extra in (["--resume"], [])
        )
        _, resume_err = resume.communicate(timeout=120)
        _, fresh_err = fresh.communicate(timeout=120)
        assert first.poll() is None, "the first run was still going when both were refused"
        finished = (runs_dir / "busy" / "events.jsonl").read_text().count('"item_finished"')
        assert finished < 160, "the first run was stopped mid-run"
    finally:
        if first.poll() is None and sys.exc_info()[0] is not None:
            os.killpg(first.pid, signal.SIGKILL)
        else:
            os.killpg(first.pid, signal.SIGCONT)
    assert resume.returncode == 2, resume_err
    assert f"pid {first.pid}" in resume_err
    assert f"host {socket.gethostname()}" in resume_err
    assert "started 20" in resume_err and "Traceback" not in resume_err
    assert fresh.returncode == 2, fresh_err
    assert "already exists" in fresh_err and "Traceback" not in fresh_err
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    table = evalkit.read_run(runs_dir / "busy")
    assert len(table) == 4 * 4 * 10 and table["item_key"].is_unique
    assert table["transcript_path"].notna().all()
    for shard in table["transcript_path"].unique():
        assert (runs_dir / "busy" / shard).is_file(), "every row points at a transcript on disk"
    manifest = load_manifest(runs_dir / "busy").to_json()
    assert manifest["status"] == "complete" and manifest["counts"]["items"] == 160


def test_lock_of_a_killed_run_is_released(runs_dir: Path) -> None:
    first = _start(runs_dir, "killed", "--provider-opt", "latency_s=0.05")
    _wait_for_items(runs_dir / "killed" / "events.jsonl", 2)
    os.killpg(first.pid, signal.SIGKILL)
    first.communicate(timeout=60)
    resumed = subprocess.run(
        _argv(runs_dir, "killed", "--resume"), capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    assert len(evalkit.read_run(runs_dir / "killed")) == 96


def _partial_run(runs_dir: Path, run_id: str) -> Path:
    proc = _start(runs_dir, run_id, "--provider-opt", "latency_s=0.05")
    _wait_for_items(runs_dir / run_id / "events.jsonl", 10)
    parts = runs_dir / run_id / "parts"
    deadline = time.monotonic() + 120
    while not any(parts.glob("results-*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.05)  # kill once a part is on disk, however slow the machine
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    run_dir = runs_dir / run_id
    assert any((run_dir / "parts").glob("results-*.parquet")), "some items were flushed"
    return run_dir


def test_resume_without_manifest_is_refused(runs_dir: Path) -> None:
    run_dir = _partial_run(runs_dir, "no-manifest")
    (run_dir / "manifest.json").unlink()
    proc = subprocess.run(
        _argv(runs_dir, "no-manifest", "--resume", "--trials", "1"),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert str(run_dir / "manifest.json") in proc.stderr and "is missing" in proc.stderr
    assert "another --run-id" in proc.stderr and "Traceback" not in proc.stderr


def test_resume_with_unreadable_manifest_is_refused(runs_dir: Path) -> None:
    run_dir = _partial_run(runs_dir, "bad-manifest")
    (run_dir / "manifest.json").write_text('{"run_id": "bad-manif')
    proc = subprocess.run(
        _argv(runs_dir, "bad-manifest", "--resume"), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    assert str(run_dir / "manifest.json") in proc.stderr and "cannot be read" in proc.stderr
    assert "Traceback" not in proc.stderr
