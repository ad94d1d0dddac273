"""Load and validate a suite directory, reporting every problem at once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from evalkit._paths import is_inside
from evalkit.cases._hashing import directory_hash, stable_hash
from evalkit.cases._models import (
    DEFAULT_CONDITIONS,
    NO_SKILL,
    Case,
    Condition,
    SuiteFile,
)
from evalkit.cases._suite import SkillTexts, Suite
from evalkit.errors import Problem, SuiteError
from evalkit.sandbox import fixture_link_problems

SUITE_FILE = "suite.yaml"

M = TypeVar("M", bound=BaseModel)

#: libyaml's safe loader when available (10x faster), else the pure-Python one.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _first_alias(text: str) -> yaml.AliasEvent | None:
    """The first alias event (``*name``) of a YAML text, found without building any object.

    Aliases are refused in suite files: a few hundred bytes of nested aliases ("billion
    laughs") expand into billions of objects once constructed. Scanning the event stream costs
    one pass of the parser and allocates nothing per alias; texts without ``*`` skip it.
    """
    if "*" not in text:
        return None
    for event in yaml.parse(text, Loader=_YAML_LOADER):
        if isinstance(event, yaml.AliasEvent):
            return event
    return None


def load_suite(path: str | os.PathLike[str]) -> Suite:
    """Load and validate a suite directory.

    Args:
        path: The suite directory (holding ``suite.yaml``).

    Returns:
        The validated suite.

    Raises:
        SuiteError: With every problem found (file, field, message).

    Examples:
        >>> suite = load_suite("cases/demo")
        >>> suite.name
        'demo'
    """
    root = Path(path)
    problems: list[Problem] = []
    if not root.exists():
        raise SuiteError([Problem(str(root), "", "suite directory does not exist")])
    if not root.is_dir():
        raise SuiteError([Problem(str(root), "", "a suite is a directory holding suite.yaml")])
    suite_path = root / SUITE_FILE
    if not suite_path.exists():
        raise SuiteError([Problem(str(suite_path), "", "missing; every suite needs a suite.yaml")])
    raw = _read_yaml(suite_path, problems)
    spec = _validate(SuiteFile, raw, str(suite_path), "", problems) if raw is not None else None
    if spec is None:
        raise SuiteError(problems)

    skills = _load_skills(root, spec, problems)
    conditions = {**DEFAULT_CONDITIONS, **spec.conditions}
    _check_conditions(root, spec, conditions, problems)
    cases, case_files = _load_cases(root, spec, problems)
    _check_cases(root, spec, cases, case_files, problems)
    if problems:
        raise SuiteError(problems)

    case_hashes = {case.id: _case_hash(root, case) for case in cases}
    dataset_version = stable_hash(sorted(case_hashes.items()))
    return Suite(
        name=spec.name,
        root=root,
        spec=spec,
        skills=skills,
        conditions=conditions,
        cases=tuple(sorted(cases, key=lambda c: c.id)),
        case_files=case_files,
        case_hashes=case_hashes,
        dataset_version=dataset_version,
    )


def _rel(root: Path, path: Path) -> str:
    try:
        return str(root / path.relative_to(root))
    except ValueError:
        return str(path)


def _read_text(path: Path, problems: list[Problem]) -> str | None:
    try:
        data = path.read_bytes()
    except OSError as exc:
        problems.append(Problem(str(path), "", f"cannot read file: {exc.strerror}"))
        return None
    if b"\0" in data:
        problems.append(Problem(str(path), "", "binary file (contains NUL bytes); expected text"))
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem(str(path), "", f"not UTF-8 text (byte {exc.start})"))
        return None


def _read_yaml(path: Path, problems: list[Problem]) -> Any:
    text = _read_text(path, problems)
    if text is None:
        return None
    if not text.strip():
        problems.append(Problem(str(path), "", "empty file; expected a YAML mapping"))
        return None
    try:
        alias = _first_alias(text)
        if alias is not None:
            mark = alias.start_mark
            problems.append(
                Problem(
                    str(path),
                    f"line {mark.line + 1}, column {mark.column + 1}" if mark else "",
                    f"YAML aliases are not allowed in suite files (found '*{alias.anchor}'); "
                    "write the value out in full instead of referring to an anchor",
                )
            )
            return None
        return yaml.load(text, Loader=_YAML_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        reason = getattr(exc, "problem", None) or str(exc)
        problems.append(Problem(str(path), where, f"YAML syntax error: {reason}"))
        return None


def _loc(parts: tuple[int | str, ...], prefix: str) -> str:
    out = prefix
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("command", "file_exists", "file_matches", "json_path_equals"):
            continue  # discriminated-union tag, not a field the user wrote
        else:
            out += f".{part}" if out else str(part)
    return out


def _validate(
    model: type[M], raw: Any, file: str, prefix: str, problems: list[Problem]
) -> M | None:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors():
            field = _loc(tuple(err["loc"]), prefix)
            kind = err["type"]
            if kind == "extra_forbidden":
                message = "unknown field; remove it or fix its spelling"
            elif kind == "missing":
                message = "required field is missing"
            elif kind in ("model_type", "dict_type") and not err["loc"]:
                message = f"expected a mapping, got {type(raw).__name__}"
            else:
                message = err["msg"].removeprefix("Value error, ")
            problems.append(Problem(file, field, message))
        return None


def _load_skills(root: Path, spec: SuiteFile, problems: list[Problem]) -> dict[str, SkillTexts]:
    suite_file = str(root / SUITE_FILE)
    skills = {}
    for name, skill in spec.skills.items():
        texts: dict[str, str] = {}
        files = {"canonical": ("path", skill.path)}
        if skill.bootstrap:
            files["bootstrap"] = ("bootstrap", skill.bootstrap)
        for variant, rel in skill.variants.items():
            files[variant] = (f"variants.{variant}", rel)
        for variant, (field, rel) in files.items():
            path = root / rel
            if not path.is_file():
                problems.append(
                    Problem(suite_file, f"skills.{name}.{field}", f"skill file not found: {path}")
                )
                continue
            text = _read_text(path, problems)
            if text is not None:
                texts[variant] = text
        texts.setdefault("bootstrap", texts.get("canonical", ""))
        skills[name] = SkillTexts(name=name, description=skill.description, texts=texts)
    return skills


def _check_conditions(
    root: Path, spec: SuiteFile, conditions: dict[str, Condition], problems: list[Problem]
) -> None:
    suite_file = str(root / SUITE_FILE)
    for index, name in enumerate(spec.defaults.conditions):
        if name not in conditions:
            known = ", ".join(sorted(conditions))
            problems.append(
                Problem(
                    suite_file,
                    f"defaults.conditions[{index}]",
                    f"unknown condition '{name}'; defined: {known}",
                )
            )
    for name in spec.defaults.conditions:
        cond = conditions.get(name)
        if cond is None or cond.mode == "none":
            continue
        if not spec.skills:
            problems.append(
                Problem(
                    suite_file,
                    "defaults.conditions",
                    f"condition '{name}' needs skills but the suite defines none; "
                    "add skills or set defaults.conditions to [none]",
                )
            )
            continue
        if cond.variant in ("canonical", "bootstrap"):
            continue
        for skill_name, skill in spec.skills.items():
            if cond.variant not in skill.variants:
                problems.append(
                    Problem(
                        suite_file,
                        f"skills.{skill_name}.variants",
                        f"condition '{name}' uses variant '{cond.variant}', which this skill "
                        "lacks; add it or drop the condition from defaults.conditions",
                    )
                )


def _case_documents(raw: Any, file: str, problems: list[Problem]) -> tuple[list[Any], str]:
    """Split a case file into case documents and the field prefix of their locations."""
    if isinstance(raw, list):
        return raw, ""
    if isinstance(raw, dict) and "cases" in raw:
        for key in raw:
            if key != "cases":
                problems.append(Problem(file, str(key), "unknown field; a case file holds 'cases'"))
        docs = raw["cases"]
        if not isinstance(docs, list) or not docs:
            problems.append(Problem(file, "cases", "expected a non-empty list of cases"))
            return [], "cases"
        return docs, "cases"
    if isinstance(raw, dict):
        return [raw], ""
    problems.append(
        Problem(file, "", f"expected a mapping or a list of cases, got {type(raw).__name__}")
    )
    return [], ""


def _load_cases(
    root: Path, spec: SuiteFile, problems: list[Problem]
) -> tuple[list[Case], dict[str, str]]:
    files: list[Path] = []
    for pattern in spec.cases:
        files += [p for p in root.glob(pattern) if p.is_file()]
    files = sorted(set(files))
    if not files:
        problems.append(
            Problem(
                str(root / SUITE_FILE),
                "cases",
                f"no case files match {list(spec.cases)}; add YAML files under {root / 'cases'}",
            )
        )
    cases: list[Case] = []
    case_files: dict[str, str] = {}
    first_seen: dict[str, str] = {}
    for path in files:
        file = str(path)
        raw = _read_yaml(path, problems)
        if raw is None:
            continue
        docs, prefix = _case_documents(raw, file, problems)
        single = not prefix and isinstance(raw, dict)
        loaded: list[tuple[int, Case]] = []
        for i, doc in enumerate(docs):
            where = "" if single else f"{prefix}[{i}]"
            case = _validate(Case, doc, file, where, problems)
            if case is not None:
                loaded.append((i, case))
        for i, case in loaded:
            if case.id in first_seen:
                where = "id" if single else f"{prefix}[{i}].id"
                problems.append(
                    Problem(
                        file,
                        where,
                        f"duplicate case id '{case.id}' (first defined in {first_seen[case.id]})",
                    )
                )
                continue
            first_seen[case.id] = file
            case_files[case.id] = str(path.relative_to(root))
            cases.append(case)
    return cases, case_files


def _check_cases(
    root: Path,
    spec: SuiteFile,
    cases: list[Case],
    case_files: dict[str, str],
    problems: list[Problem],
) -> None:
    for case in cases:
        file = str(root / case_files[case.id])
        where = f"case '{case.id}'"
        if case.expected_skill != NO_SKILL and case.expected_skill not in spec.skills:
            known = ", ".join(sorted(spec.skills)) or "(none)"
            problems.append(
                Problem(
                    file,
                    f"{where}.expected_skill",
                    f"unknown skill '{case.expected_skill}'; suite skills: {known}",
                )
            )
        for skill in case.skills or ():
            if skill not in spec.skills:
                problems.append(Problem(file, f"{where}.skills", f"unknown skill '{skill}'"))
        if case.fixture is not None and not is_inside(case.fixture, root):
            problems.append(
                Problem(
                    file,
                    f"{where}.fixture",
                    f"fixture '{case.fixture}' lies outside the suite directory; give a path "
                    "relative to the suite, without '..', absolute parts or symlinks out of it",
                )
            )
        elif case.fixture is not None and not (root / case.fixture).is_dir():
            problems.append(
                Problem(
                    file,
                    f"{where}.fixture",
                    f"fixture directory not found: {root / case.fixture}",
                )
            )
        elif case.fixture is not None:
            problems += [
                Problem(file, f"{where}.fixture", str(error))
                for error in fixture_link_problems(root / case.fixture)
            ]
        ids = [c.id for c in case.workflow_checks]
        for check in case.workflow_checks:
            if check.after is not None and check.after not in ids:
                problems.append(
                    Problem(
                        file,
                        f"{where}.workflow_checks.{check.id}.after",
                        f"refers to unknown check '{check.after}'",
                    )
                )


def _case_hash(root: Path, case: Case) -> str:
    content: dict[str, Any] = {"case": case.model_dump(mode="json")}
    if case.fixture is not None:
        content["fixture"] = directory_hash(root / case.fixture)
    return stable_hash(content)
