"""The layout of a run directory: its file names, finding it, and reading its manifest.

Kept apart from the table readers (``_io``) so that code which only locates runs or reads
manifests never imports pandas or pyarrow.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evalkit.errors import RunNotFoundError
from evalkit.results._manifest import load_manifest

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


def read_manifest(
    run: str | os.PathLike[str], runs_dir: str | os.PathLike[str] = "runs"
) -> dict[str, Any]:
    """Read a run's ``manifest.json`` as a plain dict (validated by :class:`Manifest`).

    Args:
        run: A run directory, or a run id under ``runs_dir``.
        runs_dir: Where run ids are looked up.

    Returns:
        The manifest's JSON object, with ``version`` (empty when the run has none).

    Raises:
        InputError: The manifest is not valid JSON or a field has the wrong type.
    """
    manifest = load_manifest(resolve_run_dir(run, runs_dir))
    return {} if manifest is None else manifest.to_json()
