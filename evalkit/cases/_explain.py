"""Turn pydantic validation errors into messages a newcomer can act on.

Each message says what is wrong and how to fix it: unknown fields are named with a "did you
mean" for near misses, a value YAML read as something other than text explains why (an
unquoted ``key: value`` colon, ``yes``/``no``, a number) and shows the quoted fix.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal, NamedTuple, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from evalkit.cases._models import _ID_PATTERN
from evalkit.cases._source import YamlDocument, line_of, node_at, written


class Explained(NamedTuple):
    """One validation error, located and explained.

    Attributes:
        field: Dotted path of the field as written (``cases[0].verifier[1].path``).
        message: What is wrong and the fix.
        line: 1-based line in the file, when the document has a node tree.
    """

    field: str
    message: str
    line: int | None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A ``"; did you mean 'x'?"`` suffix for the closest choice, or ``""``.

    Examples:
        >>> did_you_mean("expected_skil", ["expected_skill", "skills", "prompt"])
        "; did you mean 'expected_skill'?"
        >>> did_you_mean("zzz", ["prompt"])
        ''
    """
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def explain(
    model: type[BaseModel],
    error: ErrorDetails,
    doc: YamlDocument | None,
    root: Any,
    prefix: str,
) -> Explained:
    """Locate and explain one pydantic error of ``model`` validated from ``root``.

    Args:
        model: The model that was validated.
        error: One entry of ``ValidationError.errors()``.
        doc: The YAML document the value came from (for line numbers and quoting), if any.
        root: The node (inside ``doc``) the model was validated from.
        prefix: Path of ``root`` inside the file (``cases[2]``), or ``""``.

    Returns:
        The field path, the message with its fix, and the line.
    """
    loc = tuple(error["loc"])
    kind = error["type"]
    tags = _union_tags(model, loc)
    field = _path(loc, prefix, tags)
    line = line_of(root, loc, key=kind == "extra_forbidden") if doc is not None else None
    value = error.get("input")
    if kind == "extra_forbidden":
        name = str(loc[-1])
        allowed = _fields(_type_at(model, loc[:-1]))
        hint = did_you_mean(name, allowed) or (
            f"; allowed here: {', '.join(allowed)}" if allowed else ""
        )
        message = f"unknown field '{name}'{hint} (remove it or fix its spelling)"
        return Explained(field, message, line)
    if kind == "missing":
        return Explained(field, f"required field is missing; add '{loc[-1]}:'", line)
    if kind in ("model_type", "model_attributes_type", "dict_type") and not loc:
        return Explained(field, f"expected a mapping, got {_yaml_kind(value)}", line)
    quoted = written(doc, node_at(root, loc)) if doc is not None else ""
    if kind == "string_type":
        return Explained(field, _not_text(value, quoted), line)
    if kind in ("tuple_type", "list_type") and isinstance(value, str):
        name = str(loc[-1]) if loc else "field"
        return Explained(
            field,
            f"expected a list, got a single string; write it as a list: {name}: [{quoted}] "
            "or one '- item' per line",
            line,
        )
    if kind == "literal_error":
        choices = _literal_choices(_type_at(model, loc))
        hint = did_you_mean(str(value), choices) if isinstance(value, str) else ""
        return Explained(field, f"{_clean(error['msg'])}, got {value!r}{hint}", line)
    if kind == "union_tag_invalid":
        tags_text = str(error.get("ctx", {}).get("expected_tags", ""))
        expected = [tag.strip(" '") for tag in tags_text.split(",")]
        tag = error.get("ctx", {}).get("tag", value)  # the input is the mapping holding it
        hint = did_you_mean(str(tag), expected) if isinstance(tag, str) else ""
        return Explained(field, _clean(error["msg"]) + hint, line)
    if kind == "union_tag_not_found":
        kinds = [tag for m in _members(_type_at(model, loc)) if (tag := _tag_of(m))]
        discriminator = error.get("ctx", {}).get("discriminator", "'kind'")
        return Explained(
            field, f"{discriminator} is missing; add it, one of: {', '.join(kinds)}", line
        )
    if kind == "string_pattern_mismatch" and error.get("ctx", {}).get("pattern") == _ID_PATTERN:
        return Explained(
            field,
            f"'{value}' is not a valid id; use letters, digits and _ . - only, starting with a "
            "letter or digit",
            line,
        )
    limits = _limits(model, loc) if kind in _NUMBER_ERRORS else ""
    if quoted and kind != "value_error" and not isinstance(value, dict | list):
        return Explained(field, f"{_clean(error['msg'])}, got {quoted}{limits}", line)
    return Explained(field, _clean(error["msg"]) + limits, line)


