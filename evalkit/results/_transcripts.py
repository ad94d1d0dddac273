"""Reading the transcripts of a run (``transcripts/part-NNNNN.jsonl``).

A run keeps one JSON line per work item, ``{"item_key", "provider", "response": {"events":
[{"kind", "content", "name"}], "model", ...}}``, in numbered shards; each result row's
``transcript_path`` names the shard holding the transcript of *that* row. The result row is the
authority: an item redone after a resume has a transcript in two shards, and the one its
surviving row points to is the one returned. Reading a few items scans only their shards and
parses only the lines that mention a wanted key; a ``transcript_path`` pointing outside the run
directory is ignored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._paths import unsafe_relative_reason
from evalkit._settings import RUNS_DIR
from evalkit._untrusted import load_json
from evalkit.results._io import read_run
from evalkit.results._layout import resolve_run_dir


def read_transcripts(
    run: str | os.PathLike[str],
    item_keys: Iterable[str] | None = None,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    *,
    rows: pd.DataFrame | None = None,
) -> dict[str, dict[str, Any]]:
    """Transcript records of the work items of a run, keyed by item key.

    Args:
        run: Run directory or run id.
        item_keys: Keys of the wanted items (default: every item of the run).
        runs_dir: Where run ids are looked up.
        rows: The run's result rows (``item_key, transcript_path``) when already loaded;
            read from the run otherwise.

    Returns:
        ``{item_key: record}``, where ``record`` is the whole transcript line: ``item_key``,
        ``provider`` and ``response`` (``AgentResponse.to_json()``: ``events``, ``model``,
        token and cost fields). Items without a transcript (imported results, skipped items,
        unknown keys) are absent.

    Raises:
        RunNotFoundError: The run does not exist.
    """
    run_dir = resolve_run_dir(run, runs_dir)
    table = rows if rows is not None else read_run(run_dir)
    if item_keys is None:
        wanted = [str(k) for k in table["item_key"]]
    else:
        wanted = list(dict.fromkeys(str(k) for k in item_keys))
    if not wanted or "transcript_path" not in table.columns:
        return {}
    located = table.loc[table["item_key"].isin(wanted), ["item_key", "transcript_path"]]
    by_shard: dict[str, set[str]] = {}
    for key, shard in zip(located["item_key"], located["transcript_path"], strict=True):
        if isinstance(shard, str) and shard:
            by_shard.setdefault(shard, set()).add(str(key))
    root = run_dir.resolve()
    found: dict[str, dict[str, Any]] = {}
    for shard, keys in sorted(by_shard.items()):
        if unsafe_relative_reason(shard) is not None:
            continue  # a transcript_path with a NUL, a control character or '..' names no shard
        path = (run_dir / shard).resolve()
        if root not in path.parents or not path.is_file():
            continue  # a transcript_path pointing outside the run is ignored
        found.update(_scan(path, keys))
    return found


def read_transcript(
    run: str | os.PathLike[str],
    item_key: str,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    *,
    rows: pd.DataFrame | None = None,
) -> dict[str, Any] | None:
    """The transcript record of one work item, or None when it has none.

    Args:
        run: Run directory or run id.
        item_key: The item's key (``lane:case_id:condition:provider:trial``).
        runs_dir: Where run ids are looked up.
        rows: The run's result rows when already loaded.

    Returns:
        The record (``item_key``, ``provider``, ``response`` with ``events``), or None.
    """
    return read_transcripts(run, [item_key], runs_dir, rows=rows).get(item_key)


def _scan(path: Path, keys: set[str]) -> dict[str, dict[str, Any]]:
    """Records of ``keys`` in one shard (the last line wins when a key repeats)."""
    needles = {json.dumps(k): k for k in keys} | {
        json.dumps(k, ensure_ascii=False): k for k in keys
    }
    out: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not any(needle in line for needle in needles):
                continue
            try:
                record = load_json(line, path)
            except ValueError:
                continue
            key = record.get("item_key") if isinstance(record, dict) else None
            if key in keys:
                out[str(key)] = record
    return out
