"""Crash-safe run storage: parquet parts and transcript shards, compacted at the end.

pyarrow is imported when the first part is written, not with this module: a run starts its
workers and its first items without paying for it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.results import PARTS_DIR, RESULTS_FILE, SCORES_FILE, TRANSCRIPTS_DIR

if TYPE_CHECKING:
    import pyarrow as pa

LOG_FILE = "items.log"


def remove_temporary_files(run_dir: Path) -> list[Path]:
    """Remove the temporary files of interrupted writes (``*.tmp``) from a run directory.

    Only the run's lock holder calls this, so no temporary file belongs to a live writer.

    Args:
        run_dir: The run directory.

    Returns:
        The files removed.
    """
    removed = []
    for folder in (run_dir, run_dir / PARTS_DIR, run_dir / TRANSCRIPTS_DIR):
        if not folder.is_dir():
            continue
        for path in folder.glob("*.tmp"):
            if path.is_file() and not path.is_symlink():
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def _part_number(path: Path) -> int:
    tail = path.stem.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 0


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
        # numbered after every part and every transcript shard on disk: the shards of a
        # compacted run are still referenced by its rows and must never be overwritten
        existing = [
            *self.parts.glob("results-*.parquet"),
            *self.parts.glob("scores-*.parquet"),
            *(run_dir / TRANSCRIPTS_DIR).glob("part-*.jsonl"),
        ]
        self.next_part = 1 + max((_part_number(p) for p in existing), default=0)
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
        """Write the buffer as the next part.

        All or nothing: when a write fails (a full disk), the files of this part already
        written are removed again and the error is raised; the buffer is kept.
        """
        self.last_flush = time.monotonic()
        if not self.rows:
            return
        number = f"{self.next_part:05d}"
        written: list[Path] = []
        try:
            if self.transcripts:
                shard = self.run_dir / TRANSCRIPTS_DIR / f"part-{number}.jsonl"
                tmp = shard.with_suffix(".tmp")
                written.append(tmp)
                tmp.write_text("\n".join(self.transcripts) + "\n", encoding="utf-8")
                os.replace(tmp, shard)
                written.append(shard)
            import pyarrow as pa

            from evalkit.results import RESULT_SCHEMA, SCORE_SCHEMA

            scores = pa.Table.from_pylist(self.scores, schema=SCORE_SCHEMA)
            written += self._write(scores, f"scores-{number}")
            results = pa.Table.from_pylist(self.rows, schema=RESULT_SCHEMA)
            written += self._write(results, f"results-{number}")
        except BaseException:
            for path in written:
                path.unlink(missing_ok=True)
            raise
        self.next_part += 1
        self.rows, self.scores, self.transcripts = [], [], []

    def _write(self, table: pa.Table, stem: str) -> list[Path]:
        from evalkit.results import write_parquet

        tmp = self.parts / f".{stem}.tmp"
        final = self.parts / f"{stem}.parquet"
        try:
            write_parquet(table, tmp)
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return [final]

    def finished_keys(self) -> tuple[set[str], dict[str, list[str]]]:
        """Keys of the items already on disk, for ``--resume``.

        An item whose row names a transcript shard that is no longer on disk does not count
        as finished: it is run again, and its new row (in a later part) replaces the old one.

        Returns:
            The finished keys, and the missing shards with the keys of the items that
            pointed to them.

        Raises:
            evalkit.errors.CorruptFileError: A results file or part cannot be read.
        """
        from evalkit.results import RESULT_SCHEMA, read_table

        table = read_table(self.run_dir, RESULTS_FILE, RESULT_SCHEMA)
        keys = table.column("item_key").to_pylist()
        shards = table.column("transcript_path").to_pylist()
        present: dict[str, bool] = {}
        missing: dict[str, list[str]] = {}
        for key, shard in zip(keys, shards, strict=True):
            if not shard:
                continue
            if shard not in present:
                present[shard] = (self.run_dir / shard).is_file()
            if not present[shard]:
                missing.setdefault(shard, []).append(key)
        lost = {key for group in missing.values() for key in group}
        return set(keys) - lost, missing


def compact(run_dir: Path) -> tuple[pa.Table, pa.Table]:
    """Merge the parts into ``results.parquet`` and ``scores.parquet``, then remove them.

    Returns:
        The final results and scores tables.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalkit.results import RESULT_SCHEMA, SCORE_SCHEMA, read_table, write_parquet

    results = read_table(run_dir, RESULTS_FILE, RESULT_SCHEMA)
    scores = read_table(run_dir, SCORES_FILE, SCORE_SCHEMA)
    survivors = results.column("item_key")
    orphans = scores.num_rows and not pc.all(pc.is_in(scores.column("item_key"), survivors)).as_py()
    keys = scores.select(["item_key", "component"]) if scores.num_rows else None
    duplicated = keys is not None and keys.group_by(["item_key", "component"]).aggregate(
        []
    ).num_rows != (scores.num_rows)
    if orphans or duplicated:
        # items redone after a resume, or a part deleted after damage: keep the scores of
        # the surviving rows only, once
        keep = set(survivors.to_pylist())
        frame = scores.to_pandas()
        frame = frame[frame["item_key"].isin(keep)]
        frame = frame.drop_duplicates(["item_key", "component"], keep="last")
        scores = pa.Table.from_pandas(frame, schema=SCORE_SCHEMA, preserve_index=False)
    # both files are written before either replaces anything: a failure (a full disk) leaves
    # the parts as they were and no temporary file
    staged = []
    try:
        for table, name in ((results, RESULTS_FILE), (scores, SCORES_FILE)):
            tmp = run_dir / f".{name}.tmp"
            staged.append(tmp)
            write_parquet(table, tmp)
    except BaseException:
        for tmp in staged:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, name in zip(staged, (RESULTS_FILE, SCORES_FILE), strict=True):
        os.replace(tmp, run_dir / name)
    parts = run_dir / PARTS_DIR
    if parts.is_dir():
        for path in parts.iterdir():
            path.unlink()
        parts.rmdir()
    return results, scores