def explain_all(
    model: type[BaseModel],
    errors: Sequence[ErrorDetails],
    doc: YamlDocument | None,
    root: Any,
    prefix: str,
) -> list[Explained]:
    """Explain every error of one validation once, in line order (see :func:`explain`).

    A value of a plain union (``str | Expectation``) that fits no member fails once per
    member; only the errors of the member the value was written as are kept (a mapping: the
    model; anything else: text), and identical messages are told once.
    """
    out: list[Explained] = []
    for error in _written_members(model, errors):
        explained = explain(model, error, doc, root, prefix)
        if explained not in out:
            out.append(explained)
    return sorted(out, key=lambda e: e.line or 0)


def _written_members(model: type[BaseModel], errors: Sequence[ErrorDetails]) -> list[ErrorDetails]:
    """``errors`` without those of union members the value was not written as."""
    groups: dict[tuple[int | str, ...], list[tuple[Any, ErrorDetails]]] = {}
    plain: list[ErrorDetails] = []
    for error in errors:
        loc = tuple(error["loc"])
        found = _first_member(model, loc)
        if found is None:
            plain.append(error)
        else:
            at, member = found
            groups.setdefault(loc[:at], []).append((member, error))
    kept = list(plain)
    for at_loc, members in groups.items():
        value = next(
            (e.get("input") for _, e in members if len(e["loc"]) == len(at_loc) + 1), None
        )
        fitting = [e for m, e in members if _is_model(m) == isinstance(value, dict)]
        kept += fitting or [e for _, e in members]
    order = {id(e): i for i, e in enumerate(errors)}
    return sorted(kept, key=lambda e: order[id(e)])


def _first_member(model: type[BaseModel], loc: Sequence[int | str]) -> tuple[int, Any] | None:
    """Position in ``loc`` of the first plain-union member name, and that member."""
    tp: Any = model
    for i, part in enumerate(loc):
        member = _member_label(tp, part)
        if member is not None:
            return i, member
        tp = _step(tp, part)
        if tp is None:
            return None
    return None


#: Errors of a number field, whose message then states the field's allowed range.
_NUMBER_ERRORS = frozenset({
    "float_parsing", "float_type", "int_parsing", "int_type", "int_from_float",
    "greater_than", "greater_than_equal", "less_than", "less_than_equal", "finite_number",
})


def _limits(model: type[BaseModel], loc: Sequence[int | str]) -> str:
    """``"; allowed: 0 to 1"`` from the field's ``ge``/``gt``/``le``/``lt`` constraints."""
    if not loc or not isinstance(loc[-1], str):
        return ""
    parents = [m for m in _members(_type_at(model, loc[:-1])) if _is_model(m)]
    info = next((m.model_fields[loc[-1]] for m in parents if loc[-1] in m.model_fields), None)
    if info is None:
        return ""
    low = high = None
    for item in info.metadata:
        low = getattr(item, "ge", None) if getattr(item, "ge", None) is not None else low
        low = getattr(item, "gt", None) if getattr(item, "gt", None) is not None else low
        high = getattr(item, "le", None) if getattr(item, "le", None) is not None else high
        high = getattr(item, "lt", None) if getattr(item, "lt", None) is not None else high
    if low is None and high is None:
        return ""
    number = "a whole number" if int in _members(info.annotation) else "a number"
    if low is not None and high is not None:
        return f"; allowed: {number} from {low:g} to {high:g}"
    if low is not None:
        return f"; allowed: {number} at least {low:g}"
    return f"; allowed: {number} at most {high:g}"


def _clean(message: str) -> str:
    return message.removeprefix("Value error, ")


def _yaml_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if value is None:
        return "nothing (null)"
    return type(value).__name__


def _not_text(value: Any, quoted: str) -> str:
    """Why YAML did not read a value as text, and the quoting that fixes it."""
    fix = _quote_fix(quoted)
    if isinstance(value, dict):
        return (
            f"expected text, but YAML read {quoted} as a mapping: an unquoted colon followed "
            f"by a space makes YAML read 'key: value'; {fix}"
        )
    if isinstance(value, list):
        return f"expected text, but YAML read {quoted} as a list; {fix}"
    if isinstance(value, bool):
        return f"expected text, but YAML read {quoted} as a boolean; {fix}"
    if isinstance(value, int | float):
        return f"expected text, but YAML read {quoted} as a number; {fix}"
    if value is None:
        return "expected text, but the value is empty; write the text or remove the field"
    return f"expected text, got {_yaml_kind(value)}"


