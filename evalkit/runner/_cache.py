"""Content-addressed outcome cache keyed by the item hash, each entry verified when read."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from evalkit._keyed import keyed_path, write_keyed_json
from evalkit._untrusted import InputBoundError, load_json, read_text

CACHE_DIR = ".cache"

#: Layout of an entry: 2 carries ``item_hash`` and ``digest``; entries without them are misses.
ENTRY_VERSION = 2


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class CachedRow(_Strict):
    """The outcome columns of a cached result row (only ``ok`` outcomes are cached)."""

    status: Literal["ok"]
    passed: bool
    score: float
    started_at: datetime
    finished_at: datetime
    latency_s: float
    inferred_skill: str | None = None
    skill_loaded: bool | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    n_steps: int | None = None
    origin_run_id: str | None = None
    """The run that produced the outcome (absent in entries written before it was kept)."""


class CachedScore(_Strict):
    """One ``scores.parquet`` row of a cached outcome (without its item key)."""

    component: str
    value: float
    max_value: float
    passed: bool
    detail: str | None = None


class _Entry(_Strict):
    version: Literal[2]
    item_hash: str
    digest: str
    row: CachedRow
    scores: list[CachedScore]
    response: dict[str, Any] | None


@dataclass(frozen=True)
class CacheLookup:
    """What the cache holds for an item hash.

    Attributes:
        path: The entry's file.
        entry: ``{"row", "scores", "response"}`` when a valid entry is there, else None.
        rejected: Why the file on disk is not used (None for a hit or an absent entry).
    """

    path: Path
    entry: dict[str, Any] | None = None
    rejected: str | None = None


def entry_digest(item_hash: str, row: Any, scores: Any, response: Any) -> str:
    """SHA-256 over the canonical JSON of an entry's content and the item hash it answers.

    Args:
        item_hash: The item hash the entry answers.
        row: The cached row (JSON values).
        scores: The cached score rows (JSON values).
        response: The transcript (JSON values) or None.

    Returns:
        ``"sha256:<hex>"``.
    """
    content = {"item_hash": item_hash, "row": row, "scores": scores, "response": response}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _first_problem(exc: ValidationError) -> str:
    problem = exc.errors()[0]
    where = ".".join(str(p) for p in problem["loc"]) or "(top level)"
    return f"field '{where}': {problem['msg']}"


class OutcomeCache:
    """Outcomes of finished items, one JSON file per item hash, shared by every run.

    Writes go through a uniquely named temporary file and an atomic rename, so concurrent
    runs never see a torn entry and never lose one (identical hashes hold identical content).
    Only ``ok`` outcomes are cached: errors and timeouts are retried by the next run.

    Each entry records the item hash it answers and a SHA-256 digest of its content. Reading
    checks both and the type of every field: an entry that was edited, emptied, damaged or
    written without a digest (by an older evalkit) is a miss with a reason, never a result.
    The digest detects changes; it is not a signature (whoever can write the cache can also
    write a new digest).

    Args:
        root: The cache directory (``<runs_dir>/.cache``).
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, item_hash: str) -> Path:
        """The file of an item hash's entry."""
        return keyed_path(self.root, item_hash)

    def lookup(self, item_hash: str) -> CacheLookup:
        """The verified entry of an item hash, or why the file on disk is not used.

        Args:
            item_hash: The item hash.

        Returns:
            A hit (``entry`` set), a plain miss (neither set) or a rejected entry
            (``rejected`` holds the reason).
        """
        path = self.path(item_hash)
        try:
            text = read_text(path)
        except FileNotFoundError:
            return CacheLookup(path)
        except InputBoundError as exc:
            return CacheLookup(path, rejected=str(exc).removeprefix(f"{path}: "))
        except (OSError, UnicodeDecodeError) as exc:
            return CacheLookup(path, rejected=f"cannot be read ({exc})")
        return CacheLookup(path, *_verify(text, item_hash))

    def get(self, item_hash: str) -> dict[str, Any] | None:
        """The verified entry (``row``, ``scores``, ``response``), or None."""
        return self.lookup(item_hash).entry

    def put(self, item_hash: str, entry: dict[str, Any]) -> None:
        """Store an entry atomically, with its item hash and digest.

        Args:
            item_hash: The item hash the entry answers.
            entry: ``{"row", "scores", "response"}``; values JSON cannot encode are stored as
                strings.

        Raises:
            OSError: The file cannot be written (no temporary file is left behind).
        """
        content = json.loads(json.dumps(entry, default=str))  # the JSON values read back later
        row, scores, response = content["row"], content["scores"], content["response"]
        record = {
            "version": ENTRY_VERSION,
            "item_hash": item_hash,
            "digest": entry_digest(item_hash, row, scores, response),
            "row": row,
            "scores": scores,
            "response": response,
        }
        write_keyed_json(self.path(item_hash), record)


def _verify(text: str, item_hash: str) -> tuple[dict[str, Any] | None, str | None]:
    """``(entry, None)`` for a valid entry of ``item_hash``, else ``(None, reason)``."""
    try:
        raw = load_json(text, "cache entry")
    except InputBoundError as exc:
        return None, str(exc).removeprefix("cache entry: ")
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    if not isinstance(raw, dict):
        return None, f"not a JSON object (a {type(raw).__name__})"
    if "digest" not in raw or "version" not in raw:
        return None, "no digest (written by an evalkit before entries carried one)"
    if raw.get("item_hash") != item_hash:
        return None, f"answers item hash {raw.get('item_hash')!r}, not {item_hash!r}"
    expected = entry_digest(item_hash, raw.get("row"), raw.get("scores"), raw.get("response"))
    if raw["digest"] != expected:
        return None, "digest mismatch (the entry was edited or damaged)"
    try:
        entry = _Entry.model_validate_json(text)
    except ValidationError as exc:
        return None, _first_problem(exc)
    return {
        "row": entry.row.model_dump(exclude_unset=True),
        "scores": [score.model_dump(exclude_unset=True) for score in entry.scores],
        "response": entry.response,
    }, None
