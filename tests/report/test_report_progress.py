"""`evalkit report` says its stages on a terminal and stays quiet in a pipe."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "tests" / "fixtures" / "runs" / "w42"


def _report(tmp_path: Path, *, terminal: bool) -> tuple[int, str]:
    argv = [sys.executable, "-m", "evalkit", "report", str(RUN), "-o", str(tmp_path / "r.html")]
    if not terminal:
        done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300)
        return done.returncode, done.stderr
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave, cwd=ROOT)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return process.wait(timeout=300), out.decode(errors="replace")


@pytest.mark.slow
def test_report_shows_its_stages_on_a_terminal(tmp_path: Path) -> None:
    code, stderr = _report(tmp_path, terminal=True)
    assert code == 0, stderr
    assert "executing run_report.py (run report)" in stderr
    assert "cell" in stderr  # papermill's cell progress bar
    assert "rendering r.html (executed in " in stderr
    assert stderr.index("executing") < stderr.index("rendering")


@pytest.mark.slow
def test_report_in_a_pipe_prints_no_progress(tmp_path: Path) -> None:
    code, stderr = _report(tmp_path, terminal=False)
    assert code == 0, stderr
    assert "executing run_report.py" not in stderr and "rendering" not in stderr
    assert "executed notebook:" in stderr
