"""``evalkit cases import TABLE``: prompt-lane cases from a CSV or JSONL dataset.

Each row becomes one case. The columns are named by the caller (``--prompt-col`` and the
optional id, expected-skill, expectations, pattern, category and split columns); every row is
validated as a case is in a suite file, and every problem is reported as
``data.csv:LINE: column 'x' (case 'id'): message`` before anything is written.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalkit._plain import plain_fields
from evalkit._untrusted import load_json, read_text
from evalkit.cases._explain import did_you_mean, explain
from evalkit.cases._loader import SUITE_FILE, load_suite
from evalkit.cases._models import NO_SKILL, Case
from evalkit.cases._source import dump_yaml
from evalkit.errors import InputError, Problem, SuiteError

#: The table formats ``cases import`` reads, by file suffix.
TABLE_SUFFIXES: dict[str, str] = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.-]+")
#: TableColumns attribute -> Case field, where they differ.
_CASE_FIELD = {"pattern": "expected_patterns"}


@dataclass(frozen=True)
class TableColumns:
    """Which column of the table feeds which case field.

    Attributes:
        prompt: The prompt (required).
        id: The case id (default: ``<file stem>-<row number>``).
        expected_skill: The skill that should trigger (empty: none, a should-not-trigger case).
        expectations: Statements a judge grades (a JSON list, or one per line in a CSV cell).
        pattern: Regular expressions the answer must match (same list forms).
        category: The case category (default: ``trigger`` when a skill is expected, else
            ``should-not-trigger``).
        split: ``dev``, ``holdout`` or ``test`` (default ``dev``).
    """

    prompt: str
    id: str | None = None
    expected_skill: str | None = None
    expectations: str | None = None
    pattern: str | None = None
    category: str | None = None
    split: str | None = None

    def given(self) -> dict[str, str]:
        """Case field -> column, for the columns that were named."""
        return {k: v for k, v in vars(self).items() if v is not None}


@dataclass(frozen=True)
class CaseTableImport:
    """What ``cases import`` wrote.

    Attributes:
        source: The table read.
        output: The case file written.
        cases: Number of cases written.
        by_category: Cases per category.
    """

    source: Path
    output: Path
    cases: int
    by_category: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit cases import --json`` object."""
        return plain_fields(self)


def _rows(path: Path, kind: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, row) pairs; the line is where the row starts in the file."""
    try:
        text = read_text(path, "utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if kind == "jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = load_json(line, f"{path}:{number}")
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno}); "
                    "a JSONL dataset holds one JSON object per line"
                ) from None
            if not isinstance(row, dict):
                raise InputError(f"{path}:{number}: expected a JSON object, got {row!r:.60}")
            yield number, row
        return
    reader = csv.DictReader(text.splitlines(keepends=True))
    start = 2
    for row in reader:
        yield start, {k: v for k, v in row.items() if k is not None}
        start = reader.line_num + 1


def _as_list(value: Any) -> list[str]:
    """A list cell: a JSON list, a JSON list written as text, or one item per line."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    text = str(value).strip()
    if text.startswith("["):
        try:
            parsed = load_json(text, "expectations cell")
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return [str(v).strip() for v in parsed if str(v).strip()]
    return [line.strip() for line in text.splitlines() if line.strip()]


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _case(
    row: dict[str, Any], line: int, columns: TableColumns, stem: str
) -> dict[str, Any]:
    skill = _text(row.get(columns.expected_skill)) if columns.expected_skill else None
    raw_id = _text(row.get(columns.id)) if columns.id else None
    case: dict[str, Any] = {
        "id": raw_id if raw_id is not None else f"{_UNSAFE_ID.sub('-', stem)}-{line}",
        "lane": "prompt",
        "prompt": _text(row.get(columns.prompt)) or "",
        "expected_skill": skill or NO_SKILL,
        "category": (_text(row.get(columns.category)) if columns.category else None)
        or ("trigger" if skill and skill != NO_SKILL else "should-not-trigger"),
    }
    if columns.split and _text(row.get(columns.split)):
        case["split"] = _text(row.get(columns.split))
    if columns.pattern:
        case["expected_patterns"] = _as_list(row.get(columns.pattern))
    if columns.expectations:
        case["expectations"] = _as_list(row.get(columns.expectations))
    return case


def _check_columns(path: Path, header: set[str], columns: TableColumns) -> None:
    missing = [(f, c) for f, c in columns.given().items() if c not in header]
    if missing:
        field, column = missing[0]
        option = "--" + field.replace("_", "-") + "-col"
        raise InputError(
            f"{path}: no column '{column}' (given by {option}); the table has "
            f"{', '.join(sorted(header)) or 'no columns'}{did_you_mean(column, header)}"
        )


