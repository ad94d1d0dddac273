"""The layout of a run directory: its file names, and finding it from a path or a run id.

Kept apart from the table readers (``_io``) and the manifest model (``_manifest``) so that
code which only locates runs imports neither pandas, pyarrow nor pydantic.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.errors import RunNotFoundError

RESULTS_FILE = "results.parquet"
SCORES_FILE = "scores.parquet"
PARTS_DIR = "parts"
TRANSCRIPTS_DIR = "transcripts"


def resolve_run_dir(run: str | os.PathLike[str], runs_dir: str | os.PathLike[str] = "runs") -> Path:
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
