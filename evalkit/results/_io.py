"""Reading and writing run directories."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from evalkit.errors import InputError
from evalkit.results._layout import PARTS_DIR, RESULTS_FILE, SCORES_FILE, resolve_run_dir
from evalkit.results._schema import RESULT_SCHEMA, SCORE_SCHEMA

if TYPE_CHECKING:
    import pandas as pd


def read_run(
    run: str | os.PathLike[str], runs_dir: str | os.PathLike[str] = "runs"
) -> pd.DataFrame:
    """Read a run's result table as a tidy DataFrame, one row per work item.

    A run that is still partial (crashed or running) is read from its parts.

    Args:
        run: A run directory, or a run id under ``runs_dir``.
        runs_dir: Where run ids are looked up.

    Returns:
        The result table with the columns of ``RESULT_SCHEMA``, sorted by ``item_key``.

    Raises:
        RunNotFoundError: The run does not exist.
    """
    df: pd.DataFrame = read_table(
        resolve_run_dir(run, runs_dir), RESULTS_FILE, RESULT_SCHEMA
    ).to_pandas()
    return df


def read_scores(
    run: str | os.PathLike[str], runs_dir: str | os.PathLike[str] = "runs"
) -> pd.DataFrame:
    """Read a run's per-component score table (``scores.parquet``).

    Args:
        run: A run directory, or a run id under ``runs_dir``.
        runs_dir: Where run ids are looked up.

    Returns:
        Columns ``item_key, component, value, max_value, passed, detail``.
    """
    df: pd.DataFrame = read_table(
        resolve_run_dir(run, runs_dir), SCORES_FILE, SCORE_SCHEMA
    ).to_pandas()
    return df


def read_table(run_dir: Path, name: str, schema: pa.Schema) -> pa.Table:
    """Read a compacted table, or the union of its parts while the run is partial.

    Args:
        run_dir: The run directory.
        name: ``results.parquet`` or ``scores.parquet``.
        schema: The schema to cast to (new columns of older runs come back as nulls).

    Returns:
        The table, sorted by ``item_key`` and de-duplicated on it for results.
    """
    path = run_dir / name
    stem = name.removesuffix(".parquet")
    parts = (
        sorted((run_dir / PARTS_DIR).glob(f"{stem}-*.parquet"))
        if (run_dir / PARTS_DIR).is_dir()
        else []
    )
    files = ([path] if path.exists() else []) + parts
    tables = [conform(pq.read_table(f), schema) for f in files]
    table = pa.concat_tables(tables) if tables else schema.empty_table()
    unique = table.num_rows == 0 or pc.count_distinct(table.column("item_key")).as_py() == (
        table.num_rows
    )
    if name == RESULTS_FILE and not unique:
        # A resumed run may hold an item twice (an error row later redone): keep the last.
        df = table.to_pandas()
        df = df.drop_duplicates("item_key", keep="last").sort_values("item_key", kind="stable")
        table = pa.Table.from_pandas(df, schema=schema, preserve_index=False)
    elif table.num_rows:
        table = table.sort_by("item_key")
    return table


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
    runs_dir: str | os.PathLike[str] = "runs",
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
    data: pd.DataFrame | str | os.PathLike[str], runs_dir: str | os.PathLike[str] = "runs"
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
