"""Where a run keeps each evidence item's collected artifacts, and reading them back.

``<run>/artifacts/<item dir>/`` holds ``evidence.json`` (every requirement's outcome and the
manifest's, as the scorers found them) and ``files/`` with copies of the artifacts found in the
workspace (regular files only, bounded in size; symlinks are never followed). The item
directory is the item key with ``:`` replaced by ``__`` (keys hold no ``/`` and no ``__``
pairs of their own are needed to invert it: ``evidence.json`` records the key).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evalkit._untrusted import read_json

ARTIFACTS_DIR = "artifacts"
EVIDENCE_FILE = "evidence.json"
FILES_DIR = "files"
#: Largest ``evidence.json`` read back (bytes).
MAX_EVIDENCE_BYTES = 2_000_000


def artifact_dir(run_dir: str | os.PathLike[str], item_key: str) -> Path:
    """The directory of one item's collected artifacts.

    Examples:
        >>> artifact_dir("runs/r1", "evidence:repro:none:simulated:0").as_posix()
        'runs/r1/artifacts/evidence__repro__none__simulated__0'
    """
    name = item_key.replace(":", "__").replace("/", "_")
    return Path(run_dir) / ARTIFACTS_DIR / name


def read_evidence(run_dir: str | os.PathLike[str], item_key: str) -> dict[str, Any] | None:
    """The ``evidence.json`` of one item, or None when none was collected (or it is unreadable).

    Args:
        run_dir: The run directory.
        item_key: The item's key.

    Returns:
        The record, with ``files_dir`` added (where the copies are).
    """
    folder = artifact_dir(run_dir, item_key)
    path = folder / EVIDENCE_FILE
    try:
        if path.is_symlink() or path.stat().st_size > MAX_EVIDENCE_BYTES:
            return None
        record = read_json(path)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    record["files_dir"] = str(folder / FILES_DIR)
    return record
