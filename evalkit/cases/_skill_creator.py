"""``evalkit cases import SKILL_DIR``: a skill-creator skill directory becomes a suite.

A skill-creator skill directory holds ``SKILL.md`` (YAML frontmatter with ``name`` and
``description``), optional ``scripts/``, ``references/`` and ``assets/``, and
``evals/evals.json``: ``{"skill_name", "evals": [{"id", "prompt", "expected_output",
"files", "expectations"}]}``. Trigger eval sets are separate JSON files,
``[{"query", "should_trigger"}]``.

The suite written:

- ``skills/<name>/``: the skill directory without ``evals/``; the suite's skill points at its
  ``SKILL.md`` and installs the whole directory (``resources``) under self-load and preloaded;
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

import json
import math
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
from evalkit._untrusted import load_yaml, read_json
from evalkit.cases._loader import SUITE_FILE, load_suite
from evalkit.cases._models import NO_SKILL
from evalkit.cases._source import dump_yaml
from evalkit.errors import InputError

SKILL_FILE = "SKILL.md"
EVALS_FILE = Path("evals") / "evals.json"
_FRONTMATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL)
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.-]+")
_EVAL_KEYS = {"id", "prompt", "expected_output", "expected", "files", "expectations"}


@dataclass
class SkillImport:
    """What ``cases import SKILL_DIR`` wrote.

    Attributes:
        suite_dir: The suite written.
        skill: The skill's name.
        eval_cases: Cases made from ``evals/evals.json``.
        trigger_cases: Cases made from trigger eval sets.
        conditions: The suite's conditions.
        warnings: Things worth knowing that are not errors.
    """

    suite_dir: Path
    skill: str
    eval_cases: int
    trigger_cases: int
    conditions: list[str]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit cases import --json`` object for a skill directory."""
        return plain_fields(self, leave_out={"warnings"})


