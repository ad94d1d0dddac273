"""Shared pieces of ``evalkit import``: parsed rows, value coercion, errors that locate."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit._redact import clip, clip_tail
from evalkit._untrusted import load_json, read_text as bounded_read_text
from evalkit.errors import InputError, Problem

#: Score values (strings, case-insensitive) and what they mean: (score, passed).
#: Inspect AI's letters (C correct, I incorrect, P partial, N no answer) and their words.
VERDICT_WORDS: dict[str, tuple[float, bool]] = {
    "c": (1.0, True),
    "correct": (1.0, True),
    "i": (0.0, False),
    "incorrect": (0.0, False),
    "p": (0.5, False),
    "partial": (0.5, False),
    "n": (0.0, False),
    "noanswer": (0.0, False),
}

#: ``passed`` spellings accepted in CSV/JSONL (case-insensitive).
PASSED_WORDS: dict[str, bool] = {
    "true": True,
    "false": False,
    "pass": True,
    "fail": False,
    "1": True,
    "0": False,
}

_JS_STACK = re.compile(r"\n\s+at .*", re.DOTALL)
#: Terminal escape sequences and control characters (tabs and newlines stay).
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f]")

#: Rules drawn with punctuation (``==== FAILURES ====``): only their words are worth keeping.
_RULE = re.compile(r"([=\-_*~#])\1{3,}")

#: Characters kept of a reason a source gives (a scorer's explanation, an assertion's reason).
DETAIL_LIMIT = 500


@dataclass
class SourceRow:
    """One result row read from a foreign file, before keys and hashes are assigned.

    Attributes:
        values: Result-table columns (a subset of ``RESULT_SCHEMA``); ``trial`` may be None
            until the reader numbers it.
        file: The file it came from (as shown in messages).
        where: Its location inside the file (``line 4``, ``sample cap-x epoch 2``).
        identity: JSON-serialisable content that identifies the item (hashed into
            ``item_hash``).
        scores: Per-component score rows (``component, value, max_value, passed, detail``).
        transcript: What the agent said and did, as a native transcript's ``response``
            (``AgentResponse.to_json()``), when the source holds it.
        transcript_note: Why a transcript the source holds could not be kept (too large,
            not JSON), for the import's warnings.
    """

    values: dict[str, Any]
    file: str
    where: str
    identity: Any
    scores: list[dict[str, Any]] = field(default_factory=list)
    transcript: dict[str, Any] | None = None
    transcript_note: str | None = None

    def problem(self, message: str) -> InputError:
        """An :class:`InputError` located at this row."""
        return InputError(str(Problem(self.file, self.where, message)))


@dataclass
class ParsedSource:
    """What a format reader returns.

    Attributes:
        rows: The rows, in file order.
        suite: The suite name derived from the source (task name, description, file stem).
        dataset: Content whose hash is the ``dataset_version`` (None: the set of case ids).
        tool: The producing tool and its version (``"inspect_ai 0.3.285"``), when known.
        warnings: Things the user should know that are not errors.
        duplicate_hint: How to fix two rows landing on the same key.
        files: The files actually read (a directory's non-matching files are skipped).
    """

    rows: list[SourceRow]
    suite: str
    dataset: Any = None
    tool: str | None = None
    warnings: list[str] = field(default_factory=list)
    duplicate_hint: str = ""
    files: list[Path] = field(default_factory=list)


def fail(file: str | os.PathLike[str], where: str, message: str) -> InputError:
    """An :class:`InputError` naming the file, the location inside it and the fix."""
    return InputError(str(Problem(str(file), where, message)))


def expand_paths(
    paths: Sequence[str | os.PathLike[str]], suffixes: Iterable[str], what: str
) -> tuple[list[Path], set[Path]]:
    """Resolve the FILE arguments: files as given, directories to their matching files.

    Args:
        paths: Files or directories.
        suffixes: File name endings read from directories (``.csv``, ``.eval``...).
        what: What the files are, for messages (``"Inspect AI logs"``).

    Returns:
        The files in order, and the subset found by listing a directory (a reader may skip
        those when they turn out to be something else).

    Raises:
        InputError: A path does not exist, or a directory holds no matching file.
    """
    if not paths:
        raise InputError(f"no input file given: pass one or more {what}")
    files: list[Path] = []
    listed: set[Path] = set()
    ends = tuple(suffixes)
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and p.name.endswith(ends)
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not found:
                raise fail(path, "", f"directory holds no {what} (files ending {', '.join(ends)})")
            files += found
            listed.update(found)
        elif path.is_file():
            files.append(path)
        else:
            raise fail(path, "", "no such file or directory")
    unique = list(dict.fromkeys(files))
    return unique, listed


def read_text(path: Path) -> str:
    """Read a UTF-8 text file, turning OS and decoding errors into :class:`InputError`."""
    try:
        return bounded_read_text(path, "utf-8-sig")
    except UnicodeDecodeError as exc:
        raise fail(path, "", f"not UTF-8 text (byte {exc.start}); is --format right?") from None
    except OSError as exc:
        raise fail(path, "", f"cannot read: {exc.strerror or exc}") from None


def parse_json(path: Path, text: str, fix: str = "", line: int | None = None) -> Any:
    """Parse JSON text read from ``path``, turning a syntax error into :class:`InputError`.

    Args:
        path: The file the text came from (named in the error).
        text: The JSON text: the whole file, or one line of it.
        fix: What the file should be, appended to the error (``"expected ..."``).
        line: The text's line number in the file when it is one line of it (JSON Lines);
            by default the line of the error within ``text``.

    Returns:
        The parsed value.

    Raises:
        InputError: Not valid JSON; the message names the line and column.

    Examples:
        >>> parse_json(Path("a.jsonl"), '{"x": 1}', line=3)
        {'x': 1}
        >>> parse_json(Path("a.jsonl"), '{"x": }', line=3)
        Traceback (most recent call last):
        ...
        evalkit.errors.InputError: a.jsonl: line 3: not valid JSON (Expecting value at column 7)
    """
    try:
        return load_json(text, path)
    except json.JSONDecodeError as exc:
        reason = f"not valid JSON ({exc.msg} at column {exc.colno})"
        where = f"line {exc.lineno if line is None else line}"
        raise fail(path, where, f"{reason}; {fix}" if fix else reason) from None


def read_json(path: Path, fix: str = "", *, empty: str | None = None) -> Any:
    """Read and parse a JSON file (:func:`read_text`, then :func:`parse_json`).

    Args:
        path: The file.
        fix: What the file should be, appended to a syntax error (``"expected ..."``).
        empty: The error of a blank file (default: a syntax error like any other).

    Returns:
        The parsed value.

    Raises:
        InputError: The file cannot be read, is not UTF-8, is blank (with ``empty``) or is
            not valid JSON.
    """
    text = read_text(path)
    if empty is not None and not text.strip():
        raise fail(path, "", empty)
    return parse_json(path, text, fix)


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty dict."""
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str | None:
    """A cell as a stripped string; empty and null become None."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    text = str(value).strip()
    return text or None


def as_float(value: Any, column: str, row: SourceRow) -> float | None:
    """A cell as a finite float (None when empty).

    Raises:
        InputError: Not a number, or not finite.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise row.problem(f"{column} must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise row.problem(f"{column} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise row.problem(f"{column} must be a finite number, got {value!r}")
    return number


def as_int(value: Any, column: str, row: SourceRow) -> int | None:
    """A cell as a non-negative integer (None when empty).

    Raises:
        InputError: Not a whole number, or negative.
    """
    number = as_float(value, column, row)
    if number is None:
        return None
    if not number.is_integer() or number < 0:
        raise row.problem(f"{column} must be a whole number >= 0, got {value!r}")
    return int(number)


def check_score(score: float | None, row: SourceRow, fix: str = "") -> float | None:
    """Check that a score lies in [0, 1].

    Raises:
        InputError: Outside [0, 1].
    """
    if score is not None and not 0.0 <= score <= 1.0:
        raise row.problem(f"score must lie in [0, 1], got {score:g}{fix}")
    return score


def number_trials(rows: list[SourceRow], keys: Sequence[str]) -> None:
    """Give rows without a trial the numbers 0, 1, ... within each group, in row order.

    Args:
        rows: Rows, in the order that defines the numbering.
        keys: Columns of ``values`` that form a group.
    """
    seen: dict[tuple[Any, ...], int] = {}
    for row in rows:
        if row.values.get("trial") is None:
            group = tuple(row.values.get(k) for k in keys)
            row.values["trial"] = seen.get(group, 0)
            seen[group] = row.values["trial"] + 1


def short_error(message: str, limit: int = 2000) -> str:
    """An error message without JavaScript stack frames, redacted and cut to ``limit``."""
    return clip(_CONTROL.sub("", _JS_STACK.sub("", message)).strip(), limit)


def source_text(value: Any, limit: int = DETAIL_LIMIT) -> str | None:
    r"""A reason text from the source (untrusted): control characters removed, redacted, cut.

    Args:
        value: The source's value (any JSON value; non-strings are shown as text).
        limit: Characters kept.

    Returns:
        The text, or None when the value is None or blank.

    Examples:
        >>> source_text("  \x1b[31mFAILED\x1b[0m test_port: 3000 != 8080 ")
        'FAILED test_port: 3000 != 8080'
        >>> source_text("") is None
        True
    """
    if value is None:
        return None
    text = clip(_CONTROL.sub("", str(value)).strip(), limit)
    return text or None


def file_tail(path: Path, lines: int = 5, limit: int = DETAIL_LIMIT) -> str | None:
    """The last non-blank lines of a text file another tool wrote (a verifier's output).

    Only the file's last bytes are read, whatever its size; undecodable bytes are replaced.
    Control characters and terminal escapes are removed, rules drawn with punctuation
    (``==== FAILURES ====``) keep only their words, runs of spaces become one, and the text
    is redacted and cut from its start to ``limit`` characters.

    Args:
        path: The file.
        lines: How many of its last non-blank lines to keep.
        limit: Characters kept (the end of the text).

    Returns:
        The lines joined by ``" | "``, or None when the file is missing, unreadable or blank.
    """
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            start = max(0, fh.tell() - 16 * limit)
            fh.seek(start)
            data = fh.read()
    except OSError:
        return None
    if start:  # the first line read may be the end of a longer one
        data = data.partition(b"\n")[2]
    text = _CONTROL.sub("", data.decode("utf-8", errors="replace"))
    stripped = (" ".join(_RULE.sub(" ", line).split()) for line in text.splitlines())
    kept = [line for line in stripped if line][-lines:]
    return clip_tail(" | ".join(kept), limit) or None


_EXCEPTION_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception|Timeout|Interrupt))\b")


def error_class(message: str, default: str) -> str:
    """The exception class a message starts with (``RuntimeError(...)``), else ``default``."""
    match = _EXCEPTION_NAME.match(message)
    return match.group(1) if match else default
