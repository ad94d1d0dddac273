"""Load and validate a suite directory, reporting every problem at once."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from evalkit._paths import is_inside
from evalkit._untrusted import InputBoundError, check_yaml
from evalkit.cases._explain import did_you_mean, explain_all
from evalkit.cases._hashing import directory_hash, stable_hash
from evalkit.cases._lint import reference_warnings
from evalkit.cases._models import (
    DEFAULT_CONDITIONS,
    NO_SKILL,
    Case,
    Condition,
    SuiteFile,
)
from evalkit.cases._salvage import Salvaged, salvage
from evalkit.cases._source import _YAML_LOADER, YamlDocument, line_of, node_at, parse_yaml
from evalkit.cases._suite import SkillTexts, Suite
from evalkit.errors import Problem, SuiteError, unique_problems
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
    inspection = inspect_suite(path)
    if inspection.suite is None:
        raise SuiteError(list(inspection.problems))
    return inspection.suite


class SuiteInspection(NamedTuple):
    """Everything one pass of validation found in a suite directory.

    Attributes:
        suite: The suite, when it has no problem (warnings allowed); else None.
        problems: Every problem of every file (suite.yaml, skill files, case files,
            fixtures), each told once, in file order.
        warnings: What is allowed but likely wrong (a reference that trips an anti-pattern).
        checkable: The cases that loaded without a problem, as a suite whose reference
            checks can run; None when suite.yaml is too broken to score by (its
            ``defaults`` or ``anti_patterns`` have problems) or no case loaded cleanly.
        name: The suite's name as written (None when suite.yaml does not give one).
    """

    suite: Suite | None
    problems: tuple[Problem, ...]
    warnings: tuple[Problem, ...] = ()
    checkable: Suite | None = None
    name: str | None = None


def inspect_suite(path: str | os.PathLike[str]) -> SuiteInspection:
    """Validate a suite directory in one pass, collecting every problem and warning.

    A problem in one file never hides another file's: the case files are read even when
    ``suite.yaml`` is wrong (with what of it validates), and a case with one wrong field still
    has its fixture, skills and id checked.

    Args:
        path: The suite directory (holding ``suite.yaml``).

    Returns:
        The suite (when valid), the problems, the warnings and the cleanly loaded cases.

    Examples:
        >>> found = inspect_suite("tests/fixtures/suites/tiny")
        >>> found.suite is not None, found.problems
        (True, ())
    """
    root = Path(path)
    if not root.exists():
        return SuiteInspection(None, (Problem(str(root), "", "suite directory does not exist"),))
    if not root.is_dir():
        problem = Problem(str(root), "", "a suite is a directory holding suite.yaml")
        return SuiteInspection(None, (problem,))
    suite_path = root / SUITE_FILE
    if not suite_path.exists():
        problem = Problem(str(suite_path), "", "missing; every suite needs a suite.yaml")
        return SuiteInspection(None, (problem,))
    problems: list[Problem] = []
    doc = _read_yaml(suite_path, problems)
    spec = _suite_spec(root, doc, suite_path, problems)
    at = _Locator(str(suite_path), doc.node if doc else None)
    skills = _load_skills(root, spec.model, at, problems)
    conditions = {**DEFAULT_CONDITIONS, **spec.model.conditions}
    if not spec.lost("*", "conditions", "skills", "defaults"):
        _check_conditions(spec.model, conditions, at, problems)
    known_skills = _known_skills(doc, spec)
    loaded = _load_cases(root, spec.model, at, problems)
    warnings: list[Problem] = []
    clean: list[_LoadedCase] = []
    for entry in loaded:
        before = len(problems)
        _check_case(root, known_skills, entry, problems)
        if entry.clean and len(problems) == before:
            clean.append(entry)
            warnings += reference_warnings(spec.model, entry.case, entry.source.at)
    name = spec.model.name if not spec.lost("*", "name") else None

    def build(entries: list[_LoadedCase]) -> Suite:
        cases = [e.case for e in entries]
        case_hashes = {case.id: _case_hash(root, case) for case in cases}
        return Suite(
            name=spec.model.name,
            root=root,
            spec=spec.model,
            skills=skills,
            conditions=conditions,
            cases=tuple(sorted(cases, key=lambda c: c.id)),
            case_files={e.case.id: str(Path(e.source.file).relative_to(root)) for e in entries},
            case_hashes=case_hashes,
            dataset_version=stable_hash(sorted(case_hashes.items())),
            case_lines={e.case.id: e.source.at.line(()) or 1 for e in entries},
        )

    unique = tuple(sorted(unique_problems(problems), key=_file_order(suite_path)))
    if not unique:
        suite = build(clean)
        return SuiteInspection(suite, (), tuple(warnings), suite, name)
    scorable = clean and not spec.lost("*", "defaults.pass_threshold", "anti_patterns")
    checkable = build(clean) if scorable else None
    return SuiteInspection(None, unique, tuple(warnings), checkable, name)


def _file_order(suite_path: Path) -> Callable[[Problem], tuple[bool, str, int]]:
    """Sort key of problems: suite.yaml's first, then by file and line."""
    first = str(suite_path)
    return lambda p: (p.file != first, p.file, p.line or 0)


