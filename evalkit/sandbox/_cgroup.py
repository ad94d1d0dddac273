"""A per-command pids cgroup: the process limit that also holds for root.

``RLIMIT_NPROC`` is not enforced for root (and counts every process of the user otherwise),
so where the pids controller is writable each command gets its own cgroup with ``pids.max``.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

_V1 = Path("/sys/fs/cgroup/pids")
_V2 = Path("/sys/fs/cgroup")


def _pids_root() -> Path | None:
    if (_V1 / "cgroup.procs").is_file() and os.access(_V1, os.W_OK):
        return _V1
    controllers = _V2 / "cgroup.controllers"
    if controllers.is_file() and os.access(_V2, os.W_OK):
        try:
            if "pids" in controllers.read_text().split():
                return _V2
        except OSError:
            return None
    return None


def _remove_stale(root: Path) -> None:
    """Remove empty cgroups (older than a minute) left by evalkit processes that were killed."""
    for group in root.glob("evalkit-*"):
        pid = group.name.split("-")[1]
        try:
            if (
                pid.isdigit()
                and not Path(f"/proc/{pid}").exists()
                and time.time() - group.stat().st_mtime > 60
            ):
                group.rmdir()
        except OSError:
            continue


def create_pids_cgroup(max_pids: int) -> Path | None:
    """Create a cgroup limited to ``max_pids`` tasks.

    Args:
        max_pids: The limit.

    Returns:
        The cgroup directory, or None where no writable pids controller exists.
    """
    root = _pids_root()
    if root is None:
        return None
    _remove_stale(root)
    group = root / f"evalkit-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(max_pids))
    except OSError:
        remove_cgroup(group)
        return None
    return group


#: How long :func:`remove_cgroup` waits for the kernel to release an emptied cgroup.
_RELEASE_WAIT_S = 1.0


def remove_cgroup(group: Path) -> None:
    """Remove a cgroup once its processes are gone (best effort, retried briefly).

    The kernel releases a cgroup a few milliseconds after its last process was reaped, so the
    first retries come quickly (from half a millisecond, doubling up to 20 ms): a fixed 20 ms
    wait cost more than the sandboxed command itself.
    """
    deadline = time.monotonic() + _RELEASE_WAIT_S
    pause = 0.0005
    while True:
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() >= deadline:
                return
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
