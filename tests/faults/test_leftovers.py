"""Nothing left behind: workers die with the runner, stale scratch is swept, Ctrl-C is quiet."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import evalkit
from tests.conftest import TINY, with_default_sigint

pytestmark = pytest.mark.serial  # killed runs and their processes: not beside other tests

ARGS = ["--no-progress", "--no-cache", "--trials", "8", "--seed", "5", "--concurrency", "2"]


def _start(
    runs_dir: Path, run_id: str, *extra: str, tmpdir: Path | None = None
) -> subprocess.Popen[str]:
    argv = [
        sys.executable, "-m", "evalkit", "run", str(TINY), "--runs-dir", str(runs_dir),
        "--run-id", run_id, *ARGS, *extra,
    ]  # fmt: skip
    env = dict(os.environ, TMPDIR=str(tmpdir)) if tmpdir is not None else None
    return subprocess.Popen(
        with_default_sigint(argv),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=env,
    )


def _children(pid: int) -> dict[int, str]:
    """Live (non-zombie) children of ``pid``: pid -> command line."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[1]) == pid:
            out[int(entry.name)] = cmdline
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_until(condition: object, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _finished(events: Path) -> int:
    return events.read_text().count('"item_finished"') if events.exists() else 0


def test_workers_and_trackers_exit_after_parent_sigkill(runs_dir: Path) -> None:
    proc = _start(runs_dir, "orphans", "--provider-opt", "latency_s=0.1")
    events = runs_dir / "orphans" / "events.jsonl"
    _wait_until(lambda: _finished(events) >= 4, "4 finished items")
    children = _children(proc.pid)
    workers = [pid for pid, cmd in children.items() if "popen_loky_posix" in cmd]
    trackers = [pid for pid, cmd in children.items() if "resource_tracker" in cmd]
    assert len(workers) == 2 and trackers, children
    os.kill(proc.pid, signal.SIGKILL)  # the runner only, as the OOM killer would
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(pid) for pid in children):
        time.sleep(0.05)
    left = {pid: children[pid] for pid in children if _alive(pid)}
    for pid in left:
        os.kill(pid, signal.SIGKILL)  # do not leak them into the rest of the suite
    assert not left, f"still running 20 s after the runner died: {left}"


def test_stale_scratch_is_swept_on_resume(runs_dir: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    live = scratch / f"evalkit-run-{os.getpid()}-other-run-abc"  # a live owner: kept
    live.mkdir()
    unrelated = scratch / "evalkit-run-notapid"
    unrelated.mkdir()
    proc = _start(runs_dir, "swept", "--provider-opt", "latency_s=0.05", tmpdir=scratch)
    _wait_until(lambda: _finished(runs_dir / "swept" / "events.jsonl") >= 4, "4 items")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    stale = [p for p in scratch.iterdir() if p.name.startswith(f"evalkit-run-{proc.pid}-swept-")]
    assert len(stale) == 1, list(scratch.iterdir())
    resumed = _start(runs_dir, "swept", "--resume", tmpdir=scratch)
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert sorted(p.name for p in scratch.iterdir()) == sorted([live.name, unrelated.name])
    assert len(evalkit.read_run(runs_dir / "swept")) == 4 * 4 * 8


def _sigint_at(runs_dir: Path, run_id: str, moment: str) -> subprocess.CompletedProcess[str]:
    proc = _start(runs_dir, run_id, "--provider-opt", "latency_s=0.1")
    events = runs_dir / run_id / "events.jsonl"
    if moment == "run_started":
        _wait_until(lambda: events.exists() and "run_started" in events.read_text(), moment)
    else:  # the workers exist but may still be importing
        _wait_until(
            lambda: any("popen_loky_posix" in c for c in _children(proc.pid).values()), moment
        )
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
    _, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err)


def test_group_sigint_during_startup_prints_no_worker_traceback(runs_dir: Path) -> None:
    # a Ctrl-C at run_started lands while the workers are launched: the race worth repeating
    moments = ["run_started"] * 4 + ["workers_spawned"] * 2
    for index, moment in enumerate(moments):
        done = _sigint_at(runs_dir, f"startup-{index}", moment)
        assert done.returncode == 130, done.stderr
        assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, (
            moment,
            done.stderr,
        )
        assert "interrupted" in done.stderr
