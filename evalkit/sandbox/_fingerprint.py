"""What about the sandbox can change a command's outcome, for keys of cached results."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from evalkit.sandbox._bwrap import bwrap_argv, command_env
from evalkit.sandbox._policy import Limits, find_bwrap, sandbox_enabled

#: Stands in for the scratch workspace, whose path changes on every check.
_WORKSPACE = Path("/evalkit-workspace")


def sandbox_fingerprint(limits: Limits | None = None, *, network: bool = False) -> dict[str, Any]:
    """The sandbox settings a command would run under, as JSON values.

    Two commands with the same text, workspace contents and fingerprint see the same
    system: the ``bwrap`` binary (path, size and modification time), every directory and
    ``/etc`` entry it shows, the interpreter directories, the environment (PATH included)
    and the resource limits. The scratch workspace path is replaced by a fixed placeholder.

    Args:
        limits: Resource limits (default :class:`~evalkit.sandbox.Limits`).
        network: Whether the command would get the host's network.

    Returns:
        ``{"sandboxed": False}`` when the sandbox is switched off, otherwise the settings.

    Raises:
        SandboxUnavailableError: The sandbox is on and ``bwrap`` is missing.
    """
    if not sandbox_enabled():
        return {"sandboxed": False}
    bwrap = find_bwrap()
    stat = os.stat(bwrap)
    argv = bwrap_argv(bwrap, [], _WORKSPACE, command_env(_WORKSPACE), network=network)
    return {
        "sandboxed": True,
        "bwrap": {"path": bwrap, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns},
        "argv": argv,
        "limits": dataclasses.asdict(limits or Limits()),
    }
