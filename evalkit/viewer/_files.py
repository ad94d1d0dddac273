"""What the viewer reads of a run: regular files only, each read bounded.

A runs directory may hold a run someone else made. A FIFO named ``events.jsonl`` blocks the
reader that opens it until a writer comes (for good, when none does), a device never ends, and
a symbolic link points wherever its maker chose. So the viewer:

- opens the files it reads itself (a run's manifest and events) with ``O_NOFOLLOW`` and
  ``O_NONBLOCK``, checks on the open descriptor that it is a regular file, and reads at most a
  bound of bytes (:func:`read_regular`);
- before a page or a comparison reads a run through the analyses, walks the run directory
  without following links and refuses the run when any entry is not a regular file or a
  directory (:func:`check_run_files`): the error names the entry and what it is.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from evalkit._untrusted import max_input_bytes
from evalkit.errors import InputBoundError, InputError

#: Most entries of one run directory walked by :func:`check_run_files`.
MAX_RUN_ENTRIES = 200_000

_OPEN_FLAGS = (
    os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


def not_regular(path: str | os.PathLike[str], kind: str) -> InputError:
    """The error of a run's file that is a FIFO, a device, a socket or a link (exit code 2)."""
    return InputError(
        f"{path} is {kind}, not a regular file; evalkit view reads regular files only: "
        "replace it with the run's own file (or remove the run from the directory)"
    )


def file_kind(mode: int) -> str:
    """What an ``st_mode`` names, in words (``"a FIFO"``, ``"a symbolic link"``, ...)."""
    kinds = (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISREG, "a regular file"),
    )
    return next((word for test, word in kinds if test(mode)), "not a file")


def read_regular(path: Path, max_bytes: int, *, offset: int = 0) -> bytes | None:
    """Up to ``max_bytes`` bytes of a regular file from ``offset``; None when it does not exist.

    The file is opened without following a link and without blocking, and checked to be a
    regular file on the open descriptor, so no FIFO, device or link is ever read.

    Args:
        path: The file.
        max_bytes: Most bytes read.
        offset: Where to start.

    Returns:
        The bytes read (fewer at the end of the file), or None when there is no such file.

    Raises:
        InputError: The path is a link, a FIFO, a device, a socket or a directory.
        OSError: It cannot be read.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link
            raise not_regular(path, "a symbolic link") from None
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO without a reader
            raise not_regular(path, file_kind(os.lstat(path).st_mode)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(path, file_kind(mode))
        chunks, left = [], max_bytes
        while left > 0:
            chunk = os.pread(fd, min(left, 1 << 20), offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_bounded(path: Path, max_bytes: int | None = None) -> bytes | None:
    """A whole regular file, refused when larger than ``max_bytes`` (None: absent).

    Args:
        path: The file.
        max_bytes: The bound (default :func:`evalkit._untrusted.max_input_bytes`).

    Raises:
        InputBoundError: The file is larger than the bound.
        InputError: It is not a regular file (see :func:`read_regular`).
    """
    limit = max_input_bytes() if max_bytes is None else max_bytes
    data = read_regular(path, limit + 1)
    if data is not None and len(data) > limit:
        raise InputBoundError(path, "size", f"more than the {limit:,} bytes evalkit view reads")
    return data


def check_run_files(run_dir: Path) -> None:
    """Refuse a run holding anything but regular files and directories (links included).

    Args:
        run_dir: The run directory (itself already checked to be inside the runs directory).

    Raises:
        InputError: An entry is a link, a FIFO, a device or a socket (the first found).
        InputError: The run holds more than :data:`MAX_RUN_ENTRIES` entries.
    """
    pending, seen = [run_dir], 0
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                seen += 1
                if seen > MAX_RUN_ENTRIES:
                    raise InputError(
                        f"{run_dir} holds more than {MAX_RUN_ENTRIES:,} entries; evalkit view "
                        "does not walk it (is it a run directory?)"
                    )
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    pending.append(Path(entry.path))
                elif not stat.S_ISREG(mode):
                    raise not_regular(entry.path, file_kind(mode))
