"""Run data as the viewer shows it: long texts cut with their length, keys redacted, controls shown.

Every string of a run (a case id, a condition, a reason, a suite name) reaches a page or a
JSON answer only through here:

- :func:`shorten` cuts a text longer than :data:`DISPLAY_CHARS` characters and says how long it
  was, with a digest so two long texts that start alike stay apart (a 5 MB case id costs a
  page a few kilobytes, not hundreds of megabytes);
- :func:`shortened` does it for every string inside a result (dataclasses, data frames,
  mappings, sequences) before a page is rendered from it; the page as a whole is then redacted
  and its bidi controls shown as markers;
- :func:`shown_json` does it for a JSON answer and then redacts every string
  (:func:`evalkit._redact.redact_value`, the redaction of the pages) and shows every control
  character as a marker (:func:`evalkit._bidi.neutralize_controls`), keys included: what a
  script of the page sets as text is what the HTML pages show.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from typing import Any

import pandas as pd

from evalkit._bidi import neutralize_controls
from evalkit._redact import redact_text, redact_value

#: Most characters of one run value shown (more are cut, and the length is said).
DISPLAY_CHARS = 1000
#: Characters past the cut that the redactor still reads, so no half of a key is left visible.
_REDACT_MARGIN = 512
#: Room left for the note saying the length: a cut text is at most ``limit`` long, so cutting
#: it again changes nothing.
_NOTE_ROOM = 64


def shorten(text: str, limit: int = DISPLAY_CHARS) -> str:
    """``text``, or its start and how long it was, in at most ``limit`` characters.

    The kept part is redacted before the cut (a key cut in half is no longer recognised), and
    a cut text is not cut again.

    Examples:
        >>> shorten("abc")
        'abc'
        >>> shorten("x" * 120, limit=100)
        'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… (120 characters in all, sha256 13f0…)'
    """
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:4]
    keep = limit - min(_NOTE_ROOM, limit // 2)
    kept = redact_text(text[: keep + _REDACT_MARGIN])[:keep]
    return f"{kept}… ({len(text):,} characters in all, sha256 {digest}…)"


def _shorten_frame(frame: pd.DataFrame, keep: frozenset[str], limit: int) -> pd.DataFrame:
    changed: dict[str, pd.Series] = {}
    for column in frame.columns:
        if column in keep or frame[column].dtype.kind != "O":
            continue
        values = frame[column]
        try:
            long = values.str.len() > limit  # vectorised; NaN (not a string) is not long
        except AttributeError:  # a column of other objects (lists, booleans with nulls)
            continue
        if bool(long.any()):
            changed[str(column)] = values.where(~long, values[long].map(
                lambda v: shorten(v, limit)))
    if not changed:
        return frame
    out = frame.assign(**changed)
    out.attrs = dict(frame.attrs)
    return out


def shortened(value: Any, *, keep: frozenset[str] = frozenset(), limit: int = DISPLAY_CHARS) -> Any:
    """``value`` with every string longer than ``limit`` shortened (see :func:`shorten`).

    Args:
        value: A string, a data frame, a (frozen) dataclass, a mapping or a sequence of them.
        keep: Columns of data frames left whole (keys the page needs to look things up by,
            such as ``item_key``).
        limit: Most characters of one string.

    Returns:
        A copy where anything changed; the value itself otherwise.
    """
    if isinstance(value, str):
        return shorten(value, limit)
    if isinstance(value, pd.DataFrame):
        return _shorten_frame(value, keep, limit)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: shortened(getattr(value, f.name), keep=keep, limit=limit)
            for f in dataclasses.fields(value)
            if f.init
        }
        return dataclasses.replace(value, **changes)
    if isinstance(value, Mapping):
        return {shortened(k, keep=keep, limit=limit): shortened(v, keep=keep, limit=limit)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [shortened(v, keep=keep, limit=limit) for v in value]
        if hasattr(value, "_fields"):  # a NamedTuple
            return type(value)(*items)
        return type(value)(items)
    return value


def _neutralised(value: Any) -> Any:
    if isinstance(value, str):
        return neutralize_controls(value)
    if isinstance(value, Mapping):
        return {_neutralised(k): _neutralised(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_neutralised(v) for v in value]
    return value


def shown_json(data: Any) -> Any:
    r"""A JSON value of run data as the viewer answers it: shortened, redacted, controls shown.

    Examples:
        >>> shown_json({"case_id": "evil\u202egnp.exe", "note": "Bearer abcdefgh12345678"})
        {'case_id': 'evil⟨U+202E⟩gnp.exe', 'note': 'Bearer [REDACTED]'}
    """
    return _neutralised(redact_value(shortened(data)))
