"""An optimizer that edits evalkit itself is caught; what it starts in its group is killed.

The attack: a ``command:`` optimizer appends to ``evalkit/providers/_simulated.py`` (which
changes results) and leaves ``sleep 654 &`` running. The run imports a copy of the package
(``PYTHONPATH``), so the real one is never touched. In the sandbox the write fails
(``test_optimizer_sandbox.py``); here the sandbox is off (``--no-sandbox``), the edit lands,
and ``evalkit optimize`` must stop with the honesty violation naming the edited file, and no
``sleep 654`` left in the command's process group may outlive it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT
from tests.optimize.probes import write_monotone_suite


def _sleepers(marker: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if cmdline.startswith(f"sleep {marker}"):
            found.append(proc.name)
    return found


def test_an_optimizer_editing_the_installed_evalkit_aborts_naming_the_file(
    tmp_path: Path,
) -> None:
    package = tmp_path / "pkg" / "evalkit"
    shutil.copytree(ROOT / "evalkit", package, ignore=shutil.ignore_patterns("__pycache__"))
    target = package / "providers" / "_simulated.py"
    suite = write_monotone_suite(tmp_path / "suite")
    marker = f"654.{os.getpid()}"  # unique to this test process (xdist-safe)
    command = (
        f"command:echo '[X]' >> SKILL.md; echo '# tampered' >> {target}; "
        f"sleep {marker} >/dev/null 2>&1 &"
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "pkg"))
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "optimize", str(suite), "--skill", "probe",
         "--optimizer", command, "--trials", "1", "--max-iterations", "2",
         "--backend", "threading", "--runs-dir", str(tmp_path / "runs"), "--no-sandbox"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert "# tampered" in target.read_text(), "the attack really edited the imported package"
    assert done.returncode == 1, done.stderr
    assert "honesty violation" in done.stderr
    assert "command: optimizer runs with your user's full access" in done.stderr
    assert "evalkit/providers/_simulated.py" in done.stderr, done.stderr
    deadline = time.monotonic() + 10
    while _sleepers(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _sleepers(marker) == [], "a process the optimizer started outlived it"
