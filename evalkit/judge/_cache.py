"""Content-addressed judge verdicts, shared by every run under one runs directory.

One cache class for both kinds of judge: the statement judge's verdicts live in
:data:`JUDGE_CACHE_DIR`, the pairwise judge's in ``.cache/judge-pairwise``; a kind reads an
entry back through its verdict model (a damaged entry is a miss).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit._keyed import keyed_path, write_keyed_json
from evalkit._untrusted import read_json

#: Where verdicts live under the runs directory.
JUDGE_CACHE_DIR = Path(".cache") / "judge"


class JudgeCache:
    """Verdicts by question key, one JSON file each, written by atomic rename.

    The key is the content address of everything that can change a verdict: the judge's
    provider, model and outcome settings, the prompt template, the statement and the graded
    answer (see :meth:`evalkit.judge.Judge.question_key`). Only parsed verdicts are stored.

    Args:
        root: The cache directory (``<runs_dir>/.cache/judge``).
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return keyed_path(self.root, key)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry (the verdict's fields and its usage), or None."""
        try:
            data = read_json(self._path(key))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store a verdict atomically."""
        write_keyed_json(self._path(key), entry)
