"""Input coercion and validation shared by every statistics function.

Every public function accepts a tidy DataFrame (one row per work item, with at least
``case_id, condition`` and the value column); statistics never read files (a run's table comes
from ``evalkit.results.read_run``, and the functions of ``evalkit.analysis`` accept runs).
The rules applied here, once:

- rows whose ``status`` is ``"skipped"`` or ``"ungraded"`` (no outcome yet: missing
  evidence) are excluded; rows whose status is ``"error"`` or
  ``"timeout"`` count as failures (``passed=False``, and ``score=0.0`` when the score is
  missing), as ``docs/architecture.md`` prescribes ("a timeout counts as a failure");
- a missing ``trial`` column (or one that is entirely null) numbers the rows of each
  (lane,) case/condition(/provider) ``0, 1, ...`` in their order of appearance, so a frame with
  one row per case gets ``trial = 0``;
- ``lane``, ``case_id``, ``condition`` and ``provider`` are compared as strings (a missing lane
  or provider is ``""``);
- ``passed`` must be boolean (``True``/``False``, or numbers that are exactly 0 or 1);
- a work item may appear only once (unique on lane, case_id, condition, provider, trial —
  whichever of them are present).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalkit.errors import InputError

FAILED_STATUSES = ("error", "timeout")
SKIPPED_STATUS = "skipped"
#: Rows without an outcome yet (judged statements nobody could grade): missing evidence.
UNGRADED_STATUS = "ungraded"
KEY_COLUMNS = ("lane", "case_id", "condition", "provider", "trial")
#: Key columns that, when a run holds several values, distinguish otherwise equal items.
OPTIONAL_KEYS = ("lane", "provider")

DataLike = pd.DataFrame | str | os.PathLike[str]


def check_choice(name: str, value: object, options: Iterable[object]) -> None:
    """Raise InputError unless ``value`` is one of ``options`` (seaborn ``_check_argument``).

    Args:
        name: The argument name, as the caller spells it.
        value: The value passed.
        options: The accepted values.

    Raises:
        InputError: ``value`` is not among ``options``.
    """
    allowed = list(options)
    if value not in allowed:
        raise InputError(
            f"The value for `{name}` must be one of {allowed}, but {value!r} was passed."
        )


def check_confidence(confidence: float, name: str = "confidence") -> float:
    """Validate a confidence level (or any probability strictly between 0 and 1).

    Args:
        confidence: The level, e.g. 0.95.
        name: The argument name used in the error message.

    Returns:
        The level as a float.

    Raises:
        InputError: The level is not strictly between 0 and 1.
    """
    try:
        level = float(confidence)
    except (TypeError, ValueError):
        level = float("nan")
    if not 0.0 < level < 1.0:
        raise InputError(
            f"The value for `{name}` must be strictly between 0 and 1 (e.g. 0.95), "
            f"but {confidence!r} was passed."
        )
    return level


def check_positive_int(value: int, name: str, minimum: int = 1) -> int:
    """Validate an integer argument with a lower bound.

    Args:
        value: The value passed.
        name: The argument name used in the error message.
        minimum: Smallest accepted value.

    Returns:
        The value as an int.

    Raises:
        InputError: Not an integer, or below ``minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(
            f"The value for `{name}` must be an integer >= {minimum}, but {value!r} was passed."
        )
    return int(value)


def only_columns(data: object, columns: Iterable[str]) -> object:
    """A result table narrowed to ``columns`` before validation (anything else as it is).

    The statistics read a handful of a run's fifty-odd columns; :func:`as_frame` then copies
    only those. A non-table is passed on untouched for :func:`as_frame` to refuse.

    Args:
        data: A result table, or anything else.
        columns: The columns to keep (those the table lacks are skipped).

    Returns:
        The narrowed table, in its own column order, or ``data`` itself.
    """
    if not isinstance(data, pd.DataFrame):
        return data
    wanted = set(columns)
    return data.loc[:, [column in wanted for column in data.columns]]


