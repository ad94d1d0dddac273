"""The one place evalkit asks git for a commit."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_sha(path: str | Path = ".") -> str | None:
    """The commit checked out at ``path``, or None outside a git checkout (or without git).

    Examples:
        >>> git_sha("/") is None or len(git_sha("/")) == 40
        True
    """
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None
