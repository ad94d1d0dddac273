"""Starting a child process that can be killed as a whole, with everything it starts."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence


def start_in_new_session(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    stderr: int,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` as the leader of a new session (and so of a new process group).

    The child reads nothing (stdin is ``/dev/null``) and writes to a pipe; its process group
    id is its pid, so ``os.killpg(proc.pid, ...)`` reaches it and every descendant that did
    not start a session of its own.

    Args:
        argv: Program and arguments.
        cwd: Working directory.
        env: The whole environment of the child.
        stderr: ``subprocess.PIPE`` (a pipe of its own) or ``subprocess.STDOUT`` (merged into
            stdout).

    Returns:
        The running child, ``stdout`` (and with ``PIPE`` ``stderr``) open for reading.

    Raises:
        OSError: The program could not be started.
    """
    return subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
        start_new_session=True,
    )
