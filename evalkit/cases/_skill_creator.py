"""``evalkit cases import SKILL_DIR``: a skill-creator skill directory becomes a suite.

A skill-creator skill directory holds ``SKILL.md`` (YAML frontmatter with ``name`` and
``description``), optional ``scripts/``, ``references/`` and ``assets/``, and
``evals/evals.json``: ``{"skill_name", "evals": [{"id", "prompt", "expected_output",
"files", "expectations"}]}``. Trigger eval sets are separate JSON files,
``[{"query", "should_trigger"}]``. A repository root with the skill(s) below it and
``evals/`` at the root imports too (:mod:`evalkit.cases._skill_layout`); how eval files are
read is :mod:`evalkit.cases._skill_evals`.

The suite written:

- ``skills/<name>/``: what the skill is (``SKILL.md`` and its resources, never ``.git``,
  tests, CI or build files: :mod:`evalkit.cases._skill_copy`), listed with hashes in
  ``skills.lock.json``; the suite's skill points at its ``SKILL.md`` and installs the copy
  (``resources``) for agents that discover skills;
- ``variants/<name>/``: ``stale.md`` (``--stale FILE_OR_GIT_REV``) and ``bootstrap.md``
  (``--bootstrap FILE``) when given;
- ``cases/evals.yaml``: one case per eval. ``expectations`` are judged expectations;
  ``expected_output`` (or ``expected``) is the case's ``reference``, and is also its judged
  rubric when the eval has no expectations; an eval with ``files`` is an execution case whose
  fixture holds those files at the same relative paths;
- ``cases/triggers.yaml``: one prompt-lane case per query (``should_trigger: true`` expects
  the skill, ``false`` expects none);
- ``suite.yaml``: the skill, the conditions (``stale`` only with ``--stale``) and a judge
  (``simulated`` until you name a real one: ``--judge-provider`` on the command line or
  ``judge:`` in the file).

Fields evalkit does not use are kept in each case's ``provenance``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evalkit._paths import is_inside, unsafe_component_reason
from evalkit._plain import plain_fields
from evalkit._untrusted import load_yaml
from evalkit.cases._loader import SUITE_FILE, load_suite
from evalkit.cases._skill_copy import SKILL_FILE, copy_skill, write_lock
from evalkit.cases._skill_evals import (
    EvalSet,
    assign,
    copy_fixtures,
    read_evals,
    read_triggers,
    safe_id,
)
from evalkit.cases._skill_layout import EVALS_FILE, find_layout, is_skill_source
from evalkit.cases._source import dump_yaml
from evalkit.errors import InputError

_FRONTMATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL)


@dataclass
class SkillImport:
    """What ``cases import SKILL_DIR`` wrote.

    Attributes:
        suite_dir: The suite written.
        skill: The skill's name (several, comma-separated, from a repository of skills).
        eval_cases: Cases made from ``evals/evals.json``.
        trigger_cases: Cases made from trigger eval sets.
        conditions: The suite's conditions.
        warnings: Things worth knowing that are not errors.
        skills: Every skill imported.
        files_copied: Files in the skills' copies (see ``skills.lock.json``).
    """

    suite_dir: Path
    skill: str
    eval_cases: int
    trigger_cases: int
    conditions: list[str]
    warnings: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    files_copied: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit cases import --json`` object for a skill directory.

        ``{"suite_dir", "skill", "eval_cases", "trigger_cases", "conditions"}``, extended with
        ``"skills"`` (every skill imported) and ``"files_copied"`` (files of the skills' copies,
        listed with their hashes in the suite's ``skills.lock.json``).
        """
        return plain_fields(self, leave_out={"warnings"})


