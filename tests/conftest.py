"""Shared fixtures: paths to the bundled suites and a scratch runs directory."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "tests" / "fixtures" / "suites" / "tiny"
DEMO = ROOT / "cases" / "demo"


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
