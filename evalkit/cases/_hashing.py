"""Content hashes: stable addresses of cases, skills, fixtures and datasets."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

HASH_LENGTH = 16


def stable_hash(value: Any) -> str:
    """Hash any JSON-serialisable value canonically (sorted keys, no whitespace).

    Args:
        value: A JSON-serialisable value.

    Returns:
        The first 16 hex digits of its SHA-256.

    Examples:
        >>> stable_hash({"b": 1, "a": [1, 2]}) == stable_hash({"a": [1, 2], "b": 1})
        True
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def directory_hash(root: Path, exclude: Collection[str] = ()) -> str:
    """Hash a directory tree's relative paths and file contents.

    Args:
        root: The directory.
        exclude: Relative paths (POSIX form) left out of the hash.

    Returns:
        A stable hash that changes when any file's name or content changes.
    """
    digest = hashlib.sha256()
    files = (p for p in root.rglob("*") if p.is_file())
    for path in sorted(p for p in files if p.relative_to(root).as_posix() not in exclude):
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:HASH_LENGTH]
