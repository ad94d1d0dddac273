"""Whole-line appends: the crash-safe writer of every line-oriented file evalkit keeps.

A line-oriented file (``events.jsonl``, ``items.log``, a gate ledger, a recording) grows by
whole lines, each written with a single ``write`` on a descriptor opened with ``O_APPEND``, so
concurrent writers interleave lines, never bytes, and readers never see a torn line. It lives
at the root of the package because both ``results`` (run directories) and ``providers`` (the
recording provider) write such files, and neither may import the other.
"""

from __future__ import annotations

import os


def _open_append(path: str | os.PathLike[str]) -> int:
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)


def _encode(line: str) -> bytes:
    return (line.rstrip("\n") + "\n").encode("utf-8")


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte: a short write (a disk filling up) continues until done or an error."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def end_torn_line(path: str | os.PathLike[str]) -> bool:
    """End a file whose last line was cut short (a full disk) with a newline.

    Called by a directory's single writer before it appends again, so the next line starts
    on a line of its own and only the torn fragment fails to parse.

    Args:
        path: The line-oriented file (absent is fine).

    Returns:
        Whether a newline was added.
    """
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) == b"\n":
                return False
    except FileNotFoundError:
        return False
    append_line(path, "")
    return True


def append_line(path: str | os.PathLike[str], line: str) -> None:
    """Append one whole line with a single ``O_APPEND`` write (readers never see a torn line).

    Args:
        path: The file (created when missing).
        line: The text; a trailing newline is added when absent. Text with inner newlines is
            written as several lines in the same single write.
    """
    fd = _open_append(path)
    try:
        _write_all(fd, _encode(line))
    finally:
        os.close(fd)


class LineWriter:
    """A line-oriented file held open: one ``os.write`` per whole line (``O_APPEND``).

    Args:
        path: The file (created when missing).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._fd = _open_append(path)

    def write(self, line: str) -> None:
        """Append one whole line."""
        _write_all(self._fd, _encode(line))

    def close(self) -> None:
        """Close the file."""
        os.close(self._fd)
