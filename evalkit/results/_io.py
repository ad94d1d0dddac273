"""Reading and writing run directories."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from evalkit._settings import RUNS_DIR
from evalkit.errors import CorruptFileError, InputError
from evalkit.results._layout import (
    PARTS_DIR,
    RESULTS_FILE,
    SCORES_FILE,
    recorded_resume_command,
    resolve_run_dir,
)
from evalkit.results._schema import RESULT_SCHEMA, SCORE_SCHEMA

if TYPE_CHECKING:
    import pandas as pd


def read_run(
    run: str | os.PathLike[str], runs_dir: str | os.PathLike[str] = RUNS_DIR.default
) -> pd.DataFrame:
    """Read a run's result table as a tidy DataFrame, one row per work item.

    A run that is still partial (crashed or running) is read from its parts.

    Args:
        run: A run directory, or a run id under ``runs_dir``.
        runs_dir: Where run ids are looked up.

    Returns:
        The result table with the columns of ``RESULT_SCHEMA``, sorted by ``item_key``;
        ``attrs["run_dir"]`` is the run directory it was read from.

    Raises:
        RunNotFoundError: The run does not exist.
    """
    frame = _read_frame(run, runs_dir, RESULTS_FILE, RESULT_SCHEMA)
    # where the rows came from, so that explain(frame, ...) finds the run's scores and
    # transcripts (pandas carries attrs through copies and filters)
    frame.attrs["run_dir"] = str(resolve_run_dir(run, runs_dir))
    return frame


def read_scores(
    run: str | os.PathLike[str], runs_dir: str | os.PathLike[str] = RUNS_DIR.default
) -> pd.DataFrame:
    """Read a run's per-component score table (``scores.parquet``).

    Args:
        run: A run directory, or a run id under ``runs_dir``.
        runs_dir: Where run ids are looked up.

    Returns:
        Columns ``item_key, component, value, max_value, passed, detail``.
    """
    return _read_frame(run, runs_dir, SCORES_FILE, SCORE_SCHEMA)


def _read_frame(
    run: str | os.PathLike[str], runs_dir: str | os.PathLike[str], name: str, schema: pa.Schema
) -> pd.DataFrame:
    """One of a run's tables (see :func:`read_table`) as a DataFrame."""
    df: pd.DataFrame = read_table(resolve_run_dir(run, runs_dir), name, schema).to_pandas()
    return df


def read_table(run_dir: Path, name: str, schema: pa.Schema) -> pa.Table:
    """Read a compacted table, or the union of its parts while the run is partial.

    Args:
        run_dir: The run directory.
        name: ``results.parquet`` or ``scores.parquet``.
        schema: The schema to cast to (new columns of older runs come back as nulls).

    Returns:
        The table, sorted by ``item_key`` and de-duplicated on it for results.

    Raises:
        CorruptFileError: A file is empty, truncated or damaged; the message names it and
            says what to do (delete a part and resume, or delete the compacted files and run
            again).
    """
    path = run_dir / name
    stem = name.removesuffix(".parquet")
    parts = (
        sorted((run_dir / PARTS_DIR).glob(f"{stem}-*.parquet"))
        if (run_dir / PARTS_DIR).is_dir()
        else []
    )
    files = ([path] if path.exists() else []) + parts
    tables = [read_parquet(f, schema, fix=partial(_damage_fix, run_dir, f)) for f in files]
    table = pa.concat_tables(tables) if tables else schema.empty_table()
    if name == RESULTS_FILE and not _unique_keys(table):
        # A resumed run may hold an item twice (an error row later redone): keep the last.
        df = table.to_pandas()
        df = df.drop_duplicates("item_key", keep="last").sort_values("item_key", kind="stable")
        table = pa.Table.from_pandas(df, schema=schema, preserve_index=False)
    elif table.num_rows and not _sorted_keys(table):
        table = table.sort_by("item_key")
    return table


def _unique_keys(table: pa.Table) -> bool:
    """Whether no ``item_key`` occurs twice in ``table``."""
    return table.num_rows == 0 or bool(
        pc.count_distinct(table.column("item_key")).as_py() == table.num_rows
    )


def _sorted_keys(table: pa.Table) -> bool:
    """Whether ``table`` is already in ``item_key`` order (a compacted file is written so).

    ``sort_by`` is stable, so it would return such a table as it is: checking the order is
    one comparison of neighbours instead of a sort of every key and a copy of every column.
    """
    keys = table.column("item_key")
    if keys.null_count or table.num_rows < 2:
        return not keys.null_count
    return bool(pc.all(pc.less_equal(keys[:-1], keys[1:])).as_py())


