"""What a skill is, when it is copied into a suite: ``SKILL.md`` and its resources, nothing else.

A skill directory in a repository often carries more than the skill: ``.git``, tests, CI
files, a Dockerfile, a README, build output. An agent gets none of that. The copy takes

- ``SKILL.md``;
- the resource folders skill-creator documents, ``references/``, ``scripts/``, ``assets/`` and
  ``templates/``;
- any other file or folder of the skill that ``SKILL.md`` names by its relative path (a
  Markdown link or a path in the text, e.g. ``forms.md`` or ``docs/api.md``);

and, inside those, leaves out whatever the repository's ``.gitignore`` files ignore and what
is never part of a skill: version-control folders, tests, CI files, build files and caches.
Every file copied is listed, with its SHA-256, in the suite's ``skills.lock.json`` (see
:class:`SkillCopyRecord`), and every top-level entry left out is listed with the reason.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

import pathspec
from pydantic import BaseModel, ConfigDict, Field

SKILL_FILE = "SKILL.md"
#: Resource folders of a skill (skill-creator's layout).
RESOURCE_DIRS: tuple[str, ...] = ("references", "scripts", "assets", "templates")
#: The suite file that lists what was copied.
LOCK_FILE = "skills.lock.json"

_NEVER_DIRS = frozenset({
    ".git", ".hg", ".svn", ".github", ".gitlab", ".circleci", ".buildkite", ".devcontainer",
    "tests", "test", "__tests__", "spec", "node_modules", "__pycache__", ".pytest_cache",
    ".mypy_cache", ".ruff_cache", ".tox", ".nox", ".venv", "venv", "build", "dist", ".idea",
    ".vscode", "evals",
})
_NEVER_FILES = frozenset({
    ".gitignore", ".gitattributes", ".gitmodules", ".dockerignore", "Dockerfile",
    "docker-compose.yml", "docker-compose.yaml", "compose.yaml", "Makefile", ".travis.yml",
    ".gitlab-ci.yml", "azure-pipelines.yml", "Jenkinsfile", ".pre-commit-config.yaml",
    "pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "noxfile.py", "package.json",
    "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "uv.lock",
    "requirements-dev.txt", "conftest.py", ".DS_Store",
})
_NEVER_SUFFIXES = (".pyc", ".pyo", ".egg-info")
_TEST_FILE = re.compile(r"(^test_.*\.py$)|(.*_test\.py$)|(.*\.(test|spec)\.[jt]sx?$)")
_MENTION = re.compile(r"[A-Za-z0-9_.\-/]+")


class CopiedFile(BaseModel):
    """One file of a skill copied into a suite."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    """Path inside the skill directory (``/``-separated)."""
    sha256: str
    """SHA-256 of its bytes."""
    bytes: int = Field(ge=0)
    """Its size."""


class LeftOut(BaseModel):
    """An entry of the source skill directory that was not copied."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    """Path inside the source skill directory."""
    reason: str
    """Why (``never part of a skill``, ``ignored by .gitignore``, ``not referenced by
    SKILL.md``)."""


class SkillCopyRecord(BaseModel):
    """What one skill's copy holds (an entry of ``skills.lock.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    """The skill directory it was copied from."""
    files: tuple[CopiedFile, ...]
    """Every file copied, sorted by path."""
    left_out: tuple[LeftOut, ...] = ()
    """What was not copied, and why."""


