"""Salvage what validates of a file that failed validation, so later checks still run.

A wrong type in ``suite.yaml`` (``trials: many``) must not hide the case files' problems, and a
bad ``pass_threshold`` must not hide that the same case's fixture is missing. The loader
reports the errors of the first validation, then validates again with each erroneous value
removed (a missing required field gets a placeholder), and runs its remaining checks on
what survived, skipping the ones that read a removed field.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

M = TypeVar("M", bound=BaseModel)

#: Rounds of removing erroneous values before giving up (each round removes at least one).
MAX_ROUNDS = 8


class _Removed:
    """Marks a list element removed in this round (indices of later errors stay valid)."""


_REMOVED = _Removed()


class Salvaged(NamedTuple, Generic[M]):
    """A model validated from a value with its erroneous parts removed.

    Attributes:
        model: The validated model.
        removed: Dotted paths of what was removed or replaced (``defaults.trials``).
    """

    model: M
    removed: frozenset[str]

    def lost(self, *fields: str) -> bool:
        """Whether one of ``fields`` (dotted paths), a part of it or a parent was removed.

        Examples:
            >>> found = Salvaged(None, frozenset({"defaults"}))
            >>> found.lost("defaults.pass_threshold"), found.lost("skills")
            (True, False)
        """
        return any(_within(path, f) or _within(f, path) for path in self.removed for f in fields)


def _within(path: str, field: str) -> bool:
    """Whether ``path`` is ``field`` or lies below it."""
    return path == field or path.startswith((f"{field}.", f"{field}["))


def salvage(
    model: type[M],
    raw: Any,
    errors: Sequence[ErrorDetails],
    placeholders: Mapping[str, Any],
) -> Salvaged[M] | None:
    """Validate ``raw`` as ``model`` again without the values ``errors`` point at.

    Args:
        model: The model that failed.
        raw: The value it failed on (left unchanged).
        errors: The errors of that validation.
        placeholders: Values for required top-level fields that are missing or were removed.

    Returns:
        The salvaged model and what was removed, or None when an error cannot be pinned to a
        value (a check across fields, or a file that is not a mapping).
    """
    if not isinstance(raw, dict):
        return None
    data = copy.deepcopy(raw)
    removed: set[str] = set()
    for _ in range(MAX_ROUNDS):
        for error in errors:
            path = _remove(data, tuple(error["loc"]), placeholders)
            if path is None:
                return None
            removed.add(path)
        _drop_removed(data)
        try:
            return Salvaged(model.model_validate(data), frozenset(removed))
        except ValidationError as exc:
            errors = exc.errors()
    return None


def _remove(data: dict[str, Any], loc: tuple[int | str, ...], placeholders: Mapping[str, Any]) -> (
    str | None
):
    """Remove the deepest value along ``loc`` that exists; its dotted path, or None."""
    parent: Any = None
    key: int | str | None = None
    node: Any = data
    walked: list[int | str] = []
    for part in loc:
        if isinstance(node, dict) and part in node:
            parent, key, node = node, part, node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            parent, key, node = node, part, node[part]
        else:
            continue  # a union's tag or member name, or a field that is not there
        walked.append(part)
    if not walked:
        name = loc[0] if loc else None
        if isinstance(name, str) and name in placeholders:
            data[name] = placeholders[name]
            return name
        return None
    if parent is data and isinstance(key, str) and key in placeholders:
        data[key] = placeholders[key]
    elif isinstance(parent, list) and isinstance(key, int):
        parent[key] = _REMOVED
    elif isinstance(parent, dict):
        parent.pop(key, None)
    return _dotted(walked)


def _drop_removed(node: Any) -> None:
    if isinstance(node, dict):
        for value in node.values():
            _drop_removed(value)
    elif isinstance(node, list):
        node[:] = [item for item in node if item is not _REMOVED]
        for item in node:
            _drop_removed(item)


def _dotted(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
