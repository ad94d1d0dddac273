"""A full disk (or a file size limit) stops a run cleanly, with the command that resumes it."""

from __future__ import annotations

import errno
import os
from pathlib import Path

#: errno values that mean "the storage is full": no space, quota exhausted, file size limit.
_NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def is_out_of_space(exc: BaseException) -> bool:
    """Whether an exception is a full disk, an exhausted quota or a file size limit."""
    return isinstance(exc, OSError) and exc.errno in _NO_SPACE_ERRNOS


def filesystem_full(path: Path) -> bool:
    """Whether the filesystem holding ``path`` has no block left for this user."""
    try:
        return os.statvfs(path).f_bavail == 0
    except OSError:
        return False


def disk_usage(root: Path) -> int:
    """Bytes of disk the files under ``root`` occupy (allocated blocks; links not followed).

    Args:
        root: A directory (an item's workspace).

    Returns:
        The total; entries that vanish or cannot be read while walking count as 0.
    """
    total = 0
    pending = [str(root)]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
    return total


def _mount_point(path: Path) -> Path:
    path = path.resolve()
    while not path.exists() and path.parent != path:
        path = path.parent  # a file that could not be created: its nearest existing folder
    device = path.stat().st_dev
    while path.parent != path and path.parent.stat().st_dev == device:
        path = path.parent
    return path


def _device(mount: Path) -> str | None:
    """The source of the mount at ``mount`` (``/dev/sda1``, ``tmpfs``), from /proc/self/mounts."""
    try:
        lines = Path("/proc/self/mounts").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    source = None
    for line in lines:
        fields = line.split()
        # octal escapes (\040 for a space) as the kernel writes them
        if len(fields) >= 2 and fields[1].encode().decode("unicode_escape") == str(mount):
            source = fields[0]  # the last mount at a path is the visible one
    return source


def describe_location(exc: OSError, run_dir: Path) -> str:
    """Where the space ran out: ``DEVICE (mounted at PATH, holding RUN_DIR)``.

    Args:
        exc: The error (``ENOSPC``, ``EDQUOT`` or ``EFBIG``); its file, when it names one,
            locates the filesystem (an item's workspace may be on another one).
        run_dir: The run directory being written.

    Returns:
        A description for the message; for ``EFBIG``, the file size limit.
    """
    written = f", writing {exc.filename}" if exc.filename else ""
    if exc.errno == errno.EFBIG:
        return f"{run_dir} (a file reached the size limit of this process, RLIMIT_FSIZE{written})"
    target = Path(exc.filename) if exc.filename else run_dir
    try:
        mount = _mount_point(target)
    except OSError:
        return f"the filesystem holding {target}{written}"
    device = _device(mount) or "the device"
    held = "" if exc.filename else f", holding {run_dir}"
    return f"{device} (mounted at {mount}{held}{written})"
