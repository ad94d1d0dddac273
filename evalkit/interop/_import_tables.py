"""``evalkit import --format csv|jsonl``: evalkit's own tidy table, from any harness.

Why a row passed or failed comes from its optional ``reason`` column (kept as the row's one
score component, :data:`REASON_COMPONENT`, so the reports read ``grader failed: REASON``) and,
for error and timeout rows, ``error_class`` / ``error_message``. A table without them imports
as before; its items then read "no reasons recorded".
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalkit.interop._import_common import (
    PASSED_WORDS,
    ParsedSource,
    SourceRow,
    as_float,
    as_int,
    as_str,
    check_score,
    fail,
    number_trials,
    parse_json,
    read_text,
    short_error,
    source_text,
)
from evalkit.results import STATUSES

REQUIRED_COLUMNS = ("case_id", "condition", "passed")
OPTIONAL_COLUMNS = (
    "trial",
    "provider",
    "model",
    "lane",
    "score",
    "latency_s",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "split",
    "category",
    "status",
    "reason",
    "error_class",
    "error_message",
)
#: The score component a table's ``reason`` column becomes (its cause reads "grader failed").
REASON_COMPONENT = "grader"
_STRINGS = ("provider", "model", "lane", "split", "category")
_FLOATS = ("latency_s", "cost_usd")
_INTS = ("input_tokens", "output_tokens")
_FIX = (
    "a CSV/JSONL for import needs the columns case_id, condition, passed "
    "(optional: " + ", ".join(OPTIONAL_COLUMNS) + ")"
)


def _passed(value: Any, row: SourceRow) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    text = as_str(value)
    if text is None:
        raise row.problem("passed is empty; give true/false, pass/fail or 1/0")
    word = PASSED_WORDS.get(text.lower())
    if word is None:
        raise row.problem(f"passed must be true/false, pass/fail or 1/0, got {value!r}")
    return word


def _csv_records(path: Path, text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    reader = csv.DictReader(text.splitlines(keepends=True))
    try:
        header = reader.fieldnames
    except csv.Error as exc:
        raise fail(path, "line 1", f"not valid CSV: {exc}") from None
    if not header:
        raise fail(path, "", f"empty file: no header row; {_FIX}")
    names = [h.strip() for h in header]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise fail(path, "line 1", f"duplicate column(s) {', '.join(dupes)}")
    reader.fieldnames = names
    _check_columns(path, names)
    try:
        for record in reader:
            if None in record:
                raise fail(
                    path, f"line {reader.line_num}", f"more cells than the {len(names)} columns"
                )
            if not any(as_str(v) for v in record.values()):
                continue
            yield f"line {reader.line_num}", record
    except csv.Error as exc:
        raise fail(path, f"line {reader.line_num}", f"not valid CSV: {exc}") from None


def _jsonl_records(path: Path, text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    checked = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fix = (
            "a pretty-printed JSON document is not JSON Lines; a Harbor trial result.json "
            "imports with --format harbor"
            if number == 1 and path.name == "result.json"
            else ""
        )
        record = parse_json(path, line, fix, line=number)
        if not isinstance(record, dict):
            raise fail(
                path,
                f"line {number}",
                f"each line must be a JSON object, got {type(record).__name__}; {_FIX}",
            )
        if not checked:
            _check_columns(path, list(record))
            checked = True
        yield f"line {number}", record
    if not checked:
        raise fail(path, "", f"empty file: no JSON lines; {_FIX}")


def _check_columns(path: Path, names: list[str]) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        found = ", ".join(names) or "none"
        raise fail(
            path,
            "line 1",
            f"missing required column(s) {', '.join(missing)} (found: {found}); {_FIX}",
        )


def _row(path: Path, where: str, record: dict[str, Any], lane: str) -> SourceRow:
    row = SourceRow(values={}, file=str(path), where=where, identity=record)
    missing = [c for c in REQUIRED_COLUMNS if c not in record]
    if missing:
        raise row.problem(f"missing required field(s) {', '.join(missing)}; {_FIX}")
    values = row.values
    for column in ("case_id", "condition"):
        values[column] = as_str(record.get(column))
        if values[column] is None:
            raise row.problem(f"{column} is empty")
    values["passed"] = _passed(record.get("passed"), row)
    for column in _STRINGS:
        values[column] = as_str(record.get(column))
    values["lane"] = values["lane"] or lane
    for column in _FLOATS:
        values[column] = as_float(record.get(column), column, row)
    for column in _INTS:
        values[column] = as_int(record.get(column), column, row)
    values["trial"] = as_int(record.get("trial"), "trial", row)
    score = check_score(as_float(record.get("score"), "score", row), row)
    values["score"] = float(values["passed"]) if score is None else score
    status = as_str(record.get("status")) or "ok"
    if status not in STATUSES:
        raise row.problem(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
    if status in ("error", "timeout") and values["passed"]:
        raise row.problem(f"a row with status {status!r} cannot pass; set passed to false")
    values["status"] = status
    error_name = as_str(record.get("error_class"))
    message = as_str(record.get("error_message"))
    values["error_class"] = source_text(error_name, 200) if error_name else None
    values["error_message"] = short_error(message) if message else None
    reason = source_text(as_str(record.get("reason")))
    if reason is not None:
        row.scores.append(
            {
                "component": REASON_COMPONENT,
                "value": values["score"],
                "max_value": 1.0,
                "passed": values["passed"],
                "detail": reason,
            }
        )
    return row


def read_result_rows_table(paths: list[Path], format: str, lane: str) -> ParsedSource:
    """Read CSV or JSONL result tables.

    Args:
        paths: The files, in order.
        format: ``"csv"`` or ``"jsonl"``.
        lane: The lane of rows without a ``lane`` column.

    Returns:
        The rows; ``trial`` is numbered 0, 1, ... within (lane, case, condition, provider)
        in file order when the column is absent.

    Raises:
        InputError: Missing required column, bad value (naming the line and the value), or a
            ``trial`` column filled on some lines only.
    """
    rows: list[SourceRow] = []
    ignored: dict[str, None] = {}
    known = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS)
    for path in paths:
        text = read_text(path)
        if not text.strip():
            raise fail(path, "", f"empty file; {_FIX}")
        records = _csv_records(path, text) if format == "csv" else _jsonl_records(path, text)
        file_rows = []
        for where, record in records:
            ignored.update(dict.fromkeys(k for k in record if k not in known))
            file_rows.append(_row(path, where, record, lane))
        if not file_rows:
            raise fail(path, "", f"no data rows after the header; {_FIX}")
        with_trial = [r for r in file_rows if r.values["trial"] is not None]
        if with_trial and len(with_trial) < len(file_rows):
            first = next(r for r in file_rows if r.values["trial"] is None)
            raise first.problem(
                "trial is empty here but set on other lines; fill it on every line or on none "
                "(then trials are numbered 0, 1, ... in file order)"
            )
        rows += file_rows
    number_trials(rows, ("lane", "case_id", "condition", "provider"))
    warnings = []
    if ignored:
        warnings.append(
            f"ignored column(s) not in the import format: {', '.join(ignored)} "
            f"(known: {', '.join((*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS))})"
        )
    return ParsedSource(
        rows=rows,
        suite=paths[0].stem if len(paths) == 1 else paths[0].parent.name or paths[0].stem,
        warnings=warnings,
        duplicate_hint="give each repetition its own trial number",
        files=list(paths),
    )
