"""A result object's fields as plain JSON values, for the ``to_dict`` methods that list fields.

Unlike :func:`dataclasses.asdict` it writes paths as strings, tuples as lists, and a nested
object that has its own ``to_dict`` through that method (so its JSON shape is said once).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from dataclasses import fields, is_dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def plain_value(value: Any) -> Any:
    """One value as JSON writes it.

    Args:
        value: A field's value.

    Returns:
        Paths as strings, objects with a ``to_dict`` method (named tuples included) as its
        result, other dataclasses as :func:`plain_fields`, lists and tuples as new lists and
        mappings as new dicts (their items converted the same way), anything else as it is.

    Examples:
        >>> plain_value((PurePath("runs") / "r1", {"n": 1}))
        ['runs/r1', {'n': 1}]
    """
    if isinstance(value, PurePath):
        return str(value)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return plain_fields(value)
    if isinstance(value, (list, tuple)):
        return [plain_value(item) for item in value]
    if isinstance(value, Mapping):
        return {key: plain_value(item) for key, item in value.items()}
    return value


def plain_fields(
    obj: DataclassInstance,
    of: type[DataclassInstance] | None = None,
    *,
    leave_out: Collection[str] = (),
) -> dict[str, Any]:
    """A dataclass's fields, in their declared order, as :func:`plain_value` writes them.

    Args:
        obj: The dataclass instance.
        of: Take the fields this class declares (a base class of ``obj``'s, whose JSON keys a
            subclass extends); default ``obj``'s own class.
        leave_out: Field names not to write.

    Returns:
        ``{field name: plain value}``.

    Examples:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class Written:
        ...     path: PurePath
        ...     rows: int
        >>> plain_fields(Written(PurePath("out.csv"), 3))
        {'path': 'out.csv', 'rows': 3}
    """
    return {
        f.name: plain_value(getattr(obj, f.name))
        for f in fields(of or obj)
        if f.name not in leave_out
    }


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def json_text(data: Mapping[str, Any]) -> str:
    """The one JSON form of a result object (``--json``, the viewer's API).

    NaN and infinities become null, anything JSON has no type for its ``str``.

    Examples:
        >>> json_text({"estimate": float("nan"), "n": 3})
        '{"estimate": null, "n": 3}'
    """
    try:  # most results hold no NaN: one pass of the encoder, without a copy made first
        return json.dumps(dict(data), default=str, allow_nan=False)
    except ValueError:  # a NaN or an infinity somewhere (or a cycle, which fails again below)
        return json.dumps(_finite(dict(data)), default=str)
