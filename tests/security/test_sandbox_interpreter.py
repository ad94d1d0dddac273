"""A Python installed under ``/tmp`` (a clone and its venv there, as CI may have) stays usable.

The sandbox gives every command a private ``/tmp``; the interpreter's directories are bound
over it, so ``python`` of a venv under ``/tmp`` still runs inside, whether the workspace is
writable (suites, agents) or read-only (the ``command:`` optimizer), and the rest of the real
``/tmp`` stays hidden.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import ROOT

PROBE = """
import sys
from pathlib import Path
sys.path[:0] = [{root!r}, {site!r}]
from evalkit.sandbox import Mounts, run_command
workspace = Path({workspace!r})
mounts = Mounts(workspace_writable={writable})
command = f"{{sys.executable}} -c 'import sys; print(sys.prefix)'; ls {hidden!r}"
done = run_command(command, workspace, 60, mounts=mounts)
print(done.exit_code, done.sandboxed)
print(done.output)
"""


@pytest.mark.parametrize("writable", [True, False], ids=["workspace", "read-only-workspace"])
def test_a_venv_under_tmp_runs_in_the_sandbox(tmp_path: Path, writable: bool) -> None:
    assert str(tmp_path).startswith("/tmp/"), "the point is a venv under /tmp"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    hidden = tmp_path / "beside"
    hidden.mkdir()
    code = PROBE.format(
        root=str(ROOT), site=sysconfig.get_paths()["purelib"], workspace=str(workspace),
        writable=writable, hidden=str(hidden),
    )  # fmt: skip
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    status, *output = done.stdout.splitlines()
    assert status.startswith("2 True"), done.stdout  # ls of the hidden directory failed
    assert str(venv) in output, done.stdout  # the venv's python ran inside
    assert any("No such file or directory" in line for line in output), done.stdout
