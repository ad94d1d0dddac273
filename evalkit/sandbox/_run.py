"""Run one shell command in a workspace: sandboxed, time-limited, output-capped."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalkit.sandbox._bwrap import Mounts, bwrap_argv, command_env, limited
from evalkit.sandbox._cgroup import create_pids_cgroup, remove_cgroup
from evalkit.sandbox._policy import Limits, find_bwrap, sandbox_enabled, warn_unsandboxed
from evalkit.sandbox._process import start_in_new_session

#: Characters of output kept in :attr:`CommandOutcome.output` (the end of the output).
OUTPUT_TAIL_CHARS = 8000

_TAIL_BYTES = 4 * OUTPUT_TAIL_CHARS


@dataclass(frozen=True)
class CommandOutcome:
    """Result of a shell command run in a workspace.

    Attributes:
        exit_code: Exit code (``None`` when a limit killed it).
        output: Combined stdout and stderr, its last 8,000 characters.
        timed_out: Whether the time limit killed it.
        limit: The limit that killed it: ``time``, ``output`` or ``None``.
        output_bytes: Bytes of output the command produced (up to the output limit).
        sandboxed: Whether it ran in the sandbox.
    """

    exit_code: int | None
    output: str
    timed_out: bool
    limit: Literal["time", "output"] | None = None
    output_bytes: int = 0
    sandboxed: bool = True


def _user_process_count() -> int:
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count


def _env(
    workspace: Path, sandboxed: bool, mounts: Mounts, extra: Mapping[str, str] | None
) -> dict[str, str]:
    env = command_env(workspace, sandboxed=sandboxed)
    if sandboxed and not mounts.workspace_writable:
        env["HOME"] = "/tmp"  # the private /tmp: the one writable directory
    env.update(extra or {})
    return env


def _argv(
    command: str,
    workspace: Path,
    limits: Limits,
    network: bool,
    mounts: Mounts,
    env: dict[str, str],
) -> tuple[list[str], Path | None]:
    bwrap = find_bwrap()
    group = create_pids_cgroup(limits.processes)
    nproc = None if group is not None else limits.processes + _user_process_count()
    inner = limited(["bash", "-c", command], limits, nproc=nproc)
    argv = bwrap_argv(bwrap, inner, workspace, env, network=network, mounts=mounts)
    if group is not None:
        argv = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(group / "cgroup.procs"), *argv]
    return argv, group


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_command(
    command: str,
    workspace: Path,
    timeout_s: float,
    *,
    network: bool = False,
    limits: Limits | None = None,
    mounts: Mounts | None = None,
    env: Mapping[str, str] | None = None,
) -> CommandOutcome:
    """Run ``bash -c command`` in ``workspace``, inside the bubblewrap sandbox.

    The sandbox starts from an empty environment (a few safe variables, HOME is the
    workspace), has its own pid namespace and ``/proc``, a private ``/tmp``, read-only system
    directories, the workspace as its only writable path and no network unless ``network``.
    When the command ends, its pid namespace ends with it: no process it started survives.
    With ``EVALKIT_SANDBOX=off`` the command runs directly (same environment and limits on
    time and output, its process group killed when it ends, nothing else) after a warning.

    Args:
        command: The shell command.
        workspace: Working directory (also HOME), the only writable path.
        timeout_s: Time limit; past it every process of the command is killed.
        network: Allow network access.
        limits: Memory, process, file-size and output limits (default :class:`Limits`).
        mounts: A read-only workspace and other paths to show (default :class:`Mounts`: the
            workspace writable); with a read-only workspace HOME is the private ``/tmp``.
        env: Variables added to the command's environment (never credentials: they reach
            every process of the sandbox).

    Returns:
        Exit code, the end of the combined output and which limit, if any, killed it.

    Raises:
        SandboxUnavailableError: ``bwrap`` is missing and the sandbox is on.
    """
    limits = limits or Limits()
    workspace = Path(os.path.realpath(workspace))
    mounts = mounts or Mounts()
    sandboxed = sandbox_enabled()
    full_env = _env(workspace, sandboxed, mounts, env)
    group: Path | None = None
    if sandboxed:
        argv, group = _argv(command, workspace, limits, network, mounts, full_env)
    else:
        warn_unsandboxed()
        argv = ["bash", "-c", command]
    try:
        return _supervise(argv, full_env, workspace, timeout_s, limits, sandboxed)
    finally:
        if group is not None:
            remove_cgroup(group)


def _supervise(
    argv: list[str],
    env: dict[str, str],
    workspace: Path,
    timeout_s: float,
    limits: Limits,
    sandboxed: bool,
) -> CommandOutcome:
    proc = start_in_new_session(argv, cwd=workspace, env=env, stderr=subprocess.STDOUT)
    stdout = proc.stdout
    if stdout is None:  # pragma: no cover - stdout=PIPE above
        raise RuntimeError("subprocess without a stdout pipe")
    fd = stdout.fileno()
    tail: deque[bytes] = deque()
    tail_size = total = 0
    limit: Literal["time", "output"] | None = None
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                limit = "time"
                break
            ready, _, _ = select.select([fd], [], [], min(remaining, 0.5))
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            total += len(chunk)
            tail.append(chunk)
            tail_size += len(chunk)
            while tail_size - len(tail[0]) >= _TAIL_BYTES:
                tail_size -= len(tail.popleft())
            if total > limits.output_bytes:
                limit = "output"
                break
    finally:
        if limit is not None:
            _kill(proc)
        stdout.close()
    if limit is None:
        remaining = max(0.1, deadline - time.monotonic())
        try:
            proc.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            limit = "time"
            _kill(proc)
    if limit is not None:
        proc.wait()
    _kill(proc)  # what the command left in its process group (unsandboxed) ends with it
    text = b"".join(tail).decode("utf-8", "replace")[-OUTPUT_TAIL_CHARS:]
    if limit == "output":
        text += f"\n[evalkit: output limit of {limits.output_bytes} bytes reached; killed]"
    exit_code = None if limit is not None else proc.returncode
    return CommandOutcome(exit_code, text, limit == "time", limit, total, sandboxed)
