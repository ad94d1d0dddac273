"""Crash-safe file primitives shared by every writer of a run or ledger directory.

Two rules hold for every file evalkit appends to or replaces:

- a line-oriented file (``events.jsonl``, ``items.log``, a gate ledger, a recording) grows by
  whole lines, each written with a single ``write`` on a descriptor opened with ``O_APPEND``
  (:mod:`evalkit._append`; ``evalkit.results`` exports its writers), so concurrent writers
  interleave lines, never bytes, and readers never see a torn line;
- a JSON document (``manifest.json``, ``optimize.json``) is replaced atomically: written to a
  temporary file beside it, fsynced, then renamed over it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from evalkit._append import LineWriter, append_line
from evalkit._untrusted import read_json
from evalkit.errors import InputError

if TYPE_CHECKING:
    from pydantic import BaseModel

EVENTS_FILE = "events.jsonl"


def event_line(event: str, **fields: Any) -> str:
    """One ``events.jsonl`` line: ``{"ts", "event", **fields}`` as compact JSON.

    Args:
        event: The event name.
        **fields: Its fields (values that JSON cannot encode are written as strings).

    Returns:
        The JSON text, without a newline.
    """
    record = {"ts": round(time.time(), 3), "event": event, **fields}
    return json.dumps(record, default=str, separators=(",", ":"))


def append_event(run_dir: str | os.PathLike[str], event: str, **fields: Any) -> None:
    """Append an event to a directory's ``events.jsonl`` (``{"ts", "event", ...}``).

    Args:
        run_dir: The run (or optimisation run) directory.
        event: The event name.
        **fields: Its fields.
    """
    append_line(Path(run_dir) / EVENTS_FILE, event_line(event, **fields))


class EventLog:
    """``events.jsonl`` held open for a run (each event is one ``O_APPEND`` write).

    Args:
        run_dir: The run directory.
    """

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self._writer = LineWriter(Path(run_dir) / EVENTS_FILE)

    def emit(self, event: str, **fields: Any) -> None:
        """Append one event line."""
        self._writer.write(event_line(event, **fields))

    def close(self) -> None:
        """Close the file."""
        self._writer.close()


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> None:
    """Write JSON to ``path`` atomically (temporary file, fsync, rename).

    Args:
        path: The destination.
        data: A JSON-serialisable value (other values are written as strings).
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=False, default=str)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk or an interrupt leaves no temporary file
        raise


RecordT = TypeVar("RecordT", bound="BaseModel")


def read_json_record(path: Path, model: type[RecordT], newest_version: int, fix: str) -> RecordT:
    """Read a versioned JSON record (manifest, optimiser state) into its model.

    Args:
        path: The JSON file.
        model: The pydantic model; it has an integer ``version`` field.
        newest_version: The newest layout version this evalkit reads.
        fix: What to do about an invalid field (ends the message).

    Returns:
        The validated record.

    Raises:
        InputError: Invalid JSON, a field of the wrong type, or a record written by a newer
            evalkit (the message names the file and the field).
    """
    from pydantic import ValidationError  # its callers hold a model: pydantic is loaded

    try:
        loaded = read_json(path)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    try:
        record = model.model_validate(loaded)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "(top level)"
        raise InputError(f"{path}: field '{where}': {problem['msg']}; {fix}") from None
    version = int(record.model_dump(include={"version"})["version"])
    if version > newest_version:
        raise InputError(
            f"{path}: field 'version' is {version}, newer than this evalkit reads "
            f"({newest_version}); upgrade evalkit"
        )
    return record
