"""Execution verifiers: deterministic checks of a workspace's end state."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.cases import (
    CommandCheck,
    FileExistsCheck,
    FileMatchesCheck,
    JsonPathEqualsCheck,
    VerifierCheck,
)

#: Environment variables passed to verifier and setup commands (nothing else leaks in).
SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one verifier check.

    Attributes:
        check: Short description of the check.
        passed: Whether it passed.
        detail: Why it failed (or what it saw).
    """

    check: str
    passed: bool
    detail: str = ""


def hermetic_env(workspace: Path) -> dict[str, str]:
    """A minimal environment for commands run in a workspace (HOME is the workspace)."""
    env = {k: os.environ[k] for k in SAFE_ENV_KEYS if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env["HOME"] = str(workspace)
    env.setdefault("LANG", "C.UTF-8")
    return env


@dataclass(frozen=True)
class CommandOutcome:
    """Result of a shell command run in a workspace.

    Attributes:
        exit_code: Exit code (``None`` on timeout).
        output: Combined stdout and stderr (truncated).
        timed_out: Whether the time limit killed it.
    """

    exit_code: int | None
    output: str
    timed_out: bool


def run_command(command: str, workspace: Path, timeout_s: float) -> CommandOutcome:
    """Run ``bash -c command`` in ``workspace``; a timeout kills the whole process group.

    Args:
        command: The shell command.
        workspace: Working directory (also HOME).
        timeout_s: Time limit.

    Returns:
        Exit code, combined output (at most 8,000 characters) and whether it timed out.
    """
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=workspace,
        env=hermetic_env(workspace),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        return CommandOutcome(proc.returncode, out.decode("utf-8", "replace")[-8000:], False)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return CommandOutcome(None, out.decode("utf-8", "replace")[-8000:], True)


def _json_lookup(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if isinstance(data, list):
            data = data[int(part)]
        elif isinstance(data, dict):
            data = data[part]
        else:
            raise KeyError(part)
    return data


def _inside(workspace: Path, rel: str) -> Path | None:
    path = (workspace / rel).resolve()
    root = workspace.resolve()
    return path if path == root or root in path.parents else None


def run_check(check: VerifierCheck, workspace: Path) -> CheckResult:
    """Run one verifier check against a workspace.

    Args:
        check: The check from the case file.
        workspace: The item's workspace after the agent ran.

    Returns:
        The check's outcome; problems (missing files, bad JSON) are failures, not exceptions.
    """
    if isinstance(check, CommandCheck):
        outcome = run_command(check.run, workspace, check.timeout_s)
        label = f"command `{check.run}` exits {check.expect_exit}"
        if outcome.timed_out:
            return CheckResult(label, False, f"timed out after {check.timeout_s:g}s")
        ok = outcome.exit_code == check.expect_exit
        return CheckResult(label, ok, f"exit {outcome.exit_code}: {outcome.output[-300:]}")
    path = _inside(workspace, check.path)
    if path is None:
        return CheckResult(f"path {check.path}", False, "path escapes the workspace")
    if isinstance(check, FileExistsCheck):
        return CheckResult(
            f"{check.path} exists", path.exists(), "" if path.exists() else "missing"
        )
    if isinstance(check, FileMatchesCheck):
        label = f"{check.path} matches /{check.pattern}/"
        if not path.is_file():
            return CheckResult(label, False, "file missing")
        text = path.read_text(encoding="utf-8", errors="replace")
        found = re.search(check.pattern, text, re.MULTILINE) is not None
        return CheckResult(label, found, "" if found else "no match")
    if isinstance(check, JsonPathEqualsCheck):
        label = f"{check.path}:{check.json_path} == {check.equals!r}"
        try:
            value = _json_lookup(json.loads(path.read_text(encoding="utf-8")), check.json_path)
        except (OSError, ValueError, KeyError, IndexError) as exc:
            return CheckResult(label, False, f"cannot read value: {type(exc).__name__}: {exc}")
        ok = bool(value == check.equals)
        return CheckResult(label, ok, "" if ok else f"found {value!r}")
    raise TypeError(f"unknown verifier check {type(check).__name__}")  # pragma: no cover
