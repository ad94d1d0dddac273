"""Crash safety: SIGKILL at random moments then --resume; SIGINT flushes and exits 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import evalkit
from tests.conftest import TINY

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
        argv, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True, env=env
    )


def _outcomes(run_dir: Path) -> pd.DataFrame:
    df = evalkit.read_run(run_dir)
    return df[["item_key", "passed", "score", "status"]].reset_index(drop=True)


def test_sigkill_at_random_moments_then_resume_matches_uninterrupted(runs_dir: Path) -> None:
    reference = _start(runs_dir, "reference")
    assert reference.wait(timeout=300) == 0
    expected = _outcomes(runs_dir / "reference")

    rng = np.random.default_rng(2026)
    kills = 0
    proc = _start(runs_dir, "crashy")
    while True:
        if kills == 12:
            assert proc.wait(timeout=300) == 0
            break
        try:
            assert proc.wait(timeout=float(rng.uniform(0.2, 2.0))) == 0
            break  # completed before the next kill
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            kills += 1
        proc = _start(runs_dir, "crashy", "--resume")
    assert kills >= 10
    got = _outcomes(runs_dir / "crashy")
    assert got["item_key"].is_unique
    pd.testing.assert_frame_equal(got, expected)
    manifest = json.loads((runs_dir / "crashy" / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["counts"]["items"] == len(expected)
    events = (runs_dir / "crashy" / "events.jsonl").read_text().splitlines()
    assert all(json.loads(line) for line in events), "no torn event lines"
    assert 2 <= sum('"run_started"' in line for line in events) <= kills + 1


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
