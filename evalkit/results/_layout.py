"""The layout of a run directory: its file names, and finding it from a path or a run id.

Kept apart from the table readers (``_io``) and the manifest model (``_manifest``) so that
code which only locates runs imports neither pandas, pyarrow nor pydantic.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

from evalkit._command_line import left_out_line, rebuild_run_line, without_options
from evalkit._settings import RUNS_DIR
from evalkit._untrusted import read_json
from evalkit.errors import InputError, RunNotFoundError

MANIFEST_FILE = "manifest.json"
RESULTS_FILE = "results.parquet"
SCORES_FILE = "scores.parquet"
PARTS_DIR = "parts"
TRANSCRIPTS_DIR = "transcripts"
#: The skill texts a run exposed, content-addressed (``skills/<hash>/SKILL.md``).
SKILLS_DIR = "skills"


def resolve_run_dir(
    run: str | os.PathLike[str], runs_dir: str | os.PathLike[str] = RUNS_DIR.default
) -> Path:
    """Find a run directory from a path or a run id.

    Args:
        run: A run directory, or a run id under ``runs_dir``.
        runs_dir: Where run ids are looked up.

    Returns:
        The run directory.

    Raises:
        RunNotFoundError: Neither a directory with ``results.parquet`` (or parts) nor a run id.
    """
    candidates = [Path(run), Path(runs_dir) / str(run)]
    for path in candidates:
        if path.is_dir() and ((path / RESULTS_FILE).exists() or (path / PARTS_DIR).is_dir()):
            return path
    raise RunNotFoundError(
        f"run '{run}' not found: no {RESULTS_FILE} in '{candidates[0]}' or '{candidates[1]}'. "
        "Pass a run directory or a run id under --runs-dir."
    )


def resume_command(
    command_line: str | None, run_id: str, runs_dir: str | os.PathLike[str] | None = None
) -> str:
    """The command that resumes a run: its own command line plus ``--resume --run-id``.

    Args:
        command_line: The command the run was started with (None when unknown).
        run_id: The run id (replaces the one in ``command_line``: the directory may have
            been renamed).
        runs_dir: The directory holding the run, when known (replaces ``--runs-dir``).

    Returns:
        The command, e.g. ``evalkit run cases/demo --trials 3 --resume --run-id nightly``.
    """
    try:
        words = shlex.split(command_line) if command_line else []
    except ValueError:
        words = []
    words = words or ["evalkit", "run", "SUITE"]
    replaced = {"--run-id"} | ({"--runs-dir"} if runs_dir is not None else set())
    kept = without_options(words, replaced, {"--resume"})
    if runs_dir is not None:
        kept += ["--runs-dir", str(runs_dir)]
    return shlex.join([*kept, "--resume", "--run-id", run_id])


def recorded_resume_command(
    command_line: str | None, run_id: str, runs_dir: str | os.PathLike[str]
) -> str:
    """The command that resumes a run, from the command line its manifest records.

    The recorded line is data of the run (whoever wrote the run chose it): it is rebuilt from
    the allow-list of :func:`evalkit._command_line.rebuild_run_line`, and what it left out
    (provider options, ``--skill`` paths, ``--no-sandbox``) is named after the command.

    Args:
        command_line: The manifest's ``command_line`` (None when unknown).
        run_id: The run id.
        runs_dir: The directory holding the run.

    Returns:
        ``evalkit run SUITE ... --runs-dir DIR --resume --run-id ID``, followed by
        ``" (left out of the resume command: ...)"`` when something was.
    """
    rebuilt = rebuild_run_line(command_line)
    words = rebuilt.words or ["evalkit", "run", "SUITE"]
    command = shlex.join([*words, "--runs-dir", str(runs_dir), "--resume", "--run-id", run_id])
    left_out = left_out_line(rebuilt.left_out, "the resume command")
    return f"{command} ({left_out})" if left_out else command


def peek_manifest(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """A run's ``manifest.json`` as written: plain JSON within the input bounds, not validated.

    For a field or two read on a command's start-up path (``compare`` of judged runs reads the
    judge's ``min_kappa``): building the :class:`~evalkit.results.Manifest` model costs about
    as much as the comparison. Everything else reads the record with
    :func:`~evalkit.results.load_manifest`, which validates it.

    Args:
        run_dir: The run directory.

    Returns:
        The manifest's JSON object, or an empty dict when the run has no manifest.

    Raises:
        InputError: The manifest is not a JSON object (the message names the file).
    """
    path = Path(run_dir) / MANIFEST_FILE
    if not path.exists():
        return {}
    try:
        data = read_json(path)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a JSON object; rewrite the run (evalkit run --resume)")
    return data