def _quote_fix(text: str) -> str:
    r"""How to write ``text`` so YAML reads it back as exactly this text.

    Examples:
        >>> print(_quote_fix('git commit -m "feat: x"'))
        quote the whole value: 'git commit -m "feat: x"'
        >>> print(_quote_fix("git commit -m 'feat: x'"))
        quote the whole value: "git commit -m 'feat: x'"
        >>> print(_quote_fix("echo 'a: \"b\"'"))
        write it as a block scalar: '|-', then the text on the next line, indented
    """
    if "'" not in text:
        return f"quote the whole value: '{text}'"
    if '"' not in text and "\\" not in text:
        return f'quote the whole value: "{text}"'
    return "write it as a block scalar: '|-', then the text on the next line, indented"


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _tag_of(tp: Any) -> str | None:
    """The ``kind`` literal of a discriminated-union member model."""
    if not _is_model(tp) or "kind" not in tp.model_fields:
        return None
    args = get_args(tp.model_fields["kind"].annotation)
    return str(args[0]) if len(args) == 1 else None


def _members(tp: Any) -> list[Any]:
    """Members of a union (Annotated and Optional unwrapped), or ``[tp]``."""
    if get_origin(tp) is Annotated:
        return _members(get_args(tp)[0])
    if get_origin(tp) in (Union, types.UnionType):
        return [m for arg in get_args(tp) for m in _members(arg) if m is not type(None)]
    return [tp]


def _member_label(tp: Any, part: int | str) -> Any:
    """The member of a plain union ``tp`` that pydantic names ``part`` in an error's loc.

    Validating ``str | Expectation`` fails once per member, at ``(..., 'str')`` and at
    ``(..., 'Expectation', ...)``: those names are not fields the user wrote. Returns None
    when ``part`` is not such a name.
    """
    members = _members(tp)
    if not isinstance(part, str) or len(members) < 2:
        return None
    if any(_tag_of(m) == part or get_origin(m) is dict for m in members):
        return None
    if any(_is_model(m) and part in m.model_fields for m in members):
        return None
    named = [m for m in members if _is_model(m) and m.__name__ == part]
    plain = [m for m in members if not _is_model(m)]
    return (named or plain or [None])[0]


def _step(tp: Any, part: int | str) -> Any:
    """The type one key or index below ``tp``, or None."""
    members = _members(tp)
    if isinstance(part, str):
        for member in members:
            if _tag_of(member) == part:
                return member
    member = _member_label(tp, part)
    if member is not None:
        return member
    for member in members:
        origin = get_origin(member)
        if isinstance(part, int) and origin in (tuple, list):
            return get_args(member)[0]
        if isinstance(part, str) and _is_model(member) and part in member.model_fields:
            return member.model_fields[part].annotation
        if isinstance(part, str) and origin is dict:
            return get_args(member)[1]
    return None


def _type_at(model: type[BaseModel], loc: Sequence[int | str]) -> Any:
    tp: Any = model
    for part in loc:
        tp = _step(tp, part)
        if tp is None:
            return None
    return tp


def _fields(tp: Any) -> list[str]:
    return [name for m in _members(tp) if _is_model(m) for name in m.model_fields]


def _literal_choices(tp: Any) -> list[str]:
    return [str(a) for m in _members(tp) if get_origin(m) is Literal for a in get_args(m)]


def _union_tags(model: type[BaseModel], loc: Sequence[int | str]) -> set[int]:
    """Positions in ``loc`` that are a union's tag or member name (not a field the user wrote)."""
    out: set[int] = set()
    tp: Any = model
    for i, part in enumerate(loc):
        if isinstance(part, str) and any(_tag_of(m) == part for m in _members(tp)):
            out.add(i)
        elif _member_label(tp, part) is not None:
            out.add(i)
        tp = _step(tp, part)
        if tp is None:
            break
    return out


def _path(loc: Sequence[int | str], prefix: str, skip: set[int]) -> str:
    out = prefix
    for i, part in enumerate(loc):
        if i in skip:
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out
