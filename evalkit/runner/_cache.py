"""Content-addressed outcome cache keyed by the item hash."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

CACHE_DIR = ".cache"


class OutcomeCache:
    """Outcomes of finished items, one JSON file per item hash, shared by every run.

    Writes go through a uniquely named temporary file and an atomic rename, so concurrent
    runs never see a torn entry and never lose one (identical hashes hold identical content).
    Only ``ok`` outcomes are cached: errors and timeouts are retried by the next run.

    Args:
        root: The cache directory (``<runs_dir>/.cache``).
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, item_hash: str) -> Path:
        return self.root / item_hash[:2] / f"{item_hash}.json"

    def get(self, item_hash: str) -> dict[str, Any] | None:
        """The cached entry (``row``, ``scores``, ``response``), or None."""
        try:
            data: dict[str, Any] = json.loads(self._path(item_hash).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data

    def put(self, item_hash: str, entry: dict[str, Any]) -> None:
        """Store an entry atomically."""
        path = self._path(item_hash)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        tmp.write_text(json.dumps(entry, default=str, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, path)
