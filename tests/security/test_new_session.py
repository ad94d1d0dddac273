"""start_in_new_session: the child leads its own session, so one killpg reaches its descendants."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from evalkit.sandbox import start_in_new_session


def test_child_leads_a_session_reads_nothing_and_can_merge_stderr(tmp_path: Path) -> None:
    code = (
        "import os, sys; print(os.getsid(0) == os.getpid(), os.getpgid(0) == os.getpid()); "
        "print(repr(sys.stdin.read())); print('to stderr', file=sys.stderr); print(os.getcwd())"
    )
    env = {"PATH": os.environ["PATH"]}
    proc = start_in_new_session([sys.executable, "-u", "-c", code], cwd=tmp_path, env=env,
                                stderr=subprocess.STDOUT)
    out, err = proc.communicate(timeout=60)
    assert err is None
    assert out.decode().splitlines() == ["True True", "''", "to stderr", str(tmp_path)]


def test_killing_the_group_kills_the_grandchild(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"]}
    proc = start_in_new_session(["bash", "-c", "sleep 300 & echo $!; wait"], cwd=tmp_path,
                                env=env, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    grandchild = int(proc.stdout.readline())
    assert os.getpgid(grandchild) == proc.pid
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stdout.close()
    if proc.stderr is not None:
        proc.stderr.close()
    deadline = time.monotonic() + 60
    while Path(f"/proc/{grandchild}").exists() and time.monotonic() < deadline:
        state = Path(f"/proc/{grandchild}/stat").read_text().split(") ")[-1][:1]
        if state == "Z":  # killed, waiting for its new parent to reap it
            break
        time.sleep(0.05)
    alive = Path(f"/proc/{grandchild}/stat")
    assert not alive.exists() or alive.read_text().split(") ")[-1][:1] == "Z"