#: The placeholder name of a suite whose suite.yaml gives none that validates.
_UNNAMED = "unnamed"


def _suite_spec(
    root: Path, doc: YamlDocument | None, suite_path: Path, problems: list[Problem]
) -> Salvaged[SuiteFile]:
    """suite.yaml validated; on problems, what of it validates (``"*"``: nothing did)."""
    nothing = Salvaged(SuiteFile(name=_UNNAMED), frozenset({"*"}))
    if doc is None:
        return nothing
    errors = _validate(SuiteFile, doc.data, str(suite_path), problems, doc=doc)
    if isinstance(errors, SuiteFile):
        return Salvaged(errors, frozenset())
    return salvage(SuiteFile, doc.data, errors, {"name": _UNNAMED}) or nothing


def _known_skills(doc: YamlDocument | None, spec: Salvaged[SuiteFile]) -> set[str] | None:
    """The skill names suite.yaml defines, or None when they cannot be told."""
    if not spec.lost("*", "skills"):
        return set(spec.model.skills)
    raw = doc.data.get("skills") if doc is not None and isinstance(doc.data, dict) else None
    if isinstance(raw, dict):
        return {str(name) for name in raw}
    return None


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

    def line(self, loc: tuple[int | str, ...]) -> int | None:
        """1-based line of the field at ``loc`` (below this locator's node), when known."""
        return line_of(self.node, loc) if self.node is not None else None


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
) -> M | list[ErrorDetails]:
    """Validate ``raw`` as ``model``; on failure add one located problem per error.

    Returns:
        The model, or the errors of the failed validation (for :func:`salvage`).
    """
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        case_id = _case_id(raw) if model is Case else None
        root = node if node is not None else (doc.node if doc is not None else None)
        source = doc if root is not None else None
        errors = exc.errors()
        for field, message, line in explain_all(model, errors, source, root, prefix):
            problems.append(Problem(file, field, message, line, case_id))
        return errors


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


class _LoadedCase(NamedTuple):
    """A case read from a case file: validated, or salvaged from a failed validation."""

    case: Case
    source: _CaseSource
    salvaged: Salvaged[Case]
    clean: bool
    case_id: str | None


def _case_files(root: Path, spec: SuiteFile, at: _Locator, problems: list[Problem]) -> list[Path]:
    files: list[Path] = []
    for pattern in spec.cases:
        files += [p for p in root.glob(pattern) if p.is_file()]
    if not files:
        problems.append(
            at(
                ("cases",),
                f"no case files match {list(spec.cases)}; add YAML files under {root / 'cases'}",
            )
        )
    return sorted(set(files))