def read_parquet(path: Path, schema: pa.Schema, *, fix: str | Callable[[], str]) -> pa.Table:
    """Read one parquet file of a run, cast to ``schema``; damage becomes a clear error.

    Page checksums are verified (files written by :func:`write_parquet` carry them), and the
    column names are checked against the Arrow schema pyarrow stores in the footer, so a
    flipped bit in the data or in a column name is reported instead of read as data.

    Args:
        path: The parquet file.
        schema: The schema to cast to (see :func:`conform`).
        fix: What the user should do when the file cannot be read (ends the message), or a
            function returning it (called only then).

    Returns:
        The table.

    Raises:
        CorruptFileError: The file is empty, truncated, damaged or vanished while being read.
    """
    try:
        if path.stat().st_size == 0:
            raise _Damaged("the file is empty (0 bytes)")
        handle = pq.ParquetFile(path, page_checksum_verification=True)
        _check_column_names(handle)
        return conform(handle.read(), schema)
    except _Damaged as exc:
        raise CorruptFileError(
            str(path), str(exc), fix if isinstance(fix, str) else fix()
        ) from None
    except FileNotFoundError:
        raise CorruptFileError(
            str(path),
            "the file vanished while it was being read (a running `evalkit run` compacts its "
            "parts when it finishes)",
            "run the command again",
        ) from None
    except (pa.ArrowException, OSError, ValueError, EOFError, KeyError) as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CorruptFileError(
            str(path),
            f"the file is truncated or damaged ({detail})",
            fix if isinstance(fix, str) else fix(),
        ) from None


class _Damaged(Exception):
    """A check of :func:`read_parquet` failed (becomes a ``CorruptFileError``)."""


def _check_column_names(handle: pq.ParquetFile) -> None:
    stored = (handle.metadata.metadata or {}).get(b"ARROW:schema")
    if stored is None:
        return  # written by another tool: nothing to compare against
    arrow_schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(stored)))
    if arrow_schema.names != handle.schema_arrow.names:
        raise _Damaged(
            "the file is damaged (its column names differ from the schema in its footer)"
        )


def write_parquet(table: pa.Table, path: Path) -> None:
    """Write a table of a run as parquet, with page checksums that :func:`read_parquet` checks.

    Args:
        table: The table.
        path: The destination (callers write a temporary file and rename it).
    """
    pq.write_table(table, path, write_page_checksum=True)


def _damage_fix(run_dir: Path, path: Path) -> str:
    """What to do about a damaged table file of ``run_dir`` (a part or a compacted file)."""
    # Only a damaged file needs the manifest (a pydantic model): reading a run does not.
    from evalkit.results._manifest import load_manifest

    try:
        manifest = load_manifest(run_dir)
    except (InputError, OSError, UnicodeDecodeError):
        manifest = None
    command = recorded_resume_command(
        manifest.command_line if manifest else None, run_dir.name, run_dir.parent
    )
    if path.parent.name == PARTS_DIR:
        number = path.stem.split("-", 1)[-1]
        pair = " and ".join(
            str(path.parent / f"{s}-{number}.parquet") for s in ("results", "scores")
        )
        return f"delete {pair} (their items are run again) and resume with: {command}"
    pair = " and ".join(str(run_dir / f) for f in (RESULTS_FILE, SCORES_FILE))
    return (
        f"re-run: delete {pair} and run again with: {command} (cached outcomes are reused), "
        "or restore the files from a backup"
    )


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Cast a table to ``schema``: add missing columns as nulls, order columns, keep extras.

    Args:
        table: A table read from disk or built in memory.
        schema: The target schema.

    Returns:
        A table whose first columns follow ``schema`` exactly.
    """
    columns = []
    for field in schema:
        if field.name in table.column_names:
            columns.append(table.column(field.name).cast(field.type))
        else:
            columns.append(pa.nulls(table.num_rows, type=field.type))
    extras = [n for n in table.column_names if n not in schema.names]
    out = pa.Table.from_arrays(columns, schema=schema)
    for name in extras:
        out = out.append_column(name, table.column(name))
    return out


def load_results(
    data: pd.DataFrame | str | os.PathLike[str],
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    *,
    what: str = "data",
) -> pd.DataFrame:
    """A run's result table, or the table given: the one entry point from runs to statistics.

    Args:
        data: A tidy DataFrame (returned as is), or a run directory / run id under
            ``runs_dir``.
        runs_dir: Where run ids are looked up.
        what: How the argument is called in error messages (e.g. ``"baseline"``).

    Returns:
        The result table.

    Raises:
        RunNotFoundError: ``data`` names no run.
        InputError: ``data`` is neither a DataFrame nor a path or run id.
    """
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, (str, os.PathLike)):
        return read_run(data, runs_dir)
    raise InputError(
        f"`{what}` must be a run directory, a run id or a pandas DataFrame, "
        f"but a {type(data).__name__} was passed."
    )


def run_label(
    data: pd.DataFrame | str | os.PathLike[str], runs_dir: str | os.PathLike[str] = RUNS_DIR.default
) -> str | None:
    """The run id a table or run stands for (None for a table without a ``run_id``).

    Args:
        data: A run directory, run id or result table.
        runs_dir: Where run ids are looked up.

    Returns:
        The run directory's name, or the single ``run_id`` of the table.
    """
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        if "run_id" not in data.columns:
            return None
        ids = data["run_id"].dropna().unique()
        return str(ids[0]) if len(ids) == 1 else None
    return resolve_run_dir(data, runs_dir).name
