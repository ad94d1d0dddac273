"""The proof bundle's manifest, checked against the files it lists and the required artifacts."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit._untrusted import load_json
from evalkit.cases import BundleSpec
from evalkit.scorers._artifacts import safe_file

#: Largest manifest read (bytes).
MAX_MANIFEST_BYTES = 1_000_000
#: Largest file hashed for a manifest entry (bytes).
MAX_HASHED_BYTES = 200_000_000


@dataclass(frozen=True)
class ManifestEntry:
    """One artifact as the manifest lists it, with the check's outcome.

    Attributes:
        path: Path relative to the workspace.
        passed: Whether the file exists (no symlink) with the listed hash.
        reason: ``ok``, or what is wrong (``missing``, ``hash mismatch``, ``not listed``...).
    """

    path: str
    passed: bool
    reason: str


@dataclass(frozen=True)
class BundleCheck:
    """The manifest's outcome.

    Attributes:
        manifest: Manifest path relative to the workspace.
        passed: Whether the manifest is readable and every entry passes.
        reason: One line: what is wrong, or how many entries matched.
        entries: Every listed (or required but unlisted) artifact.
    """

    manifest: str
    passed: bool
    reason: str
    entries: tuple[ManifestEntry, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able record (stored beside collected artifacts)."""
        return {
            "manifest": self.manifest,
            "passed": self.passed,
            "reason": self.reason,
            "entries": [{"path": e.path, "passed": e.passed, "reason": e.reason}
                        for e in self.entries],
        }


def file_digest(path: Path, algorithm: str) -> str:
    """Hex digest of a file, read without following a final symlink."""
    digest = hashlib.new(algorithm)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        read = 0
        while chunk := handle.read(1 << 20):
            read += len(chunk)
            if read > MAX_HASHED_BYTES:
                raise ValueError(f"larger than {MAX_HASHED_BYTES} bytes")
            digest.update(chunk)
    return digest.hexdigest()


def _entry(workspace: Path, item: Any, algorithm: str, number: int) -> ManifestEntry:
    if not isinstance(item, dict) or not isinstance(item.get("path"), str):
        return ManifestEntry(f"entry {number}", False, "an entry is {\"path\": ..., "
                             f"\"{algorithm}\": ...}}")
    rel = item["path"]
    listed = item.get(algorithm)
    if not isinstance(listed, str) or not listed:
        return ManifestEntry(rel, False, f"no '{algorithm}' hash")
    path, problem = safe_file(workspace, rel)
    if path is None:
        return ManifestEntry(rel, False, problem)
    if problem == "missing":
        return ManifestEntry(rel, False, "listed but missing")
    if not stat.S_ISREG(os.lstat(path).st_mode):
        return ManifestEntry(rel, False, "not a regular file")
    try:
        actual = file_digest(path, algorithm)
    except (OSError, ValueError) as exc:
        return ManifestEntry(rel, False, f"cannot hash: {exc}")
    if actual != listed.strip().lower():
        return ManifestEntry(rel, False, f"hash mismatch: listed {listed[:12]}..., "
                             f"file has {actual[:12]}...")
    return ManifestEntry(rel, True, "ok")


def check_bundle(workspace: Path | None, spec: BundleSpec, required: Iterable[str]) -> BundleCheck:
    """Check a bundle's manifest against the workspace.

    Args:
        workspace: The workspace after the agent ran.
        spec: The case's bundle profile.
        required: The required artifacts that exist (each must be listed).

    Returns:
        The outcome, with one entry per listed file and per required file left unlisted.
    """
    name = spec.manifest
    if workspace is None:
        return BundleCheck(name, False, "no workspace")
    path, problem = safe_file(workspace, name)
    if path is None or problem:
        return BundleCheck(name, False, f"manifest {problem or 'unreadable'}")
    if not stat.S_ISREG(os.lstat(path).st_mode):
        return BundleCheck(name, False, "manifest is not a regular file")
    if os.lstat(path).st_size > MAX_MANIFEST_BYTES:
        return BundleCheck(name, False, f"manifest larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            document = load_json(
                handle.read(MAX_MANIFEST_BYTES + 1).decode("utf-8"), "the bundle manifest"
            )
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return BundleCheck(name, False, f"manifest is not JSON: {str(exc)[:160]}")
    items = document.get("artifacts") if isinstance(document, dict) else None
    if not isinstance(items, list):
        return BundleCheck(name, False, 'manifest needs {"artifacts": [{"path", '
                           f'"{spec.algorithm}"}}, ...]}}')
    if not items:
        return BundleCheck(name, False, "manifest lists no artifacts")
    if len(items) > spec.max_entries:
        return BundleCheck(name, False, f"manifest lists {len(items)} entries, more than "
                           f"{spec.max_entries}")
    entries = [_entry(workspace, item, spec.algorithm, n) for n, item in enumerate(items, 1)]
    listed = {e.path for e in entries}
    entries += [ManifestEntry(rel, False, "required artifact not listed")
                for rel in sorted(set(required) - listed - {name})]
    bad = [e for e in entries if not e.passed]
    if bad:
        reason = "; ".join(f"{e.path}: {e.reason}" for e in bad[:5])
        reason += f" (+{len(bad) - 5} more)" if len(bad) > 5 else ""
        return BundleCheck(name, False, reason, tuple(entries))
    return BundleCheck(name, True, f"{len(entries)} entries, every hash matches", tuple(entries))