def _load_cases(
    root: Path, spec: SuiteFile, at: _Locator, problems: list[Problem]
) -> list[_LoadedCase]:
    """Every case of every case file; a duplicate id is a problem naming both definitions."""
    loaded: list[_LoadedCase] = []
    first_seen: dict[str, _Locator] = {}
    for path in _case_files(root, spec, at, problems):
        file = str(path)
        doc = _read_yaml(path, problems)
        if doc is None:
            continue
        docs, parent, prefix = _case_documents(doc, file, problems)
        for i, raw in enumerate(docs):
            node = doc.node if parent is None else node_at(parent, (i,))
            where = prefix if parent is None else (*prefix, i)
            case_at = _Locator(file, node, where)
            case_id = _case_id(raw)
            duplicate = case_id is not None and case_id in first_seen
            if case_id is not None and duplicate:
                first, here = (
                    f"{a.file}:{a.line(('id',))}" for a in (first_seen[case_id], case_at)
                )
                problems.append(
                    case_at(
                        ("id",),
                        f"duplicate case id '{case_id}': defined at {first} and again here at "
                        f"{here}; ids are unique across the suite, rename one of them",
                        case_id,
                    )
                )
            elif case_id is not None:
                first_seen[case_id] = case_at
            result = _validate(Case, raw, file, problems, doc=doc, node=node, prefix=_dotted(where))
            if isinstance(result, Case):
                salvaged, clean = Salvaged(result, frozenset()), not duplicate
            else:
                placeholders = {"id": "unnamed", "prompt": "?"}
                found = salvage(Case, raw, result, placeholders)
                if found is None:
                    continue
                salvaged, clean = found, False
            source = _CaseSource(file, case_at)
            loaded.append(_LoadedCase(salvaged.model, source, salvaged, clean, case_id))
    return loaded


def _check_case(
    root: Path, known_skills: set[str] | None, entry: _LoadedCase, problems: list[Problem]
) -> None:
    """The checks of one case that need the suite (skills, fixture) or several fields.

    A check that reads a field removed from a salvaged case is skipped: its value is not the
    one written.
    """
    case, at, case_id, lost = entry.case, entry.source.at, entry.case_id, entry.salvaged.lost
    if known_skills is not None and not lost("expected_skill"):
        if case.expected_skill != NO_SKILL and case.expected_skill not in known_skills:
            known = ", ".join(sorted(known_skills)) or "(none)"
            hint = did_you_mean(case.expected_skill, known_skills)
            problems.append(
                at(
                    ("expected_skill",),
                    f"unknown skill '{case.expected_skill}'{hint} suite skills: {known} "
                    f"(use '{NO_SKILL}' for should-not-trigger cases)",
                    case_id,
                )
            )
    for index, skill in enumerate(case.skills or ()):
        if known_skills is not None and not lost("skills") and skill not in known_skills:
            hint = did_you_mean(skill, known_skills)
            known = ", ".join(sorted(known_skills)) or "(none)"
            problems.append(
                at(
                    ("skills", index),
                    f"unknown skill '{skill}'{hint} suite skills: {known}",
                    case_id,
                )
            )
    if not lost("fixture"):
        problems += _fixture_problems(root, case, at, case_id)
    if lost("workflow_checks"):
        return
    ids = [c.id for c in case.workflow_checks]
    for index, check in enumerate(case.workflow_checks):
        if check.after is not None and check.after not in ids:
            hint = did_you_mean(check.after, ids)
            problems.append(
                at(
                    ("workflow_checks", index, "after"),
                    f"refers to unknown check '{check.after}'{hint} checks of this case: "
                    f"{', '.join(ids)}",
                    case_id,
                )
            )


def _fixture_problems(root: Path, case: Case, at: _Locator, case_id: str | None) -> list[Problem]:
    if case.fixture is None:
        return []
    if not is_inside(case.fixture, root):
        return [
            at(
                ("fixture",),
                f"fixture '{case.fixture}' lies outside the suite directory; give a path "
                "relative to the suite, without '..', absolute parts or symlinks out of it",
                case_id,
            )
        ]
    if not (root / case.fixture).is_dir():
        return [
            at(
                ("fixture",),
                f"fixture directory not found: {root / case.fixture}; create it or fix the "
                "path (relative to the suite directory)",
                case_id,
            )
        ]
    return [at(("fixture",), str(e), case_id) for e in fixture_link_problems(root / case.fixture)]


#: Case fields only a judge reads: they cannot change the agent's outcome, so editing them
#: re-judges the stored answers instead of rerunning the agent.
JUDGE_ONLY_FIELDS = frozenset({"expectations", "rubric_pass"})


def _case_hash(root: Path, case: Case) -> str:
    content: dict[str, Any] = {"case": case.model_dump(mode="json", exclude=set(JUDGE_ONLY_FIELDS))}
    if case.fixture is not None:
        content["fixture"] = directory_hash(root / case.fixture)
    return stable_hash(content)
