"""What a ``command:`` optimizer may read, write and reach inside the sandbox.

The command sees the sandbox's system directories, its workspace read-only, the files its own
command line names (read-only: ``python3 /abs/path/editor.py`` finds its script) and the paths
of the ``read`` setting (read-only); it writes only the candidate file and a private ``/tmp``.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evalkit.errors import ConfigError


class CommandSettings(BaseModel):
    """Settings of a ``command:`` optimizer (``--optimizer-opt KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    read: tuple[Path, ...] = ()
    """More files or directories the command may read (comma-separated; read-only)."""
    network: bool = False
    """Share the host's network (default: only a private loopback)."""
    timeout_s: float = Field(default=600.0, gt=0)
    """Time limit of one proposal; past it every process of the command is killed."""

    @field_validator("read", mode="before")
    @classmethod
    def _split_paths(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        return value

    @field_validator("read")
    @classmethod
    def _existing_paths(cls, paths: tuple[Path, ...]) -> tuple[Path, ...]:
        resolved = []
        for path in paths:
            full = Path(os.path.abspath(path.expanduser()))
            if not full.exists():
                raise ValueError(f"{path} does not exist")
            resolved.append(full)
        return tuple(resolved)


def command_settings(settings: dict[str, Any]) -> CommandSettings:
    """Validate a ``command:`` optimizer's settings.

    Raises:
        ConfigError: An unknown key or a bad value, named as ``--optimizer-opt KEY``.
    """
    try:
        return CommandSettings.model_validate(settings)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            key = ".".join(str(p) for p in error["loc"][:1]) or "?"
            message = (
                "unknown setting (known: read, network, timeout_s)"
                if error["type"] == "extra_forbidden"
                else error["msg"]
            )
            problems.append(f"--optimizer-opt {key}: {message}")
        raise ConfigError("; ".join(problems)) from None


def named_files(command: str) -> tuple[Path, ...]:
    """Existing files named by absolute path on ``command``'s line (``KEY=/path`` too).

    Args:
        command: The optimizer's shell command.

    Returns:
        The files, in order of first mention; nothing when the line does not split.
    """
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)  # `; & | < >` split
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        return ()
    found: list[Path] = []
    for word in words:
        candidate = word.rpartition("=")[2]
        if os.path.isabs(candidate) and os.path.isfile(candidate):
            path = Path(os.path.normpath(candidate))
            if path not in found:
                found.append(path)
    return tuple(found)


def warn_unconfined() -> None:
    """Say on stderr what a ``command:`` optimizer can do without the sandbox."""
    print(
        "WARNING: the command sandbox is OFF (--no-sandbox or EVALKIT_SANDBOX=off): the "
        "command: optimizer runs with your user's full access. It can write any file you can "
        "(the honesty guard only detects edits of the suite and the evalkit package, after the "
        "fact), read your home directory, reach the network, and a process it starts in a "
        "session of its own (setsid) outlives the iteration.",
        file=sys.stderr,
    )
