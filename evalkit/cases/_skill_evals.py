"""skill-creator's eval files read as evalkit cases: ``evals.json`` and trigger sets.

``evals.json`` is ``{"skill_name", "evals": [{"id", "prompt", "expected_output", "files",
"expectations"}]}`` (schemas.md); skill-creator's SKILL.md calls the graded statements
``assertions``, and files in the wild use either, or both (they are merged, duplicates once).
A trigger set is ``[{"query", "should_trigger"}]``, or the same list wrapped in an object,
``{"skill_name", "notes", "queries": [...]}``; a query's ``id`` becomes its case id.

Nothing is dropped silently: a field evalkit does not grade is kept in the case's
``provenance`` and named in a warning.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit._paths import is_inside, unsafe_relative_reason
from evalkit._untrusted import read_json as read_untrusted_json
from evalkit.cases._models import NO_SKILL
from evalkit.errors import InputError

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.-]+")
_EVAL_KEYS = {"id", "prompt", "expected_output", "expected", "files", "expectations",
              "assertions"}
_QUERY_KEYS = {"query", "should_trigger", "id"}
_TRIGGER_FIX = 'expected [{"query": "...", "should_trigger": true}, ...] or {"queries": [...]}'


@dataclass
class EvalSet:
    """One eval file's cases, before they are given to a skill.

    Attributes:
        path: The file.
        skill_name: The ``skill_name`` it declares (None when it declares none).
        cases: Case mappings (ids not yet prefixed).
        fixtures: Fixture files to copy: (case id, source, relative path).
    """

    path: Path
    skill_name: str | None
    cases: list[dict[str, Any]] = field(default_factory=list)
    fixtures: list[tuple[str, Path, str]] = field(default_factory=list)


def read_json(path: Path, fix: str) -> Any:
    """Parse a JSON file; errors name the file, the line and the fix."""
    try:
        return read_untrusted_json(path, "utf-8-sig")
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno}); {fix}"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None


def safe_id(raw: Any) -> str:
    """A case-id fragment from any JSON value."""
    return _UNSAFE_ID.sub("-", str(raw)).strip("-.") or "x"


def _strings(value: Any, where: str, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise InputError(f"{where}: '{what}' must be a list, got {type(value).__name__}")
    out = []
    for index, item in enumerate(value):
        text = item.get("text") if isinstance(item, dict) else item
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{where}: {what}[{index}] must be a non-empty string")
        out.append(text.strip())
    return out


def _statements(raw: dict[str, Any], where: str) -> list[str]:
    """``expectations`` and ``assertions`` merged, in that order, each statement once."""
    merged: list[str] = []
    for key in ("expectations", "assertions"):
        for text in _strings(raw.get(key), where, key):
            if text not in merged:
                merged.append(text)
    return merged


def _skill_name_of(data: Any) -> str | None:
    name = data.get("skill_name") if isinstance(data, dict) else None
    return name.strip() if isinstance(name, str) and name.strip() else None


def read_evals(path: Path, skill_root: Path, warnings: list[str]) -> EvalSet:
    """Read one ``evals.json`` (see the module docstring).

    Args:
        path: The file.
        skill_root: The directory that ``files`` paths are relative to.
        warnings: Warnings are appended here (fields kept only in provenance, ...).

    Returns:
        The eval set.

    Raises:
        InputError: The file or an eval cannot be used (named, with the fix).
    """
    fix = 'expected {"skill_name": ..., "evals": [{"id": 1, "prompt": ..., ...}]}'
    data = read_json(path, fix)
    evals = data.get("evals") if isinstance(data, dict) else data
    if not isinstance(evals, list):
        raise InputError(f"{path}: no 'evals' list; {fix}")
    out = EvalSet(path=path, skill_name=_skill_name_of(data))
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
        case_id = f"eval-{safe_id(raw_id)}"
        if case_id in seen:
            raise InputError(f"{where}: id {raw.get('id')!r} repeats; eval ids must be unique")
        seen.add(case_id)
        prompt = raw.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise InputError(f"{where}: needs a 'prompt' (the task to execute)")
        expected = raw.get("expected_output", raw.get("expected"))
        statements = _statements(raw, where)
        case: dict[str, Any] = {"id": case_id, "category": "skill-eval",
                                "prompt": prompt.strip()}
        if isinstance(expected, str) and expected.strip():
            case["reference"] = expected.strip()
            if not statements:
                case["rubric"] = [expected.strip()]
                case["rubric_pass"] = 1.0
        if statements:
            case["expectations"] = statements
        if "reference" not in case and not statements:
            raise InputError(
                f"{where}: nothing to grade: give 'expectations' (or 'assertions') or an "
                "'expected_output'"
            )
        files = _strings(raw.get("files"), where, "files")
        if files:
            case["lane"] = "execution"
            case["fixture"] = f"fixtures/{case_id}"
            for rel in files:
                reason = unsafe_relative_reason(rel)
                if reason is not None:
                    raise InputError(f"{where}: file {rel!r} {reason}; name a file inside the "
                                     "skill directory by its relative path")
                if not is_inside(rel, skill_root):
                    raise InputError(f"{where}: file '{rel}' lies outside the skill directory")
                if not (skill_root / rel).is_file():
                    raise InputError(f"{where}: file '{rel}' does not exist in {skill_root}")
                out.fixtures.append((case_id, skill_root / rel, rel))
        extra = {k: v for k, v in raw.items() if k not in _EVAL_KEYS}
        origin = f"skill-creator {path.name} id {raw.get('id', index + 1)!r}"
        if extra:
            warnings.append(
                f"{where}: field(s) {', '.join(sorted(extra))} are not graded by evalkit; kept "
                "in the case's provenance (turn them into expectations or patterns to grade them)"
            )
        case["provenance"] = (
            f"{origin}; other fields: {json.dumps(extra, sort_keys=True)}" if extra else origin
        )
        out.cases.append(case)
    return out


def copy_fixtures(evals: EvalSet, suite_dir: Path, prefix: str) -> None:
    """Copy an eval set's ``files`` into the suite's fixtures (case ids with ``prefix``)."""
    for case_id, source, rel in evals.fixtures:
        target = suite_dir / "fixtures" / f"{prefix}{case_id}" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def trigger_queries(data: Any) -> list[Any] | None:
    """The query list of a trigger set (bare or wrapped), or None when it is not one."""
    if isinstance(data, dict) and isinstance(data.get("queries"), list):
        data = data["queries"]
    if not isinstance(data, list) or not data:
        return None
    if all(isinstance(q, dict) and "query" in q and "should_trigger" in q for q in data):
        return data
    return None


def read_triggers(path: Path, warnings: list[str]) -> EvalSet:
    """Read one trigger set (see the module docstring); its cases expect ``SKILL`` or none.

    The expected skill of a query that should trigger is left as the placeholder ``SKILL``
    until the set is given to a skill (:func:`assign`).

    Raises:
        InputError: Not a trigger set, or a query that cannot be used.
    """
    data = read_json(path, _TRIGGER_FIX)
    queries = data.get("queries") if isinstance(data, dict) else data
    if not isinstance(queries, list):
        raise InputError(f"{path}: not a trigger set; {_TRIGGER_FIX}")
    out = EvalSet(path=path, skill_name=_skill_name_of(data))
    if isinstance(data, dict):
        kept = sorted(set(data) - {"skill_name", "queries"})
        if kept:
            warnings.append(f"{path}: field(s) {', '.join(kept)} of the trigger set are not "
                            "graded; kept in each case's provenance")
    wrapper = {k: v for k, v in data.items() if k not in ("queries",)} if isinstance(
        data, dict) else {}
    seen: set[str] = set()
    extra_keys: set[str] = set()
    for index, raw in enumerate(queries):
        where = f"{path}: queries[{index}]" if isinstance(data, dict) else f"{path}: [{index}]"
        query = raw.get("query") if isinstance(raw, dict) else None
        should = raw.get("should_trigger") if isinstance(raw, dict) else None
        if not isinstance(query, str) or not query.strip() or not isinstance(should, bool):
            raise InputError(f"{where}: needs 'query' (text) and 'should_trigger' (true or false)")
        assert isinstance(raw, dict)
        raw_id = raw.get("id")
        case_id = f"trigger-{safe_id(raw_id)}" if raw_id is not None else f"trigger-{index + 1}"
        if case_id in seen:
            raise InputError(f"{where}: id {raw_id!r} repeats; query ids must be unique")
        seen.add(case_id)
        extra = {k: v for k, v in raw.items() if k not in _QUERY_KEYS}
        extra_keys.update(extra)
        origin = {"file": path.name, "index": index, **({"id": raw_id} if raw_id is not None
                                                        else {})}
        if extra or wrapper:
            origin["fields"] = extra | ({"set": wrapper} if wrapper else {})
        out.cases.append({
            "id": case_id,
            "category": "trigger" if should else "should-not-trigger",
            "expected_skill": "SKILL" if should else NO_SKILL,
            "prompt": query.strip(),
            "provenance": "skill-creator trigger set " + json.dumps(origin, sort_keys=True),
        })
    if extra_keys:
        warnings.append(f"{path}: query field(s) {', '.join(sorted(extra_keys))} are not graded; "
                        "kept in each case's provenance")
    return out


def assign(evals: EvalSet, skill: str, prefix: str) -> list[dict[str, Any]]:
    """The eval set's cases for ``skill``, ids prefixed with ``prefix``."""
    cases = []
    for raw in evals.cases:
        case = dict(raw)
        case["id"] = f"{prefix}{case['id']}"
        if case.get("expected_skill", "SKILL") == "SKILL":
            case["expected_skill"] = skill
        if "fixture" in case:
            case["fixture"] = f"fixtures/{case['id']}"
        cases.append(case)
    return cases