def is_skill_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a skill directory, or a repository with a ``SKILL.md`` below it."""
    return is_skill_source(path)


def _frontmatter(skill_md: Path) -> dict[str, Any]:
    text = skill_md.read_text(encoding="utf-8")
    match = _FRONTMATTER.match(text)
    if match is None:
        raise InputError(
            f"{skill_md}: no YAML frontmatter; a skill starts with '---', 'name: ...', "
            "'description: ...', '---'"
        )
    try:
        data = load_yaml(match.group(1), skill_md)
    except yaml.YAMLError as exc:
        raise InputError(f"{skill_md}: frontmatter is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"{skill_md}: frontmatter must be a mapping with name and description")
    return data


def _skill_name(skill_dir: Path, meta: dict[str, Any], warnings: list[str]) -> str:
    name = meta.get("name")
    if not isinstance(name, str) or not name.strip():
        name = skill_dir.resolve().name
        warnings.append(f"{skill_dir / SKILL_FILE}: no 'name' in the frontmatter; using '{name}'")
    reason = unsafe_component_reason(name)
    if reason is not None:
        raise InputError(f"{skill_dir / SKILL_FILE}: name {name!r} {reason}; use a plain name")
    return name.strip()


def _check_links(skill_dir: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(skill_dir, followlinks=False):
        for entry in dirnames + filenames:
            path = Path(dirpath) / entry
            if path.is_symlink() and not is_inside(path, skill_dir):
                raise InputError(
                    f"{path}: a symlink pointing outside the skill directory "
                    f"({os.readlink(path)}); replace it with the file it points to"
                )


def _stale_text(skill_dir: Path, stale: str) -> str:
    path = Path(stale)
    if path.is_file():
        return path.read_text(encoding="utf-8")
    proc = subprocess.run(
        ["git", "-C", str(skill_dir), "show", f"{stale}:./{SKILL_FILE}"],
        capture_output=True, text=True, timeout=30, check=False,
    )
    if proc.returncode != 0:
        raise InputError(
            f"--stale {stale}: neither a file nor a git revision holding {skill_dir}/{SKILL_FILE} "
            f"({proc.stderr.strip() or 'git failed'})"
        )
    return proc.stdout


def _owner(
    evals: EvalSet, names: dict[Path, str], own: Path | None, flag: str
) -> str:
    """The skill an eval set belongs to: its folder's skill, its ``skill_name``, or the only one."""
    if own is not None:
        return names[own]
    by_name = {name: name for name in names.values()}
    if evals.skill_name in by_name:
        return evals.skill_name
    if len(by_name) == 1:
        return next(iter(by_name))
    said = f"its skill_name {evals.skill_name!r}" if evals.skill_name else "it has no skill_name"
    raise InputError(
        f"{evals.path}: several skills here ({', '.join(sorted(by_name))}) and {said}: set "
        f"'skill_name' to one of them, or choose the skill with --skill PATH{flag}"
    )


def _own_skill(path: Path, skills: list[Path]) -> Path | None:
    for skill in skills:
        if path.resolve().is_relative_to(skill.resolve()):
            return skill
    return None


def _describe(skill_dir: Path, warnings: list[str]) -> tuple[str, dict[str, Any]]:
    meta = _frontmatter(skill_dir / SKILL_FILE)
    name = _skill_name(skill_dir, meta, warnings)
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise InputError(
            f"{skill_dir / SKILL_FILE}: the frontmatter needs a 'description' (what the agent "
            "sees when it decides to load the skill)"
        )
    _check_links(skill_dir)
    return name, {
        "description": " ".join(description.split()),
        "path": f"skills/{name}/{SKILL_FILE}",
        "resources": f"skills/{name}",
    }


def _unique_triggers(cases: list[dict[str, Any]], path: Path, taken: set[str]) -> None:
    if any(c["id"] in taken for c in cases):
        for case in cases:
            case["id"] = case["id"].replace("trigger-", f"trigger-{safe_id(path.stem)}-", 1)
    for case in cases:
        if case["id"] in taken:
            raise InputError(f"{path}: query id '{case['id']}' repeats across trigger sets")
        taken.add(case["id"])


