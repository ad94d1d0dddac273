"""Shared fixtures: paths to the bundled suites and a scratch runs directory."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "tests" / "fixtures" / "suites" / "tiny"
DEMO = ROOT / "cases" / "demo"


#: Resets SIGINT to its default and execs the rest of the command line (exec keeps SIG_DFL).
_SIGINT_DEFAULT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def with_default_sigint(argv: list[str]) -> list[str]:
    """``argv`` started with SIGINT at its default, as a terminal's foreground job has it.

    A process started from a background job of a non-interactive shell (``make test &``, a CI
    step) inherits SIGINT *ignored*, and Python then installs no ``KeyboardInterrupt`` handler:
    the Ctrl-C a test sends would be ignored, as it should be there. Tests that send SIGINT
    start their process through this so they test the terminal's case wherever they run.
    """
    return [sys.executable, "-c", _SIGINT_DEFAULT, *argv]


@pytest.fixture
def tiny_suite(tmp_path: Path) -> Path:
    """A writable copy of the tiny suite."""
    dest = tmp_path / "tiny"
    shutil.copytree(TINY, dest)
    return dest


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    """An empty runs directory."""
    path = tmp_path / "runs"
    path.mkdir()
    return path


def until_verdict_argv(runs_dir: Path, run_id: str, *extra: str) -> list[str]:
    """``evalkit run cases/demo --until-verdict --round-cases 5`` (simulated agent, no cache)."""
    return [
        sys.executable,
        "-m",
        "evalkit",
        "run",
        str(DEMO),
        "--conditions",
        "none,preloaded",
        "--until-verdict",
        "--round-cases",
        "5",
        "--no-progress",
        "--no-cache",
        "--runs-dir",
        str(runs_dir),
        "--run-id",
        run_id,
        *extra,
    ]
