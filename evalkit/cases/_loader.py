"""Load and validate a suite directory, reporting every problem at once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from evalkit._paths import is_inside
from evalkit._untrusted import InputBoundError, check_yaml
from evalkit.cases._explain import did_you_mean, explain
from evalkit.cases._hashing import directory_hash, stable_hash
from evalkit.cases._models import (
    DEFAULT_CONDITIONS,
    NO_SKILL,
    Case,
    Condition,
    SuiteFile,
)
from evalkit.cases._source import _YAML_LOADER, YamlDocument, line_of, node_at, parse_yaml
from evalkit.cases._suite import SkillTexts, Suite
from evalkit.errors import Problem, SuiteError
from evalkit.sandbox import fixture_link_problems

SUITE_FILE = "suite.yaml"

M = TypeVar("M", bound=BaseModel)


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
    doc = _read_yaml(suite_path, problems)
    spec = _validate(SuiteFile, doc.data, str(suite_path), problems, doc=doc) if doc else None
    if doc is None or spec is None:
        raise SuiteError(problems)

    at = _Locator(str(suite_path), doc.node)
    skills = _load_skills(root, spec, at, problems)
    conditions = {**DEFAULT_CONDITIONS, **spec.conditions}
    _check_conditions(spec, conditions, at, problems)
    cases, case_files, sources = _load_cases(root, spec, at, problems)
    _check_cases(root, spec, cases, sources, problems)
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
        case_lines={case_id: source.at.line(()) for case_id, source in sources.items()},
    )


class _Locator:
    """Builds problems located in one YAML file (the line of the field named)."""

    def __init__(self, file: str, node: Any, prefix: tuple[int | str, ...] = ()) -> None:
        self.file = file
        self.node = node
        self.prefix = prefix

    def __call__(
        self, loc: tuple[int | str, ...], message: str, case_id: str | None = None
    ) -> Problem:
        field = _dotted(self.prefix + loc)
        return Problem(self.file, field, message, self.line(loc), case_id)

    def line(self, loc: tuple[int | str, ...]) -> int:
        """1-based line of the field at ``loc`` (below this locator's node)."""
        return line_of(self.node, loc)


def _dotted(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


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


def _read_yaml(path: Path, problems: list[Problem]) -> YamlDocument | None:
    text = _read_text(path, problems)
    if text is None:
        return None
    if not text.strip():
        problems.append(Problem(str(path), "", "empty file; expected a YAML mapping"))
        return None
    try:
        check_yaml(text, path, aliases=True)
        alias = _first_alias(text)
        if alias is not None:
            mark = alias.start_mark
            problems.append(
                Problem(
                    str(path),
                    "",
                    f"YAML aliases are not allowed in suite files (found '*{alias.anchor}'"
                    f"{f' at column {mark.column + 1}' if mark else ''}); write the value out "
                    "in full instead of referring to an anchor",
                    line=mark.line + 1 if mark else None,
                )
            )
            return None
        doc = parse_yaml(text)
    except InputBoundError as exc:
        problems.append(Problem(str(path), "", str(exc).removeprefix(f"{path}: ")))
        return None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        reason = getattr(exc, "problem", None) or str(exc)
        line = mark.line + 1 if mark else None
        problems.append(Problem(str(path), "", f"YAML syntax error{where}: {reason}", line))
        return None
    if doc is None:
        problems.append(Problem(str(path), "", "no YAML content (only comments); expected data"))
    return doc


def _validate(
    model: type[M],
    raw: Any,
    file: str,
    problems: list[Problem],
    *,
    doc: YamlDocument | None = None,
    node: Any = None,
    prefix: str = "",
) -> M | None:
    """Validate ``raw`` as ``model``; on failure add one located problem per error."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        case_id = _case_id(raw) if model is Case else None
        root = node if node is not None else (doc.node if doc is not None else None)
        source = doc if root is not None else None
        explained = [explain(model, err, source, root, prefix) for err in exc.errors()]
        for field, message, line in sorted(explained, key=lambda e: e.line or 0):
            problems.append(Problem(file, field, message, line, case_id))
        return None


def _case_id(raw: Any) -> str | None:
    if isinstance(raw, dict) and isinstance(raw.get("id"), str):
        return str(raw["id"])
    return None


def _load_skills(
    root: Path, spec: SuiteFile, at: _Locator, problems: list[Problem]
) -> dict[str, SkillTexts]:
    skills = {}
    for name, skill in spec.skills.items():
        texts: dict[str, str] = {}
        files: dict[str, tuple[tuple[str, ...], str]] = {"canonical": (("path",), skill.path)}
        if skill.bootstrap:
            files["bootstrap"] = (("bootstrap",), skill.bootstrap)
        for variant, rel in skill.variants.items():
            files[variant] = (("variants", variant), rel)
        for variant, (field, rel) in files.items():
            path = root / rel
            if Path(rel).expanduser().is_absolute() or not is_inside(rel, root):
                problems.append(
                    at(
                        ("skills", name, *field),
                        f"'{rel}' lies outside the suite directory (symlinks followed); copy "
                        "the file into the suite and give its path relative to the suite",
                    )
                )
                continue
            if not path.is_file():
                problems.append(
                    at(
                        ("skills", name, *field),
                        f"skill file not found: {path}; create it or fix the path "
                        "(paths are relative to the suite directory)",
                    )
                )
                continue
            text = _read_text(path, problems)
            if text is not None:
                texts[variant] = text
        texts.setdefault("bootstrap", texts.get("canonical", ""))
        resources = _skill_resources(root, name, skill.resources, at, problems)
        skills[name] = SkillTexts(
            name=name,
            description=skill.description,
            texts=texts,
            resources=resources,
            resources_hash=directory_hash(resources, exclude=("SKILL.md",)) if resources else "",
        )
    return skills


def _skill_resources(
    root: Path, name: str, rel: str | None, at: _Locator, problems: list[Problem]
) -> Path | None:
    """The skill's resource directory, checked like a fixture (inside the suite, safe links)."""
    if rel is None:
        return None
    path = root / rel
    where = ("skills", name, "resources")
    if Path(rel).is_absolute() or not is_inside(rel, root):
        problems.append(at(where, f"'{rel}' lies outside the suite; use a path inside it"))
        return None
    if not path.is_dir():
        problems.append(at(where, f"not a directory: {path}; create it or fix the path"))
        return None
    for link in fixture_link_problems(path):
        problems.append(at(where, str(link)))
    return path.resolve()


def _check_conditions(
    spec: SuiteFile, conditions: dict[str, Condition], at: _Locator, problems: list[Problem]
) -> None:
    for index, name in enumerate(spec.defaults.conditions):
        if name not in conditions:
            known = ", ".join(sorted(conditions))
            hint = did_you_mean(name, conditions)
            problems.append(
                at(
                    ("defaults", "conditions", index),
                    f"unknown condition '{name}'{hint} defined: {known} "
                    "(add it under 'conditions:' or use a defined one)",
                )
            )
    for name in spec.defaults.conditions:
        cond = conditions.get(name)
        if cond is None or cond.mode == "none":
            continue
        if not spec.skills:
            problems.append(
                at(
                    ("defaults", "conditions"),
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
                    at(
                        ("skills", skill_name, "variants"),
                        f"condition '{name}' uses variant '{cond.variant}', which this skill "
                        "lacks; add it or drop the condition from defaults.conditions",
                    )
                )


class _CaseSource(NamedTuple):
    """Where a case was written: its file (relative to the suite) and its located node."""

    file: str
    at: _Locator


def _case_documents(
    doc: YamlDocument, file: str, problems: list[Problem]
) -> tuple[list[Any], Any, tuple[int | str, ...]]:
    """Split a case file into case documents, their parent node and their location prefix."""
    raw = doc.data
    at = _Locator(file, doc.node)
    if isinstance(raw, list):
        return raw, doc.node, ()
    if isinstance(raw, dict) and "cases" in raw:
        for key in raw:
            if key != "cases":
                hint = did_you_mean(str(key), ["cases"]) or "; a case file holds only 'cases'"
                problems.append(at((str(key),), f"unknown field '{key}'{hint}"))
        docs = raw["cases"]
        if not isinstance(docs, list) or not docs:
            problems.append(at(("cases",), "expected a non-empty list of cases"))
            return [], None, ("cases",)
        return docs, node_at(doc.node, ("cases",)), ("cases",)
    if isinstance(raw, dict):
        return [raw], None, ()
    problems.append(at((), f"expected a mapping or a list of cases, got {type(raw).__name__}"))
    return [], None, ()


def _load_cases(
    root: Path, spec: SuiteFile, at: _Locator, problems: list[Problem]
) -> tuple[list[Case], dict[str, str], dict[str, _CaseSource]]:
    files: list[Path] = []
    for pattern in spec.cases:
        files += [p for p in root.glob(pattern) if p.is_file()]
    files = sorted(set(files))
    if not files:
        problems.append(
            at(
                ("cases",),
                f"no case files match {list(spec.cases)}; add YAML files under {root / 'cases'}",
            )
        )
    cases: list[Case] = []
    case_files: dict[str, str] = {}
    sources: dict[str, _CaseSource] = {}
    first_seen: dict[str, str] = {}
    for path in files:
        file = str(path)
        doc = _read_yaml(path, problems)
        if doc is None:
            continue
        docs, parent, prefix = _case_documents(doc, file, problems)
        loaded: list[tuple[_Locator, Case]] = []
        for i, raw in enumerate(docs):
            node = doc.node if parent is None else node_at(parent, (i,))
            where = prefix if parent is None else (*prefix, i)
            case_at = _Locator(file, node, where)
            case = _validate(Case, raw, file, problems, doc=doc, node=node, prefix=_dotted(where))
            if case is not None:
                loaded.append((case_at, case))
        for case_at, case in loaded:
            if case.id in first_seen:
                problems.append(
                    case_at(
                        ("id",),
                        f"duplicate case id '{case.id}' (first defined in {first_seen[case.id]}); "
                        "give this case another id",
                        case.id,
                    )
                )
                continue
            first_seen[case.id] = file
            case_files[case.id] = str(path.relative_to(root))
            sources[case.id] = _CaseSource(file, case_at)
            cases.append(case)
    return cases, case_files, sources


def _check_cases(
    root: Path,
    spec: SuiteFile,
    cases: list[Case],
    sources: dict[str, _CaseSource],
    problems: list[Problem],
) -> None:
    for case in cases:
        at = sources[case.id].at
        if case.expected_skill != NO_SKILL and case.expected_skill not in spec.skills:
            known = ", ".join(sorted(spec.skills)) or "(none)"
            hint = did_you_mean(case.expected_skill, spec.skills)
            problems.append(
                at(
                    ("expected_skill",),
                    f"unknown skill '{case.expected_skill}'{hint} suite skills: {known} "
                    f"(use '{NO_SKILL}' for should-not-trigger cases)",
                    case.id,
                )
            )
        for index, skill in enumerate(case.skills or ()):
            if skill not in spec.skills:
                hint = did_you_mean(skill, spec.skills)
                known = ", ".join(sorted(spec.skills)) or "(none)"
                problems.append(
                    at(
                        ("skills", index),
                        f"unknown skill '{skill}'{hint} suite skills: {known}",
                        case.id,
                    )
                )
        if case.fixture is not None and not is_inside(case.fixture, root):
            problems.append(
                at(
                    ("fixture",),
                    f"fixture '{case.fixture}' lies outside the suite directory; give a path "
                    "relative to the suite, without '..', absolute parts or symlinks out of it",
                    case.id,
                )
            )
        elif case.fixture is not None and not (root / case.fixture).is_dir():
            problems.append(
                at(
                    ("fixture",),
                    f"fixture directory not found: {root / case.fixture}; create it or fix the "
                    "path (relative to the suite directory)",
                    case.id,
                )
            )
        elif case.fixture is not None:
            problems += [
                at(("fixture",), str(error), case.id)
                for error in fixture_link_problems(root / case.fixture)
            ]
        ids = [c.id for c in case.workflow_checks]
        for index, check in enumerate(case.workflow_checks):
            if check.after is not None and check.after not in ids:
                hint = did_you_mean(check.after, ids)
                problems.append(
                    at(
                        ("workflow_checks", index, "after"),
                        f"refers to unknown check '{check.after}'{hint} checks of this case: "
                        f"{', '.join(ids)}",
                        case.id,
                    )
                )


#: Case fields only a judge reads: they cannot change the agent's outcome, so editing them
#: re-judges the stored answers instead of rerunning the agent.
JUDGE_ONLY_FIELDS = frozenset({"expectations", "rubric_pass"})


def _case_hash(root: Path, case: Case) -> str:
    content: dict[str, Any] = {"case": case.model_dump(mode="json", exclude=set(JUDGE_ONLY_FIELDS))}
    if case.fixture is not None:
        content["fixture"] = directory_hash(root / case.fixture)
    return stable_hash(content)
