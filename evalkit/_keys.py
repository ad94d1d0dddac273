"""Work-item keys: ``lane:case_id:condition:provider:trial``, one part per field, escaped.

Every place that builds a work-item key or reads one back goes through
:func:`build_item_key` and :func:`parse_item_key`. Each part is escaped before it is joined:
``%`` becomes ``%25`` and ``:`` becomes ``%3A`` (percent-encoding of exactly those two
characters), so a key is injective in its parts whatever the ids hold: case ``q1:x`` in
condition ``m`` and case ``q1`` in condition ``x:m`` are two keys. Parts without ``:`` or ``%``
are written as they are, so the keys of such items are the ones evalkit always wrote.

Examples:
    >>> build_item_key("prompt", "q1:x", "m", "simulated", 0)
    'prompt:q1%3Ax:m:simulated:0'
    >>> build_item_key("prompt", "q1", "x:m", "simulated", 0)
    'prompt:q1:x%3Am:simulated:0'
    >>> parse_item_key("prompt:q1%3Ax:m:simulated:0").case_id
    'q1:x'
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: Joins the parts of a key.
SEPARATOR = ":"

_ESCAPE = {"%": "%25", ":": "%3A"}
_UNESCAPE = {code: char for char, code in _ESCAPE.items()}
_CODE = re.compile(r"%(?:25|3A)")
_STRAY_PERCENT = re.compile(r"%(?!25|3A)")
_TRIAL = re.compile(r"0|[1-9][0-9]*")


class ItemKeyParts(NamedTuple):
    """The fields a work-item key is made of."""

    lane: str
    case_id: str
    condition: str
    provider: str
    trial: int


def escape_key_part(text: str) -> str:
    """One key part with ``%`` and ``:`` percent-encoded (everything else unchanged).

    Examples:
        >>> escape_key_part("a:b%c")
        'a%3Ab%25c'
    """
    return "".join(_ESCAPE.get(char, char) for char in text)


def unescape_key_part(text: str) -> str:
    """The inverse of :func:`escape_key_part`.

    Raises:
        ValueError: The text holds a ``:`` or a ``%`` that does not start ``%25``/``%3A``
            (it was not made by :func:`escape_key_part`).
    """
    if SEPARATOR in text or _STRAY_PERCENT.search(text):
        raise ValueError(f"{text!r} is not an escaped key part")
    return _CODE.sub(lambda match: _UNESCAPE[match.group(0)], text)


def build_item_key(lane: str, case_id: str, condition: str, provider: str, trial: int) -> str:
    """The stable key of a work item.

    Examples:
        >>> build_item_key("prompt", "blind-sleep", "none", "simulated", 2)
        'prompt:blind-sleep:none:simulated:2'
        >>> build_item_key("prompt", "a", "none", "pkg.mod:create", 0)
        'prompt:a:none:pkg.mod%3Acreate:0'
    """
    if trial < 0:
        raise ValueError(f"trial must be 0 or more, got {trial}")
    parts = (lane, case_id, condition, provider)
    return SEPARATOR.join([*(escape_key_part(p) for p in parts), str(int(trial))])


def parse_item_key(key: str) -> ItemKeyParts:
    """The fields of a key made by :func:`build_item_key`.

    Raises:
        ValueError: ``key`` is not such a key (not five parts, a badly escaped part, or a
            trial that is not a non-negative integer in canonical form).

    Examples:
        >>> parts = parse_item_key("execution:a%3Ab:x%25y:simulated:3")
        >>> parts.case_id, parts.condition, parts.trial
        ('a:b', 'x%y', 3)
    """
    parts = key.split(SEPARATOR)
    if len(parts) != 5:
        raise ValueError(
            f"{key!r} is not a work-item key (lane:case_id:condition:provider:trial, "
            f"got {len(parts)} part(s))"
        )
    *texts, trial = parts
    if not _TRIAL.fullmatch(trial):
        raise ValueError(f"{key!r} is not a work-item key: trial {trial!r} is not a number")
    lane, case_id, condition, provider = (unescape_key_part(t) for t in texts)
    return ItemKeyParts(lane, case_id, condition, provider, int(trial))
