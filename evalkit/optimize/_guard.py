"""Honesty guards: the optimizer must not change cases, scorers, the split file or the gate."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from evalkit.cases import stable_hash
from evalkit.errors import TamperError

#: The installed evalkit package (every file of it is hashed).
_PACKAGE = Path(__file__).resolve().parents[1]


def _file_hashes(root: Path, prefix: str) -> dict[str, str]:
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if "__pycache__" in path.parts:
            continue
        out[f"{prefix}/{path.relative_to(root).as_posix()}"] = hashlib.sha256(
            path.read_bytes()
        ).hexdigest()[:16]
    return out


def protected_state(suite_root: Path, splits_file: Path, gate: dict[str, Any]) -> dict[str, str]:
    """Hashes of everything the optimizer must leave alone.

    Args:
        suite_root: The suite directory (cases, fixtures, skills, suite.yaml); the installed
            ``evalkit`` package (every file of it) is hashed as well.
        splits_file: The committed ``splits.json``.
        gate: The gate settings (metric, threshold, trials, conditions, ...).

    Returns:
        ``{name: hash}`` over every protected file and the gate.
    """
    state = _file_hashes(suite_root, "suite")
    # the whole installed evalkit package: an edit to the provider, runner, scorer or
    # statistics code changes results as surely as an edited case
    state.update(_file_hashes(_PACKAGE, "evalkit"))
    state["splits.json"] = (
        hashlib.sha256(splits_file.read_bytes()).hexdigest()[:16] if splits_file.exists() else ""
    )
    state["gate"] = stable_hash(gate)
    return state


def check_unchanged(before: dict[str, str], after: dict[str, str]) -> None:
    """Raise :class:`TamperError` with the evidence if any protected hash changed.

    Raises:
        TamperError: A protected file was added, removed or edited, or the gate changed.
    """
    changed = {
        name: (before.get(name), after.get(name))
        for name in sorted(set(before) | set(after))
        if before.get(name) != after.get(name)
    }
    if changed:
        raise TamperError(changed)
