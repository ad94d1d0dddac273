"""What a run is doing, as the viewer says it: running, interrupted, stopped, failed or complete.

A run's manifest says ``partial`` both while its process runs and after that process was
killed: the manifest is written at the start and again at the end. What tells them apart is
the run's lock (``run.lock``, see :mod:`evalkit.runner`): the process that runs it writes its
pid and host there while it holds the lock, and empties it when it lets go. So a ``partial``
run whose lock names a live process of this host is *running*; one whose lock is empty, or
names a process that is gone, is *interrupted* (killed, crashed, or the machine stopped), and
its resume command is shown. The lock is only read (a bounded read of a regular file), never
locked: looking must not stop a run from starting.

The resume command is rebuilt from the manifest's recorded command line through the
allow-list of :func:`evalkit.results.recorded_resume_command`: a command line is data of the
run, and options that change where data goes are left out and named.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._untrusted import load_json
from evalkit.results import recorded_resume_command
from evalkit.viewer._files import read_regular

#: The lock file a running run holds (written by the runner, read here).
LOCK_FILE = "run.lock"
#: Most bytes of a lock file read (it holds one short JSON line).
LOCK_MAX_BYTES = 4096


@dataclass(frozen=True)
class RunState:
    """A run's state in words.

    Attributes:
        state: ``running``, ``interrupted``, ``stopped``, ``failed``, ``complete``, or the
            manifest's status when it is none of those (``""`` when it has none).
        note: One sentence on how that was told (the process, what stopped it).
        resume: The command that resumes it (interrupted and stopped runs), else ``""``.
    """

    state: str
    note: str = ""
    resume: str = ""


def run_state(run_dir: Path, manifest: dict[str, Any]) -> RunState:
    """The state of the run in ``run_dir`` from its manifest and its lock.

    Args:
        run_dir: The run directory (a checked run of the viewer's directory).
        manifest: Its manifest as plain JSON.

    Returns:
        The :class:`RunState`.
    """
    status = str(manifest.get("status") or "")
    if status == "complete":
        return RunState("complete")
    if status == "failed":
        failure = manifest.get("failure")
        detail = _failure_text(failure)
        return RunState("failed", "finished, with items that errored" + detail)
    if status == "stopped":
        return RunState("stopped", "stopped by the runner" + _failure_text(manifest.get("failure")),
                        _resume(run_dir, manifest))
    if status != "partial":
        return RunState(status)
    holder = _lock_holder(run_dir)
    pid, host = holder.get("pid"), holder.get("host")
    if isinstance(pid, int) and host == socket.gethostname() and _alive(pid):
        return RunState("running", f"pid {pid}")
    if isinstance(pid, int) and isinstance(host, str) and host != socket.gethostname():
        return RunState("running", f"held by process {pid} on {host} (not checked from here)")
    why = (f"its process (pid {pid}) is gone" if isinstance(pid, int)
           else "no process holds it")
    return RunState("interrupted", f"{why}: killed or crashed before it finished",
                    _resume(run_dir, manifest))


def _resume(run_dir: Path, manifest: dict[str, Any]) -> str:
    line = manifest.get("command_line")
    return recorded_resume_command(line if isinstance(line, str) else None, run_dir.name,
                                   run_dir.parent)


def _failure_text(failure: object) -> str:
    if not isinstance(failure, dict):
        return ""
    kind, count = failure.get("error_class"), failure.get("count")
    if not kind:
        return ""
    return f" ({kind}" + (f" × {count}" if isinstance(count, int) else "") + ")"


def _lock_holder(run_dir: Path) -> dict[str, Any]:
    """The pid and host a run's lock names ({} when it is empty, absent or unreadable)."""
    try:
        data = read_regular(run_dir / LOCK_FILE, LOCK_MAX_BYTES)
    except Exception:  # a hostile lock (a FIFO, a link) names no process
        return {}
    if not data or not data.strip():
        return {}
    try:
        holder = load_json(data, LOCK_FILE)
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    except OSError:
        return False
    return True
