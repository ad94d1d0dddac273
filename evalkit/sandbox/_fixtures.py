"""Copy a fixture into a workspace without following symlinks out of it."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from evalkit.errors import FixtureLinkError


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _link_problem(link: Path, root: str) -> str | None:
    try:
        os.stat(link)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"symlink loop ({os.readlink(link)!r} leads back to itself)"
        if exc.errno == errno.ENOENT:
            return (
                f"dangling symlink (its target {os.readlink(link)!r} does not exist); remove "
                "the link or add its target to the fixture"
            )
        return f"symlink cannot be resolved ({exc.strerror})"
    target = os.path.realpath(link)
    if not _inside(target, root):
        return f"symlink points outside the fixture (to {target})"
    return None


def fixture_link_problems(fixture: Path) -> list[FixtureLinkError]:
    """Every symlink of a fixture that loops, dangles or points outside it.

    Args:
        fixture: The fixture directory.

    Returns:
        One error per bad link, in path order (empty when the fixture is safe to copy).
    """
    root = os.path.realpath(fixture)
    problems: list[FixtureLinkError] = []
    for dirpath, dirnames, filenames in os.walk(fixture, followlinks=False):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            if path.is_symlink():
                reason = _link_problem(path, root)
                if reason is not None:
                    problems.append(FixtureLinkError(path, reason))
    return problems


def copy_fixture(fixture: Path, workspace: Path) -> None:
    """Copy ``fixture`` into ``workspace``; symlinks are copied as symlinks, never followed.

    Args:
        fixture: The fixture directory.
        workspace: The destination (may exist).

    Raises:
        FixtureLinkError: A symlink in the fixture loops or points outside it (nothing is
            copied).
    """
    problems = fixture_link_problems(fixture)
    if problems:
        raise problems[0]
    shutil.copytree(fixture, workspace, symlinks=True, dirs_exist_ok=True)