def import_skill_dir(
    skill_dir: str | os.PathLike[str],
    suite_dir: str | os.PathLike[str],
    *,
    stale: str | None = None,
    bootstrap: str | os.PathLike[str] | None = None,
    triggers: tuple[str | os.PathLike[str], ...] = (),
    evals: str | os.PathLike[str] | None = None,
    skills: tuple[str | os.PathLike[str], ...] = (),
) -> SkillImport:
    """Write a suite from a skill directory or a skill repository (``evalkit cases import``).

    Args:
        skill_dir: A skill directory (``SKILL.md``, optional ``evals/evals.json``), or a
            repository root with the skill(s) below it and ``evals/`` at the root.
        suite_dir: The suite directory to create (must not exist or be empty).
        stale: A file, or a git revision of the skill's repository, giving an older
            ``SKILL.md`` (the ``stale`` condition; one skill only).
        bootstrap: A file shown under self-load before the skill is loaded (one skill only).
        triggers: Trigger eval sets (``[{"query", "should_trigger"}]``, bare or wrapped in
            ``{"skill_name", "queries": [...]}``), besides those found in ``evals/``.
        evals: The ``evals.json`` to read (or a folder holding one) instead of searching.
        skills: The skill directories to import instead of searching ``skill_dir``.

    Returns:
        A :class:`SkillImport`; the suite passes ``evalkit cases validate``.

    Raises:
        InputError: A file that cannot be used (named, with the fix); the suite directory is
            removed again.
    """
    source = Path(skill_dir)
    target = Path(suite_dir)
    layout = find_layout(source, skills=tuple(Path(s) for s in skills),
                         evals=None if evals is None else Path(evals))
    if target.exists() and any(target.iterdir()):
        raise InputError(f"{target} exists and is not empty; choose a new suite directory")
    warnings: list[str] = [
        f"{path}: neither an evals.json nor a trigger set; not read" for path in layout.not_read
    ]
    described = [(path, *_describe(path, warnings)) for path in layout.skills]
    names = {path: name for path, name, _ in described}
    if len(set(names.values())) < len(names):
        raise InputError(f"{source}: two skills share one name: {sorted(names.values())}; "
                         "choose them with --skill PATH")
    several = len(names) > 1
    if several and (stale is not None or bootstrap is not None):
        raise InputError(
            f"{source}: --stale and --bootstrap apply to one skill, and {len(names)} were "
            f"found ({', '.join(sorted(names.values()))}); choose it with --skill PATH"
        )
    flag = "" if evals is None else " (or another --evals)"
    created = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    try:
        suite_skills: dict[str, dict[str, Any]] = {}
        records = {}
        for path, name, skill in described:
            records[name] = copy_skill(path, target / "skills" / name)
            suite_skills[name] = skill
        conditions = ["none", "self-load", "preloaded"]
        if not several:
            path, name, skill = described[0]
            variants = target / "variants" / name
            if stale is not None:
                variants.mkdir(parents=True, exist_ok=True)
                (variants / "stale.md").write_text(_stale_text(path, stale), encoding="utf-8")
                skill["variants"] = {"stale": f"variants/{name}/stale.md"}
                conditions.append("stale")
            if bootstrap is not None:
                variants.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(bootstrap, variants / "bootstrap.md")
                skill["bootstrap"] = f"variants/{name}/bootstrap.md"
        eval_cases: list[dict[str, Any]] = []
        for evals_path in layout.evals:
            own = _own_skill(evals_path, layout.skills)
            root = own if own is not None else (
                layout.skills[0] if not several and evals is None else evals_path.parent.parent)
            parsed = read_evals(evals_path, root, warnings)
            owner = _owner(parsed, names, own, flag)
            if parsed.skill_name not in (None, owner):
                warnings.append(f"{evals_path}: skill_name '{parsed.skill_name}' differs from "
                                f"the skill's name '{owner}'")
            prefix = f"{owner}-" if several else ""
            copy_fixtures(parsed, target, prefix)
            eval_cases += assign(parsed, owner, prefix)
        trigger_cases: list[dict[str, Any]] = []
        taken: set[str] = set()
        for trigger_path in [*layout.triggers, *(Path(t) for t in triggers)]:
            parsed = read_triggers(trigger_path, warnings)
            owner = _owner(parsed, names, _own_skill(trigger_path, layout.skills), "")
            cases = assign(parsed, owner, f"{owner}-" if several else "")
            _unique_triggers(cases, trigger_path, taken)
            trigger_cases += cases
        if not eval_cases and not trigger_cases:
            raise InputError(
                f"{source}: nothing to import: no evals/{EVALS_FILE} (name one with --evals "
                "PATH) and no trigger set (--triggers FILE)"
            )
        (target / "cases").mkdir()
        for stem, cases in (("evals", eval_cases), ("triggers", trigger_cases)):
            if cases:
                _write_yaml(target / "cases" / f"{stem}.yaml", {"cases": cases})
        suite_name = next(iter(names.values())) if not several else safe_id(
            source.resolve().name)
        what = "skill directory" if not several else "skill repository"
        suite = {
            "name": suite_name,
            "description": f"Imported from the skill-creator {what} {source.resolve().name}.",
            "skills": suite_skills,
            "defaults": {"trials": 3, "conditions": conditions},
            "judge": {"provider": "simulated"},
        }
        _write_yaml(target / SUITE_FILE, suite, header=(
            "# Written by `evalkit cases import`. The simulated judge grades offline; name a\n"
            "# real one here (judge: {provider: anthropic, model: ...}) or with --judge-provider.\n"
        ))
        write_lock(target, records)
        load_suite(target)
    except BaseException:
        if created:
            shutil.rmtree(target, ignore_errors=True)
        else:
            for child in target.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        raise
    return SkillImport(
        suite_dir=target,
        skill=", ".join(sorted(names.values())),
        eval_cases=len(eval_cases),
        trigger_cases=len(trigger_cases),
        conditions=conditions,
        warnings=warnings,
        skills=sorted(names.values()),
        files_copied=sum(len(r.files) for r in records.values()),
    )

def _write_yaml(path: Path, data: dict[str, Any], header: str = "") -> None:
    body = dump_yaml(data)
    path.write_text(header + body, encoding="utf-8")