def as_frame(
    data: object,
    *,
    what: str = "data",
    value: str = "passed",
    required: Sequence[str] = ("case_id", "condition"),
) -> pd.DataFrame:
    """Validate a DataFrame as a tidy result frame (statistics never read files).

    Args:
        data: A DataFrame (a run is read with ``evalkit.results.read_run``).
        what: How the argument is called in error messages (e.g. ``"baseline"``).
        value: The value column that must be present and valid (``"passed"`` or ``"score"``).
        required: Key columns that must be present besides ``value``.

    Returns:
        A new DataFrame with string ``case_id``/``condition`` (and ``provider`` when present),
        an integer ``trial`` column, a boolean ``passed`` or float ``score`` value column, and no
        skipped rows.

    Raises:
        InputError: Wrong type, no rows, missing columns, invalid values or duplicate items.
    """
    if isinstance(data, (str, os.PathLike)):
        raise InputError(
            f"`{what}` must be a pandas DataFrame, but the path or run id {str(data)!r} was "
            "passed: evalkit.stats works on tables. Read the run first with "
            "evalkit.results.read_run(run, runs_dir=...), or call evalkit.compare / "
            "evalkit.flips / evalkit.lift, which accept runs."
        )
    if not isinstance(data, pd.DataFrame):
        raise InputError(
            f"`{what}` must be a pandas DataFrame, but a {type(data).__name__} was passed."
        )
    df = data.copy()
    missing = [c for c in (*required, value) if c not in df.columns]
    if missing:
        raise InputError(
            f"`{what}` is missing column(s) {missing}: a tidy result table needs at least "
            f"{[*required, value]} (one row per work item). Rename or add the column(s)."
        )
    if df.empty:
        raise InputError(
            f"`{what}` has no rows: pass a run or DataFrame with at least one result row."
        )
    df = df.reset_index(drop=True)
    failed = pd.Series(False, index=df.index)
    if "status" in df.columns:
        status = df["status"].astype("string").str.lower()
        keep = (~status.isin((SKIPPED_STATUS, UNGRADED_STATUS))).fillna(True).to_numpy(dtype=bool)
        failed = status.isin(FAILED_STATUSES).fillna(False)
        df = df.loc[keep].reset_index(drop=True)
        failed = failed.loc[keep].reset_index(drop=True)
        if df.empty:
            raise InputError(
                f"`{what}` has only skipped or ungraded rows (status 'skipped' or 'ungraded'): "
                "nothing to analyse; grade ungraded rows with `evalkit judge RUN "
                "--judge-provider NAME`."
            )
    for column in ("lane", "case_id", "condition", "provider"):
        if column in df.columns:
            if df[column].isna().any():
                if column in OPTIONAL_KEYS:
                    df[column] = df[column].astype("object").where(df[column].notna(), "")
                else:
                    raise InputError(
                        f"column `{column}` of `{what}` has missing values; every row needs "
                        f"a {column}."
                    )
            df[column] = df[column].astype(str)
    failed_mask = failed.to_numpy(dtype=bool)
    if value == "passed":
        df["passed"] = _as_bool(df["passed"], failed_mask, what)
    else:
        df[value] = _as_float(df[value], failed_mask, what, value)
    if "passed" in df.columns and value != "passed":
        try:
            df["passed"] = _as_bool(df["passed"], failed_mask, what)
        except InputError:
            df = df.drop(columns="passed")
    df["trial"] = _trial_column(df, what)
    keys = [c for c in KEY_COLUMNS if c in df.columns]
    duplicated = df.duplicated(keys, keep=False)
    if duplicated.any():
        first = df.loc[duplicated, keys].iloc[0].to_dict()
        raise InputError(
            f"`{what}` holds the same work item more than once (unique on {keys}); "
            f"e.g. {first}. Give repeated rows distinct `trial` numbers or drop duplicates."
        )
    return df


def _as_bool(column: pd.Series, failed: np.ndarray, what: str) -> np.ndarray:
    """Validate a ``passed`` column and return it as a numpy bool array (failed rows False)."""
    missing = column.isna().to_numpy(dtype=bool)
    if pd.api.types.is_bool_dtype(column.dtype) and not (missing & ~failed).any():
        values = column.fillna(False).to_numpy(dtype=bool)
        return np.asarray(values & ~failed, dtype=bool)
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
        numbers = column.astype("float64").to_numpy()
        ok = (numbers == 0.0) | (numbers == 1.0) | failed
        if ok.all():
            return np.asarray((numbers == 1.0) & ~failed, dtype=bool)
        bad: list[object] = column[~ok].head(3).tolist()
    else:
        out = np.zeros(len(column), dtype=bool)
        bad = []
        for i, item in enumerate(column.astype("object").to_numpy()):
            if failed[i]:
                continue
            if isinstance(item, (bool, np.bool_)) or (
                isinstance(item, (int, np.integer)) and item in (0, 1)
            ):
                out[i] = bool(item)
            else:
                bad.append(item)
                if len(bad) >= 3:
                    break
        if not bad:
            return out
    raise InputError(
        f"column `passed` of `{what}` must be boolean (True/False), but it holds "
        f"{bad!r}. Map your labels to True/False (e.g. df['passed'] = df['label'] == 'pass')."
    )


def _as_float(column: pd.Series, failed: np.ndarray, what: str, name: str) -> np.ndarray:
    """Validate a numeric value column (e.g. ``score``) and return it as float64."""
    numeric = pd.to_numeric(column, errors="coerce").astype("float64").to_numpy()
    original_missing = column.isna().to_numpy()
    not_numeric = np.isnan(numeric) & ~original_missing
    if not_numeric.any():
        examples = column[not_numeric].head(3).tolist()
        raise InputError(f"column `{name}` of `{what}` must be numeric, but it holds {examples!r}.")
    numeric = np.where(failed & np.isnan(numeric), 0.0, numeric)
    if np.isnan(numeric).any() or np.isinf(numeric).any():
        raise InputError(
            f"column `{name}` of `{what}` has missing or infinite values on rows that did not "
            "fail; fill them or drop those rows."
        )
    return numeric


