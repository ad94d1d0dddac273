"""Crash safety: SIGKILL at moments defined by progress, then --resume; SIGINT exits 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from tests.conftest import TINY, with_default_sigint

pytestmark = pytest.mark.serial  # signals at moments of a run, then resume: not beside other tests

BASE_ARGS = [
    "--json",
    "--trials",
    "12",
    "--no-progress",
    "--no-cache",
    "--concurrency",
    "2",
    "--provider-opt",
    "latency_s=0.06",
    "--seed",
    "7",
]


def _start(
    runs_dir: Path, run_id: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    argv = [
        sys.executable,
        "-m",
        "evalkit",
        "run",
        str(TINY),
        "--runs-dir",
        str(runs_dir),
        "--run-id",
        run_id,
        *BASE_ARGS,
        *extra,
    ]
    stderr = subprocess.PIPE if env is not None else subprocess.DEVNULL
    return subprocess.Popen(
        with_default_sigint(argv),
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        start_new_session=True,
        env=env,
    )


def _outcomes(run_dir: Path) -> pd.DataFrame:
    df = evalkit.read_run(run_dir)
    return df[["item_key", "passed", "score", "status"]].reset_index(drop=True)


#: Where each SIGKILL lands, by progress rather than by the clock: ``("started", 0)`` as soon as
#: the attempt logged ``run_started`` (workers still starting), ``("items", n)`` after ``n`` items
#: of this attempt finished (some not flushed yet), ``("flushed", n)`` after this attempt wrote
#: a new results part and then ``n`` more items finished.
KILL_MOMENTS = [
    ("started", 0),
    ("items", 1),
    ("flushed", 0),
    ("items", 7),
    ("started", 0),
    ("flushed", 3),
    ("items", 15),
    ("flushed", 1),
    ("items", 3),
    ("started", 0),
    ("flushed", 8),
    ("items", 25),
]


def _events(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _parts(run_dir: Path) -> int:
    return len(list((run_dir / "parts").glob("results-*.parquet")))


def _wait_for_moment(
    proc: subprocess.Popen[bytes], run_dir: Path, moment: tuple[str, int], timeout: float = 300
) -> bool:
    """Wait until ``moment`` of this attempt is reached; False if the run finished first."""
    kind, count = moment
    events = run_dir / "events.jsonl"
    seen = len(_events(events))
    parts = _parts(run_dir)
    flushed_at: int | None = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        new = _events(events)[seen:]
        started = any('"run_started"' in line for line in new)
        finished = sum('"item_finished"' in line for line in new)
        if kind == "started" and started:
            return True
        if kind == "items" and finished >= count:
            return True
        if kind == "flushed":
            if flushed_at is None and _parts(run_dir) > parts:
                flushed_at = finished
            if flushed_at is not None and finished >= flushed_at + count:
                return True
        time.sleep(0.01)
    raise AssertionError(f"moment {moment} not reached in {timeout}s")


@pytest.mark.slow
def test_sigkill_at_progress_moments_then_resume_matches_uninterrupted(runs_dir: Path) -> None:
    reference = _start(runs_dir, "reference")
    assert reference.wait(timeout=300) == 0
    expected = _outcomes(runs_dir / "reference")

    run_dir = runs_dir / "crashy"
    kills = 0
    rows_at_kill = []
    proc = _start(runs_dir, "crashy")
    for moment in KILL_MOMENTS:
        if not _wait_for_moment(proc, run_dir, moment):
            break  # the run completed before this moment
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
        rows_at_kill.append(len(evalkit.read_run(run_dir)) if _parts(run_dir) else 0)
        proc = _start(runs_dir, "crashy", "--resume")
    assert proc.wait(timeout=300) == 0
    assert kills >= 10, f"only {kills} kills landed before the run completed"
    assert rows_at_kill[0] == 0, "the first kill landed during start-up"
    assert max(rows_at_kill) > 0, "some kills landed after items were on disk"
    got = _outcomes(run_dir)
    assert got["item_key"].is_unique
    pd.testing.assert_frame_equal(got, expected)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["counts"]["items"] == len(expected)
    events = (run_dir / "events.jsonl").read_text().splitlines()
    assert all(json.loads(line) for line in events), "no torn event lines"
    assert sum('"run_started"' in line for line in events) == kills + 1


@pytest.mark.slow
def test_sigint_flushes_and_exits_130(runs_dir: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch))
    proc = _start(runs_dir, "interrupted", "--provider-opt", "latency_s=0.05", env=env)
    events = runs_dir / "interrupted" / "events.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if events.exists() and events.read_text().count("item_finished") >= 10:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    message = err.decode()
    assert "resume with:" in message and "--resume" in message
    finished = evalkit.read_run(runs_dir / "interrupted")
    assert len(finished) >= 10, "every finished item was flushed"
    assert finished["item_key"].is_unique
    assert list(scratch.iterdir()) == [], "no leftover workspaces"
    resumed = _start(runs_dir, "interrupted", "--resume")
    assert resumed.wait(timeout=300) == 0
    assert len(evalkit.read_run(runs_dir / "interrupted")) == 4 * 4 * 12


def test_sigterm_exits_143(runs_dir: Path) -> None:
    proc = _start(runs_dir, "terminated", "--provider-opt", "latency_s=0.05", env=dict(os.environ))
    events = runs_dir / "terminated" / "events.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
        events.exists() and "item_finished" in events.read_text()
    ):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert len(evalkit.read_run(runs_dir / "terminated")) >= 1
