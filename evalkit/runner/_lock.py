"""One writer per run: an OS file lock on the run directory, held for the run's life.

The lock is ``fcntl.flock`` on ``<run dir>/run.lock``. The kernel releases it when the holding
process exits for any reason (also SIGKILL), so a crashed run never leaves a stale lock. The
holder writes its pid, host and start time into the file, so a refused second writer can say
who holds the run. The file itself stays in place (unlinking a lock file opens a race between
a process that opened the old file and one that creates a new one).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from evalkit._untrusted import load_json
from evalkit.errors import RunLocked

LOCK_FILE = "run.lock"


def _read_holder(fd: int) -> dict[str, object]:
    try:
        raw = os.pread(fd, 4096, 0)
        holder = load_json(raw, "run.lock") if raw.strip() else {}
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


@contextmanager
def hold_run_lock(run_dir: Path) -> Iterator[None]:
    """Hold the run directory's lock for the duration of the ``with`` block.

    Args:
        run_dir: An existing run directory.

    Yields:
        Nothing; the lock is held until the block exits (or the process dies).

    Raises:
        RunLocked: Another live process holds the lock (exit code 2 in the CLI).
    """
    fd = os.open(run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunLocked(run_dir, _read_holder(fd)) from None
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(holder) + "\n").encode("utf-8"), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
