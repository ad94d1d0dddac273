"""Without bwrap evalkit refuses to run commands, unless the sandbox is switched off."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "cases" / "demo"


@pytest.fixture
def path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with every tool of /usr/bin and /bin except bwrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for source in (Path("/usr/bin"), Path("/bin")):
        for tool in source.iterdir():
            target = bin_dir / tool.name
            if tool.name != "bwrap" and not target.exists():
                target.symlink_to(tool)
    assert shutil.which("bwrap", path=str(bin_dir)) is None
    return str(bin_dir)


def _evalkit(args: list[str], path: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "EVALKIT_SANDBOX"}
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *args],
        capture_output=True,
        text=True,
        env={**base, "PYTHONPATH": str(ROOT), "PATH": path, **env},
        cwd=ROOT,
        timeout=300,
    )


def test_validate_refuses_without_bwrap_naming_the_package(path_without_bwrap: str) -> None:
    result = _evalkit(["cases", "validate", str(DEMO)], path_without_bwrap)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "'bubblewrap' package" in result.stderr and "--no-sandbox" in result.stderr


def test_run_refuses_without_bwrap(path_without_bwrap: str, tmp_path: Path) -> None:
    result = _evalkit(
        ["run", str(DEMO), "--lane", "execution", "--trials", "1", "--runs-dir",
         str(tmp_path / "runs"), "--no-progress"],
        path_without_bwrap,
    )
    assert result.returncode == 2, result.stderr
    assert "'bubblewrap' package" in result.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_prompt_only_work_needs_no_bwrap(path_without_bwrap: str) -> None:
    result = _evalkit(["cases", "validate", str(DEMO), "--no-references"], path_without_bwrap)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("opt_out", ["flag", "env"])
def test_opt_out_runs_unsandboxed_with_a_warning(path_without_bwrap: str, opt_out: str) -> None:
    args = ["cases", "validate", str(DEMO)]
    env = {}
    if opt_out == "flag":
        args.append("--no-sandbox")
    else:
        env["EVALKIT_SANDBOX"] = "off"
    result = _evalkit(args, path_without_bwrap, **env)
    assert result.returncode == 0, result.stderr
    assert "is valid" in result.stdout
    assert "WARNING: the command sandbox is OFF" in result.stderr