def is_skill_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a directory holding a ``SKILL.md``."""
    return (Path(path) / SKILL_FILE).is_file()


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


def _case_id(prefix: str, raw: Any) -> str:
    text = _UNSAFE_ID.sub("-", str(raw)).strip("-.") or "x"
    return f"{prefix}-{text}"


def _strings(value: Any, where: str, what: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{where}: '{what}' must be a list, got {type(value).__name__}")
    out = []
    for index, item in enumerate(value):
        text = item.get("text") if isinstance(item, dict) else item
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{where}: {what}[{index}] must be a non-empty string")
        out.append(text.strip())
    return out


def _read_json(path: Path, fix: str) -> Any:
    try:
        return read_json(path, "utf-8-sig")
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno}); {fix}"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None


def _eval_cases(
    skill_dir: Path, suite_dir: Path, name: str, warnings: list[str]
) -> list[dict[str, Any]]:
    path = skill_dir / EVALS_FILE
    if not path.is_file():
        return []
    fix = 'expected {"skill_name": ..., "evals": [{"id": 1, "prompt": ..., ...}]}'
    data = _read_json(path, fix)
    evals = data.get("evals") if isinstance(data, dict) else data
    if not isinstance(evals, list):
        raise InputError(f"{path}: no 'evals' list; {fix}")
    if isinstance(data, dict) and data.get("skill_name") not in (None, name):
        warnings.append(
            f"{path}: skill_name '{data['skill_name']}' differs from the skill's name '{name}'"
        )
    cases: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, raw in enumerate(evals):
        where = f"{path}: evals[{index}]"
        if not isinstance(raw, dict):
            raise InputError(f"{where}: each eval must be an object")
        raw_id = raw.get("id", index + 1)
        if isinstance(raw_id, bool) or not isinstance(raw_id, int | str) and not (
            isinstance(raw_id, float) and math.isfinite(raw_id)
        ):
            raise InputError(
                f"{where}: id {raw_id!r} is not an eval id; use a whole number or a string "
                "(ids name the cases and must be unique)"
            )
        case_id = _case_id("eval", raw_id)
        if case_id in seen:
            raise InputError(f"{where}: id {raw.get('id')!r} repeats; eval ids must be unique")
        seen.add(case_id)
        prompt = raw.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise InputError(f"{where}: needs a 'prompt' (the task to execute)")
        expected = raw.get("expected_output", raw.get("expected"))
        expectations = _strings(raw.get("expectations"), where, "expectations")
        case: dict[str, Any] = {
            "id": case_id,
            "category": "skill-eval",
            "expected_skill": name,
            "prompt": prompt.strip(),
        }
        if isinstance(expected, str) and expected.strip():
            case["reference"] = expected.strip()
            if not expectations:
                case["rubric"] = [expected.strip()]
                case["rubric_pass"] = 1.0
        if expectations:
            case["expectations"] = expectations
        if "reference" not in case and not expectations:
            raise InputError(
                f"{where}: nothing to grade: give 'expectations' or an 'expected_output'"
            )
        if "reference" not in case:
            warnings.append(
                f"{where}: no 'expected_output': the offline simulated judge cannot grade it "
                "(it grades against the reference); name a model judge in suite.yaml"
            )
        files = _strings(raw.get("files"), where, "files")
        if files:
            case["lane"] = "execution"
            case["fixture"] = f"fixtures/{case_id}"
            for rel in files:
                source = skill_dir / rel
                if Path(rel).is_absolute() or not is_inside(rel, skill_dir):
                    raise InputError(f"{where}: file '{rel}' lies outside the skill directory")
                if not source.is_file():
                    raise InputError(f"{where}: file '{rel}' does not exist in {skill_dir}")
                target = suite_dir / case["fixture"] / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
        extra = {k: v for k, v in raw.items() if k not in _EVAL_KEYS}
        origin = f"skill-creator {EVALS_FILE} id {raw.get('id', index + 1)!r}"
        case["provenance"] = (
            f"{origin}; other fields: {json.dumps(extra, sort_keys=True)}" if extra else origin
        )
        cases.append(case)
    return cases


def _trigger_cases(files: list[Path], name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for path in files:
        data = _read_json(path, 'expected [{"query": "...", "should_trigger": true}, ...]')
        if not isinstance(data, list):
            raise InputError(f'{path}: a trigger set is a list of {{"query", "should_trigger"}}')
        for index, raw in enumerate(data):
            where = f"{path}: [{index}]"
            query = raw.get("query") if isinstance(raw, dict) else None
            should = raw.get("should_trigger") if isinstance(raw, dict) else None
            if not isinstance(query, str) or not query.strip() or not isinstance(should, bool):
                raise InputError(
                    f"{where}: needs 'query' (text) and 'should_trigger' (true or false)"
                )
            cases.append(
                {
                    "id": f"trigger-{path.stem}-{index + 1}" if len(files) > 1
                    else f"trigger-{index + 1}",
                    "category": "trigger" if should else "should-not-trigger",
                    "expected_skill": name if should else NO_SKILL,
                    "prompt": query.strip(),
                    "provenance": f"skill-creator trigger set {path.name} [{index}]",
                }
            )
    return cases


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


def import_skill_dir(
    skill_dir: str | os.PathLike[str],
    suite_dir: str | os.PathLike[str],
    *,
    stale: str | None = None,
    bootstrap: str | os.PathLike[str] | None = None,
    triggers: tuple[str | os.PathLike[str], ...] = (),
) -> SkillImport:
    """Write a suite from a skill-creator skill directory (``evalkit cases import SKILL_DIR``).

    Args:
        skill_dir: The skill directory (``SKILL.md``, optional ``evals/evals.json``).
        suite_dir: The suite directory to create (must not exist or be empty).
        stale: A file, or a git revision of the skill's repository, giving an older
            ``SKILL.md`` (the ``stale`` condition).
        bootstrap: A file shown under self-load before the skill is loaded.
        triggers: Trigger eval sets (``[{"query", "should_trigger"}]``).

    Returns:
        A :class:`SkillImport`; the suite passes ``evalkit cases validate``.

    Raises:
        InputError: A file that cannot be used (named, with the fix); the suite directory is
            removed again.
    """
    source = Path(skill_dir)
    target = Path(suite_dir)
    if not is_skill_dir(source):
        raise InputError(f"{source}: no {SKILL_FILE}; a skill directory holds {SKILL_FILE}")
    if target.exists() and any(target.iterdir()):
        raise InputError(f"{target} exists and is not empty; choose a new suite directory")
    warnings: list[str] = []
    meta = _frontmatter(source / SKILL_FILE)
    name = _skill_name(source, meta, warnings)
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise InputError(
            f"{source / SKILL_FILE}: the frontmatter needs a 'description' (what the agent sees "
            "when it decides to load the skill)"
        )
    _check_links(source)
    trigger_files = [Path(t) for t in triggers]
    created = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copytree(
            source, target / "skills" / name, symlinks=True,
            ignore=lambda d, names: ["evals"] if Path(d) == source else [],
        )
        skill: dict[str, Any] = {
            "description": " ".join(description.split()),
            "path": f"skills/{name}/{SKILL_FILE}",
            "resources": f"skills/{name}",
        }
        conditions = ["none", "self-load", "preloaded"]
        variants = target / "variants" / name
        if stale is not None:
            variants.mkdir(parents=True, exist_ok=True)
            (variants / "stale.md").write_text(_stale_text(source, stale), encoding="utf-8")
            skill["variants"] = {"stale": f"variants/{name}/stale.md"}
            conditions.append("stale")
        if bootstrap is not None:
            variants.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(bootstrap, variants / "bootstrap.md")
            skill["bootstrap"] = f"variants/{name}/bootstrap.md"
        evals = _eval_cases(source, target, name, warnings)
        trigger_cases = _trigger_cases(trigger_files, name)
        if not evals and not trigger_cases:
            raise InputError(
                f"{source}: nothing to import: no {EVALS_FILE} and no --triggers file"
            )
        (target / "cases").mkdir()
        for stem, cases in (("evals", evals), ("triggers", trigger_cases)):
            if cases:
                _write_yaml(target / "cases" / f"{stem}.yaml", {"cases": cases})
        suite = {
            "name": name,
            "description": f"Imported from the skill-creator skill directory {source.name}.",
            "skills": {name: skill},
            "defaults": {"trials": 3, "conditions": conditions},
            "judge": {"provider": "simulated"},
        }
        _write_yaml(target / SUITE_FILE, suite, header=(
            "# Written by `evalkit cases import`. The simulated judge grades offline; name a\n"
            "# real one here (judge: {provider: anthropic, model: ...}) or with --judge-provider.\n"
        ))
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
        skill=name,
        eval_cases=len(evals),
        trigger_cases=len(trigger_cases),
        conditions=conditions,
        warnings=warnings,
    )


def _write_yaml(path: Path, data: dict[str, Any], header: str = "") -> None:
    body = dump_yaml(data)
    path.write_text(header + body, encoding="utf-8")