def _trial_column(df: pd.DataFrame, what: str) -> pd.Series:
    """Return an integer trial column, numbering rows when trials are absent."""
    groups = [c for c in ("lane", "case_id", "condition", "provider") if c in df.columns]
    if "trial" not in df.columns or df["trial"].isna().all():
        return df.groupby(groups, sort=False).cumcount().astype("int64")
    if df["trial"].isna().any():
        raise InputError(
            f"column `trial` of `{what}` is missing on some rows only; give every row a trial "
            "number, or drop the column to number trials by order of appearance."
        )
    trial = pd.to_numeric(df["trial"], errors="coerce")
    if trial.isna().any() or (trial != np.floor(trial)).any():
        raise InputError(f"column `trial` of `{what}` must hold integers.")
    return trial.astype("int64")


def match_columns(*frames: pd.DataFrame) -> list[str]:
    """Columns matching two runs: case and condition, plus lane/provider when they vary.

    ``lane`` or ``provider`` joins the match when every frame has the column and at least one
    frame holds several values of it (so two single-provider runs of different providers are
    still compared case by case).

    Args:
        frames: Validated frames.

    Returns:
        The unit columns, e.g. ``["case_id", "condition", "provider"]``.
    """
    on = ["case_id", "condition"]
    for column in OPTIONAL_KEYS:
        if all(column in df.columns for df in frames) and any(
            df[column].nunique() > 1 for df in frames
        ):
            on.append(column)
    return on


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Convert a frame into JSON-serializable records (numpy scalars → Python, NaN → None).

    Args:
        frame: Any DataFrame.

    Returns:
        One dict per row.
    """
    out: list[dict[str, Any]] = []
    columns = list(frame.columns)
    for row in frame.itertuples(index=False, name=None):
        item: dict[str, Any] = {}
        for key, cell in zip(columns, row, strict=True):
            item[str(key)] = plain(cell)
        out.append(item)
    return out


def json_records(frame: pd.DataFrame, columns: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """Records of ``frame``'s ``columns``, each converted to plain JSON values as a column.

    A cell is what ``frame.to_dict("records")`` holds (a missing ``pd.NA`` read as None),
    converted by its column's kind: ``"plain"`` (:func:`plain`), ``"str"`` (``str``),
    ``"int"`` (``int``) or ``"float"`` (:func:`~evalkit.stats._interval.json_float`: a float,
    None when NaN or infinite). The values are those of the cell-by-cell conversions; a
    column is converted at once (a column of strings is already plain).

    Args:
        frame: Any DataFrame.
        columns: ``(column, kind)`` pairs, in the order of the records' keys.

    Returns:
        One dict per row.
    """
    names = [name for name, _ in columns]
    lists = [
        _json_column([None if v is pd.NA else v for v in frame[name].tolist()], kind)
        for name, kind in columns
    ]
    return [dict(zip(names, values, strict=True)) for values in zip(*lists, strict=True)]


def _json_column(values: list[Any], kind: str) -> list[Any]:
    """One column's cells converted as :func:`json_records` says."""
    if kind == "float":
        numbers = np.asarray(values, dtype=float)
        out: list[Any] = numbers.tolist()
        for index in np.flatnonzero(~np.isfinite(numbers)).tolist():
            out[index] = None
        return out
    if kind == "int":
        return [int(v) for v in values]
    if all(type(v) is str for v in values):
        return values
    return [str(v) for v in values] if kind == "str" else [plain(v) for v in values]


def plain(cell: Any) -> Any:
    """Return ``cell`` as a plain Python value suitable for ``json.dumps``.

    Args:
        cell: A scalar from a DataFrame.

    Returns:
        bool, int, float (finite), str, or None.
    """
    if cell is None:
        return None
    if isinstance(cell, (bool, np.bool_)):
        return bool(cell)
    if isinstance(cell, (int, np.integer)):
        return int(cell)
    if isinstance(cell, (float, np.floating)):
        number = float(cell)
        return number if np.isfinite(number) else None
    if cell is pd.NA or cell is pd.NaT:
        return None
    return str(cell) if not isinstance(cell, str) else cell


def json_ready(obj: Any) -> Any:
    """Recursively convert dicts, lists and scalars to plain JSON-serializable values.

    Args:
        obj: A dict, list, tuple or scalar.

    Returns:
        The same structure with numpy scalars converted and NaN replaced by None.
    """
    # The exact built-in types first (a comparison's JSON holds hundreds of thousands of
    # them): what :func:`plain` would return for them, without its chain of checks.
    kind = type(obj)
    if kind is str or kind is int or kind is bool or obj is None:
        return obj
    if kind is float:
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {key if type(key) is str else str(key): json_ready(item)
                for key, item in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(item) for item in obj]
    return plain(obj)
