"""Where the skills and their evals are in a skill repository.

Layouts met in public repositories:

- a skill directory: ``SKILL.md`` and ``evals/evals.json`` side by side (skill-creator's own);
- a plugin repository: ``evals/`` at the root, the skill one or more levels down
  (``NAME/SKILL.md``, ``plugins/P/skills/S/SKILL.md``), or several skills under one root.

:func:`find_layout` finds them; ``--skill PATH`` and ``--evals PATH`` say it explicitly.
Trigger sets are the JSON files of an ``evals/`` folder shaped as one
(:func:`~evalkit.cases._skill_evals.trigger_queries`), besides those named with ``--triggers``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from evalkit._untrusted import read_json
from evalkit.cases._skill_copy import SKILL_FILE
from evalkit.cases._skill_evals import trigger_queries
from evalkit.errors import InputError

EVALS_DIR = "evals"
EVALS_FILE = "evals.json"
_SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", "tests", "test",
                        "dist", "build", EVALS_DIR})


@dataclass
class Layout:
    """The skills and eval files of one import.

    Attributes:
        root: The directory given.
        skills: Skill directories (each holds ``SKILL.md``), sorted.
        evals: ``evals.json`` files found or given.
        triggers: Trigger set files found in ``evals/`` folders.
        not_read: JSON files of ``evals/`` folders that are neither (named in a warning).
    """

    root: Path
    skills: list[Path]
    evals: list[Path] = field(default_factory=list)
    triggers: list[Path] = field(default_factory=list)
    not_read: list[Path] = field(default_factory=list)


def _skills_below(root: Path) -> list[Path]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        if SKILL_FILE in filenames:
            found.append(Path(dirpath))
            dirnames[:] = []  # a skill's own folders hold no other skill
    return sorted(found)


def _evals_file(path: Path, flag: str) -> Path:
    if path.is_dir():
        for candidate in (path / EVALS_FILE, path / EVALS_DIR / EVALS_FILE):
            if candidate.is_file():
                return candidate
        raise InputError(f"{flag} {path}: no {EVALS_FILE} in that folder; name the file itself")
    if not path.is_file():
        raise InputError(f"{flag} {path}: no such file")
    return path


def _scan_evals_dir(folder: Path, layout: Layout) -> None:
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.json")):
        if path.name == EVALS_FILE:
            if path not in layout.evals:
                layout.evals.append(path)
            continue
        try:
            data = read_json(path, "utf-8-sig")
        except (OSError, UnicodeDecodeError, ValueError):
            layout.not_read.append(path)
            continue
        (layout.triggers if trigger_queries(data) is not None else layout.not_read).append(path)


def find_layout(
    root: Path, *, skills: tuple[Path, ...] = (), evals: Path | None = None
) -> Layout:
    """Find the skills and eval files under ``root`` (see the module docstring).

    Args:
        root: A skill directory or a repository root.
        skills: Skill directories given with ``--skill`` (then nothing is searched for).
        evals: An ``evals.json`` (or a folder holding one) given with ``--evals``: the only
            eval file read.

    Returns:
        The layout.

    Raises:
        InputError: No skill, or a ``--skill`` / ``--evals`` path that is not one.
    """
    if skills:
        chosen = []
        for path in skills:
            if not (path / SKILL_FILE).is_file():
                raise InputError(f"--skill {path}: no {SKILL_FILE} there; name a skill directory")
            chosen.append(path)
    elif (root / SKILL_FILE).is_file():
        chosen = [root]
    elif root.is_dir():
        chosen = _skills_below(root)
        if not chosen:
            raise InputError(
                f"{root}: no {SKILL_FILE} here or below; pass a skill directory, or name it with "
                "--skill PATH"
            )
    else:
        raise InputError(f"{root}: not a directory; pass a skill directory or repository root")
    layout = Layout(root=root, skills=sorted(chosen))
    if evals is not None:
        layout.evals.append(_evals_file(evals, "--evals"))
        return layout
    for skill in layout.skills:
        _scan_evals_dir(skill / EVALS_DIR, layout)
    if root.is_dir() and root not in layout.skills:
        _scan_evals_dir(root / EVALS_DIR, layout)
    return layout


def is_skill_source(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a skill directory, or a directory with a ``SKILL.md`` below it."""
    root = Path(path)
    if (root / SKILL_FILE).is_file():
        return True
    return root.is_dir() and bool(_skills_below(root))