class SkillsLock(BaseModel):
    """The suite's ``skills.lock.json``: what each imported skill's copy holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = 1
    """Version of this record."""
    skills: dict[str, SkillCopyRecord]
    """Skill name -> its copy."""


def _never_reason(rel: Path, is_dir: bool) -> str | None:
    name = rel.name
    if is_dir and name in _NEVER_DIRS:
        return "never part of a skill (version control, tests, CI, build or cache)"
    if not is_dir and (name in _NEVER_FILES or name.endswith(_NEVER_SUFFIXES)
                       or _TEST_FILE.match(name)):
        return "never part of a skill (version control, tests, CI, build or cache)"
    return None


def _git_root(start: Path) -> Path:
    for parent in (start, *start.parents):
        if (parent / ".git").exists():
            return parent
    return start


def _ignore_spec(skill_dir: Path) -> tuple[Path, pathspec.GitIgnoreSpec]:
    """The ``.gitignore`` rules that apply inside ``skill_dir`` (its repository's, and its own).

    Patterns of a ``.gitignore`` in a sub-folder are anchored there, as git reads them.
    """
    skill_dir = skill_dir.resolve()
    root = _git_root(skill_dir)
    lines: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        # only the folders on the way down to the skill, and the skill's own
        dirnames[:] = [
            d for d in dirnames
            if d != ".git" and (skill_dir == here / d or skill_dir in (here / d).parents
                                or here / d in skill_dir.parents or skill_dir in here.parents
                                or skill_dir == here)
        ]
        if ".gitignore" not in filenames:
            continue
        base = here.relative_to(root).as_posix()
        for raw in (here / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines():
            line = raw.rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            body = line[1:] if negate else line
            anchored = "/" in body.rstrip("/")
            if base != ".":
                body = f"{base}/{body.lstrip('/')}" if anchored else f"{base}/**/{body}"
            lines.append(("!" if negate else "") + body)
    return root, pathspec.GitIgnoreSpec.from_lines(lines)


def _mentioned(skill_dir: Path, text: str) -> set[str]:
    """Top-level entries of the skill directory that ``SKILL.md`` names by relative path."""
    entries = {p.name for p in skill_dir.iterdir()}
    found: set[str] = set()
    for token in _MENTION.findall(text):
        head = token.strip("./").split("/", 1)[0]
        if head in entries and head != SKILL_FILE:
            found.add(head)
    return found


def copy_skill(source: Path, target: Path) -> SkillCopyRecord:
    """Copy what the skill is from ``source`` to ``target`` (see the module docstring).

    Args:
        source: The skill directory (holds ``SKILL.md``).
        target: The directory to create.

    Returns:
        The record of what was copied (with hashes) and what was left out.
    """
    source = source.resolve()
    root, ignored = _ignore_spec(source)
    text = (source / SKILL_FILE).read_text(encoding="utf-8", errors="replace")
    wanted = {SKILL_FILE, *RESOURCE_DIRS, *_mentioned(source, text)}
    files: list[CopiedFile] = []
    left_out: list[LeftOut] = []

    def skip(path: Path, is_dir: bool) -> str | None:
        rel = path.relative_to(source)
        reason = _never_reason(rel, is_dir)
        if reason is not None:
            return reason
        repo_rel = path.relative_to(root).as_posix() + ("/" if is_dir else "")
        if ignored.match_file(repo_rel):
            return "ignored by .gitignore"
        return None

    def take(path: Path) -> None:
        rel = path.relative_to(source)
        reason = skip(path, path.is_dir() and not path.is_symlink())
        if reason is not None:
            left_out.append(LeftOut(path=rel.as_posix(), reason=reason))
            return
        if path.is_dir() and not path.is_symlink():
            for child in sorted(path.iterdir()):
                take(child)
            return
        data = path.read_bytes()
        destination = target / rel
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
        files.append(CopiedFile(path=rel.as_posix(), sha256=hashlib.sha256(data).hexdigest(),
                                bytes=len(data)))

    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(source.iterdir()):
        if entry.name in wanted:
            take(entry)
        else:
            left_out.append(LeftOut(path=entry.name, reason=_never_reason(
                Path(entry.name), entry.is_dir()) or "not a resource folder and not referenced "
                "by SKILL.md"))
    return SkillCopyRecord(source=str(source), files=tuple(sorted(files, key=lambda f: f.path)),
                           left_out=tuple(left_out))


def write_lock(suite_dir: Path, records: dict[str, SkillCopyRecord]) -> Path:
    """Write ``skills.lock.json`` in ``suite_dir``.

    Returns:
        The file written.
    """
    path = suite_dir / LOCK_FILE
    path.write_text(SkillsLock(skills=records).model_dump_json(indent=2) + "\n",
                    encoding="utf-8")
    return path
