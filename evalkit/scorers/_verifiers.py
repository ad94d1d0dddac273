"""Execution verifiers: deterministic checks of a workspace's end state."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._untrusted import read_json
from evalkit.cases import (
    CommandCheck,
    FileExistsCheck,
    FileMatchesCheck,
    JsonPathEqualsCheck,
    VerifierCheck,
)
from evalkit.sandbox import run_command


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
            value = _json_lookup(read_json(path), check.json_path)
        except (OSError, ValueError, KeyError, IndexError) as exc:
            return CheckResult(label, False, f"cannot read value: {type(exc).__name__}: {exc}")
        ok = bool(value == check.equals)
        return CheckResult(label, ok, "" if ok else f"found {value!r}")
    raise TypeError(f"unknown verifier check {type(check).__name__}")  # pragma: no cover
