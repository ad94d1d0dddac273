"""Content-addressed JSON files: ``<root>/<first two hex digits>/<key>.json``, atomic writes.

The run cache, the judge's verdict cache and the reference-check cache each keep one small
JSON file per key; this is where those files are named and written.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any


def keyed_path(root: Path, key: str) -> Path:
    """The file of ``key`` under ``root`` (a two-character fan-out directory, then the key).

    Examples:
        >>> keyed_path(Path("cache"), "ab12").as_posix()
        'cache/ab/ab12.json'
    """
    return root / key[:2] / f"{key}.json"


def write_keyed_json(path: Path, data: Any) -> None:
    """Write ``data`` as compact JSON to ``path`` by atomic rename.

    Concurrent writers each use their own temporary file, so a reader sees a whole entry or
    none; a failed write (a full disk, an interrupt) leaves no temporary file behind.

    Args:
        path: The destination (its directory is created).
        data: A JSON-serialisable value.

    Raises:
        OSError: The file cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
