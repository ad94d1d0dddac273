"""Collect an evidence item's artifacts from its workspace into the run directory.

Only files the evidence checks examined are copied (every required artifact found, and the
manifest), each through a descriptor opened with ``O_NOFOLLOW`` after a symlink-free path
check, each at most :data:`MAX_FILE_BYTES` and at most :data:`MAX_ITEM_BYTES` per item. Text
passes the redactor (a secret the agent wrote into its notes is not kept); binary files are
copied as they are; a file above its requirement's ``max_bytes`` is not copied. The workspace
itself is deleted after the item, as always.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from evalkit._redact import redact_text, redact_value
from evalkit.results import EVIDENCE_FILE, artifact_dir
from evalkit.scorers import EvidenceResult, safe_file

#: Largest single artifact copied (bytes).
MAX_FILE_BYTES = 5_000_000
#: Most bytes copied for one item.
MAX_ITEM_BYTES = 20_000_000


def _copy(source: Path, target: Path, budget: int, secrets: tuple[str, ...]) -> tuple[int, str]:
    size = os.lstat(source).st_size
    if size > min(MAX_FILE_BYTES, budget):
        return 0, f"not copied: {size} bytes is above the collection limit"
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and b"\x00" not in data:
        data = redact_text(text, secrets).encode("utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return len(data), "copied"


def collect_artifacts(
    workspace: Path,
    evidence: EvidenceResult,
    run_dir: Path,
    item_key: str,
    secrets: tuple[str, ...],
) -> list[str]:
    """Copy an item's artifacts and write its ``evidence.json``.

    Args:
        workspace: The item's workspace after the agent ran.
        evidence: What the evidence checks found.
        run_dir: The run directory.
        item_key: The item's key.
        secrets: Values to redact from text artifacts.

    Returns:
        Log lines (files not copied and why).
    """
    folder = artifact_dir(run_dir, item_key)
    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    files: list[dict[str, Any]] = []
    budget = MAX_ITEM_BYTES
    logs = []
    limits = {f.path: c.requirement.max_bytes for c in evidence.checks for f in c.files}
    for rel in evidence.files:
        source, problem = safe_file(workspace, rel)
        if source is None or problem:
            files.append({"path": rel, "copied": False, "reason": problem or "unreachable"})
            continue
        if not stat.S_ISREG(os.lstat(source).st_mode):
            files.append({"path": rel, "copied": False, "reason": "not a regular file"})
            continue
        size = os.lstat(source).st_size
        if size > limits.get(rel, MAX_FILE_BYTES):
            reason = f"not copied: {size} bytes is above the requirement's max_bytes"
            files.append({"path": rel, "copied": False, "reason": reason, "size": 0})
            logs.append(f"artifact {rel} {reason}")
            continue
        try:
            size, reason = _copy(source, staging / "files" / rel, budget, secrets)
        except OSError as exc:
            size, reason = 0, f"not copied: {exc.strerror or exc}"
        budget -= size
        files.append({"path": rel, "copied": reason == "copied", "reason": reason, "size": size})
        if reason != "copied":
            logs.append(f"artifact {rel} {reason}")
    record = {"item_key": item_key, **evidence.to_json(), "collected": files}
    staging.mkdir(parents=True, exist_ok=True)
    (staging / EVIDENCE_FILE).write_text(
        json.dumps(redact_value(record, secrets), indent=1), encoding="utf-8"
    )
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(staging, folder)
    return logs


def copy_origin_artifacts(runs_dir: Path, origin_run_id: str | None, run_dir: Path,
                          item_key: str) -> bool:
    """Copy a cached evidence item's artifacts from the run that produced the outcome.

    Args:
        runs_dir: Where runs live.
        origin_run_id: The run that produced the cached outcome (None: unknown).
        run_dir: This run's directory.
        item_key: The item's key (the same in both runs).

    Returns:
        Whether artifacts were found and copied (symlinks are copied as links, never followed).
    """
    if not origin_run_id or Path(origin_run_id).name != origin_run_id:
        return False
    source = artifact_dir(runs_dir / origin_run_id, item_key)
    target = artifact_dir(run_dir, item_key)
    if source.is_symlink() or not source.is_dir() or source.resolve() == target.resolve():
        return False
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, symlinks=True)
    return True