def read_case_table(
    source: str | os.PathLike[str],
    columns: TableColumns,
    skills: Collection[str] | None = None,
) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Read a dataset into case mappings, validating each as a suite case.

    Args:
        source: A ``.csv`` or ``.jsonl`` file.
        columns: Which column feeds which field.
        skills: The suite's skills, when the cases go into a suite (expected skills are
            checked against them).

    Returns:
        The cases (plain mappings, as they will be written) and every problem found.

    Raises:
        InputError: Unreadable file, unknown suffix, or a named column that does not exist.
    """
    path = Path(source)
    kind = TABLE_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise InputError(
            f"{path}: cases import reads .csv or .jsonl tables (or a skill directory); "
            f"got '{path.suffix or 'no suffix'}'"
        )
    field_of = {
        column: _CASE_FIELD.get(field, field) for field, column in columns.given().items()
    }
    cases: list[dict[str, Any]] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    rows = list(_rows(path, kind))
    if not rows:
        raise InputError(f"{path}: the table holds no rows")
    # a CSV has one header; JSONL objects may each carry a subset of the keys
    _check_columns(path, set().union(*(row for _, row in rows)), columns)
    for line, row in rows:
        case = _case(row, line, columns, path.stem)
        try:
            Case.model_validate(case)
        except ValidationError as exc:
            for error in exc.errors():
                where, message, _ = explain(Case, error, None, None, "")
                if error["type"] == "string_too_short":
                    message = "is empty; every case needs one"
                field = where.split(".")[0].split("[")[0]
                column = next((c for c, f in field_of.items() if f == field), None)
                label = f"column '{column}'" if column else f"field '{where}'"
                problems.append(Problem(str(path), label, message, line, str(case["id"])))
        skill = case["expected_skill"]
        if skills is not None and skill != NO_SKILL and skill not in skills:
            problems.append(
                Problem(
                    str(path), f"column '{columns.expected_skill}'",
                    f"unknown skill '{skill}'{did_you_mean(skill, skills)} suite skills: "
                    f"{', '.join(sorted(skills))}", line, str(case["id"]),
                )
            )
        if case["id"] in seen:
            problems.append(
                Problem(
                    str(path), "", f"case id '{case['id']}' repeats line {seen[case['id']]}; "
                    "ids must be unique", line,
                )
            )
        seen.setdefault(str(case["id"]), line)
        cases.append(case)
    return cases, problems


def import_case_table(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    columns: TableColumns,
    *,
    overwrite: bool = False,
) -> CaseTableImport:
    r"""Write a suite case file from a CSV/JSONL dataset (``evalkit cases import TABLE``).

    Args:
        source: The table.
        output: The YAML case file to write, or a suite directory (the file goes to
            ``<suite>/cases/<table stem>.yaml``). Inside a suite, expected skills must be
            the suite's.
        columns: Which column feeds which case field.
        overwrite: Replace an existing output file.

    Returns:
        A :class:`CaseTableImport`.

    Raises:
        SuiteError: Rows that are not valid cases (every problem, ``file:line``).
        InputError: Unreadable table, missing column, or an existing output file.

    Examples:
        >>> import tempfile
        >>> tmp = Path(tempfile.mkdtemp())
        >>> rows = ["q,skill", "Tidy this bash loop,safe-shell", "What is 2+2?,"]
        >>> _ = (tmp / "qs.csv").write_text("\n".join(rows))
        >>> done = import_case_table(tmp / "qs.csv", tmp / "qs.yaml",
        ...                          TableColumns(prompt="q", expected_skill="skill"))
        >>> done.cases, done.by_category
        (2, {'trigger': 1, 'should-not-trigger': 1})
    """
    path = Path(source)
    target = Path(output)
    if target.is_dir():
        target = target / "cases" / f"{path.stem}.yaml"
    suite_dir = target.parent.parent
    skills = set(load_suite(suite_dir).skills) if (suite_dir / SUITE_FILE).is_file() else None
    cases, problems = read_case_table(path, columns, skills)
    if problems:
        raise SuiteError(problems)
    if target.exists() and not overwrite:
        raise InputError(f"{target} exists; choose another -o or pass --force")
    target.parent.mkdir(parents=True, exist_ok=True)
    header = f"# Imported from {path.name} by `evalkit cases import` ({len(cases)} cases).\n"
    body = dump_yaml({"cases": cases})
    target.write_text(header + body, encoding="utf-8")
    return CaseTableImport(
        source=path,
        output=target,
        cases=len(cases),
        by_category=dict(Counter(str(c["category"]) for c in cases)),
    )
