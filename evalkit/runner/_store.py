"""Crash-safe run storage: parquet parts and transcript shards, compacted at the end."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from evalkit.results import (
    PARTS_DIR,
    RESULT_SCHEMA,
    RESULTS_FILE,
    SCORE_SCHEMA,
    SCORES_FILE,
    TRANSCRIPTS_DIR,
    read_table,
)

LOG_FILE = "items.log"


class PartWriter:
    """Buffers finished items and writes them as numbered parquet parts.

    Each flush writes the transcripts shard first, then the scores part, then the results part,
    each through a temporary file and an atomic rename: a crash at any moment leaves only
    whole parts, and a result row never points to a transcript that is not on disk.

    Args:
        run_dir: The run directory.
        flush_rows: Rows buffered before a flush.
        flush_seconds: Maximum age of the buffer before a flush.
    """

    def __init__(self, run_dir: Path, flush_rows: int = 1000, flush_seconds: float = 2.0) -> None:
        self.run_dir = run_dir
        self.parts = run_dir / PARTS_DIR
        self.parts.mkdir(parents=True, exist_ok=True)
        (run_dir / TRANSCRIPTS_DIR).mkdir(exist_ok=True)
        self.flush_rows = flush_rows
        self.flush_seconds = flush_seconds
        existing = sorted(self.parts.glob("results-*.parquet"))
        self.next_part = 1 + max((int(p.stem.split("-")[1]) for p in existing), default=0)
        self.rows: list[dict[str, Any]] = []
        self.scores: list[dict[str, Any]] = []
        self.transcripts: list[str] = []
        self.last_flush = time.monotonic()

    def transcript_path(self) -> str:
        """Relative path of the transcripts shard the buffered rows will be written to."""
        return f"{TRANSCRIPTS_DIR}/part-{self.next_part:05d}.jsonl"

    def add(
        self, row: dict[str, Any], scores: Iterable[dict[str, Any]], response: dict[str, Any] | None
    ) -> None:
        """Buffer one finished item (flushing when the buffer is full or old)."""
        if response is not None:
            row["transcript_path"] = self.transcript_path()
            record = {
                "item_key": row["item_key"],
                "provider": row.get("provider"),
                "response": response,
            }
            self.transcripts.append(json.dumps(record, default=str, separators=(",", ":")))
        self.rows.append(row)
        self.scores.extend(scores)
        if (
            len(self.rows) >= self.flush_rows
            or time.monotonic() - self.last_flush > self.flush_seconds
        ):
            self.flush()

    def flush(self) -> None:
        """Write the buffer as the next part."""
        self.last_flush = time.monotonic()
        if not self.rows:
            return
        number = f"{self.next_part:05d}"
        if self.transcripts:
            shard = self.run_dir / TRANSCRIPTS_DIR / f"part-{number}.jsonl"
            tmp = shard.with_suffix(".tmp")
            tmp.write_text("\n".join(self.transcripts) + "\n", encoding="utf-8")
            os.replace(tmp, shard)
        self._write(pa.Table.from_pylist(self.scores, schema=SCORE_SCHEMA), f"scores-{number}")
        self._write(pa.Table.from_pylist(self.rows, schema=RESULT_SCHEMA), f"results-{number}")
        self.next_part += 1
        self.rows, self.scores, self.transcripts = [], [], []

    def _write(self, table: pa.Table, stem: str) -> None:
        tmp = self.parts / f".{stem}.tmp"
        pq.write_table(table, tmp)
        os.replace(tmp, self.parts / f"{stem}.parquet")

    def finished_keys(self) -> set[str]:
        """Keys of every item already on disk (for ``--resume``)."""
        table = read_table(self.run_dir, RESULTS_FILE, RESULT_SCHEMA)
        return set(table.column("item_key").to_pylist())


def compact(run_dir: Path) -> tuple[pa.Table, pa.Table]:
    """Merge the parts into ``results.parquet`` and ``scores.parquet``, then remove them.

    Returns:
        The final results and scores tables.
    """
    results = read_table(run_dir, RESULTS_FILE, RESULT_SCHEMA)
    scores = read_table(run_dir, SCORES_FILE, SCORE_SCHEMA)
    keys = scores.select(["item_key", "component"]) if scores.num_rows else None
    if keys is not None and keys.group_by(["item_key", "component"]).aggregate([]).num_rows != (
        scores.num_rows
    ):
        # items redone after a resume: keep the scores of the surviving rows only, once
        keep = set(results.column("item_key").to_pylist())
        frame = scores.to_pandas()
        frame = frame[frame["item_key"].isin(keep)]
        frame = frame.drop_duplicates(["item_key", "component"], keep="last")
        scores = pa.Table.from_pandas(frame, schema=SCORE_SCHEMA, preserve_index=False)
    for table, name in ((results, RESULTS_FILE), (scores, SCORES_FILE)):
        tmp = run_dir / f".{name}.tmp"
        pq.write_table(table, tmp)
        os.replace(tmp, run_dir / name)
    parts = run_dir / PARTS_DIR
    if parts.is_dir():
        for path in parts.iterdir():
            path.unlink()
        parts.rmdir()
    return results, scores
