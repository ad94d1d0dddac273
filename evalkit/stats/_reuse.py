"""Reused samples: pairs of items whose two sides are one outcome, not two observations.

The outcome cache copies an outcome into every run whose item has the same content address
(``item_hash``), and a provider that is deterministic given its seed (the simulated agent,
replay) produces the same outcome again for the same item hash. Such a pair says nothing about
noise or about an edit: counting it as a tie narrows intervals and pulls flip rates to 0.

Two aligned rows are **one sample** when their ``item_hash`` is equal and

- their origins are equal: the origin of a row is its ``origin_run_id`` (the run that produced
  the outcome), or, in a run written before that column existed, its own ``run_id`` when it was
  not a cache hit;
- or a side is a cache hit of unknown origin (an older run): it is counted as reused;
- or both rows declare ``provider_deterministic`` (same item hash means same provider, settings
  and seed, so the same outcome by construction).

A pair whose outcomes differ (``passed`` or ``score``) is never one sample, whatever its
labels say. Tables without ``item_hash`` or ``origin_run_id`` (imported results, hand-made
frames) carry no provenance and have no reused pairs; a run written before ``origin_run_id``
existed loads with the column null, so the rules above apply to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

#: Columns of a result table that decide whether two rows are one sample.
SAMPLE_COLUMNS = ("item_hash", "origin_run_id", "run_id", "cache_hit", "provider_deterministic")


class ReuseSplit(NamedTuple):
    """Two frames with their reused pairs taken out.

    Attributes:
        baseline: Baseline rows that are evidence (or unpaired).
        candidate: Candidate rows that are evidence (or unpaired).
        reused: The keys of the excluded pairs (one row per pair).
        n_pairs: Pairs matched on the keys, reused ones included.
    """

    baseline: pd.DataFrame
    candidate: pd.DataFrame
    reused: pd.DataFrame
    n_pairs: int = 0


def _flag(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A boolean column as a numpy array, missing values and absent columns False."""
    if column not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    return frame[column].astype("boolean").fillna(False).to_numpy(dtype=bool)


def _text(frame: pd.DataFrame, column: str) -> pd.Series:
    """A text column as object strings with None for missing (absent columns all None)."""
    if column not in frame.columns:
        return pd.Series([None] * len(frame), index=frame.index, dtype=object)
    values = frame[column].astype(object)
    return values.where(values.notna(), None)


def origins(frame: pd.DataFrame) -> pd.Series:
    """The run that produced each row's outcome, None where it is unknown.

    Args:
        frame: Result rows (``origin_run_id``, ``run_id`` and ``cache_hit`` when present).

    Returns:
        ``origin_run_id``; for rows without it, the row's own ``run_id`` unless the row was a
        cache hit (whose producing run an older run did not record).
    """
    origin = _text(frame, "origin_run_id")
    own = _text(frame, "run_id")
    fresh = ~_flag(frame, "cache_hit")
    fallback = own.where(pd.Series(fresh, index=frame.index), None)
    return origin.where(origin.notna(), fallback)


def one_sample(baseline: pd.DataFrame, candidate: pd.DataFrame) -> np.ndarray:
    """Which aligned row pairs are one sample (see the module docstring).

    Args:
        baseline: Rows of one side.
        candidate: Rows of the other side, row ``i`` paired with ``baseline`` row ``i``.

    Returns:
        A boolean array, True where the pair is one sample.

    Examples:
        >>> a = pd.DataFrame({"item_hash": ["h1", "h2", "h3"], "run_id": "r1",
        ...                   "origin_run_id": None, "cache_hit": False})
        >>> b = pd.DataFrame({"item_hash": ["h1", "h2", "h9"], "run_id": "r2",
        ...                   "origin_run_id": ["r1", "r2", "r1"],
        ...                   "cache_hit": [True, False, True]})
        >>> one_sample(a, b).tolist()
        [True, False, False]
    """
    if not has_provenance(baseline) or not has_provenance(candidate):
        return np.zeros(len(baseline), dtype=bool)
    hash_a = _text(baseline, "item_hash").to_numpy()
    hash_b = _text(candidate, "item_hash").to_numpy()
    same_item = np.array(
        [a is not None and a == b for a, b in zip(hash_a, hash_b, strict=True)], dtype=bool
    )
    origin_a = origins(baseline).to_numpy()
    origin_b = origins(candidate).to_numpy()
    same_origin = np.array(
        [a is not None and a == b for a, b in zip(origin_a, origin_b, strict=True)], dtype=bool
    )
    unknown_a = np.array([o is None for o in origin_a], dtype=bool) & _flag(baseline, "cache_hit")
    unknown_b = np.array([o is None for o in origin_b], dtype=bool) & _flag(candidate, "cache_hit")
    deterministic = _flag(baseline, "provider_deterministic") & _flag(
        candidate, "provider_deterministic"
    )
    copied = same_origin | unknown_a | unknown_b | deterministic
    return np.asarray(same_item & _same_outcome(baseline, candidate) & copied, dtype=bool)


def has_provenance(frame: pd.DataFrame) -> bool:
    """Whether a table records where its outcomes came from (``item_hash``, ``origin_run_id``)."""
    return "item_hash" in frame.columns and "origin_run_id" in frame.columns


def _same_outcome(baseline: pd.DataFrame, candidate: pd.DataFrame) -> np.ndarray:
    """Pairs whose recorded outcomes agree (a copy always agrees with its original)."""
    same = np.ones(len(baseline), dtype=bool)
    for column in ("passed", "score"):
        if column in baseline.columns and column in candidate.columns:
            a = baseline[column].to_numpy(dtype=float, na_value=np.nan)
            b = candidate[column].to_numpy(dtype=float, na_value=np.nan)
            same &= (a == b) | (np.isnan(a) & np.isnan(b))
    return same


def split_reused(
    baseline: pd.DataFrame, candidate: pd.DataFrame, keys: Sequence[str]
) -> ReuseSplit:
    """Take the pairs that are one sample out of two frames matched on ``keys``.

    Args:
        baseline: Validated rows of one side.
        candidate: Validated rows of the other side.
        keys: Columns that pair a row with its counterpart (unit columns and ``trial``).

    Returns:
        The frames without their reused pairs, and the keys of those pairs.
    """
    keys = list(keys)
    pairs = _reused_pairs(baseline, candidate, keys)
    if pairs is None:
        return ReuseSplit(baseline, candidate, pd.DataFrame(columns=keys))
    return _split(baseline, candidate, keys, pairs)


def split_reused_by(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    keys: Sequence[str],
    by: str,
    values: Sequence[str],
) -> tuple[ReuseSplit, dict[str, ReuseSplit]]:
    """:func:`split_reused` of two frames and of each of their parts, matching pairs once.

    A pair lies in one part when ``by`` is among ``keys`` (e.g. one condition), so the split
    of a part is the split of the whole restricted to it; this finds the reused pairs of the
    whole once instead of once per part.

    Args:
        baseline: Validated rows of one side.
        candidate: Validated rows of the other side.
        keys: Columns that pair a row with its counterpart; they include ``by``.
        by: The column that names a row's part (``condition``).
        values: The parts wanted.

    Returns:
        The split of the whole, and for each value of ``values`` the split that
        :func:`split_reused` gives for the rows whose ``by`` is that value.

    Raises:
        ValueError: ``by`` is not among ``keys`` (a pair could straddle two parts).
    """
    keys = list(keys)
    if by not in keys:
        raise ValueError(f"split_reused_by: {by!r} must be one of the keys {keys}")
    in_base = {value: (baseline[by] == value).to_numpy(dtype=bool) for value in values}
    in_cand = {value: (candidate[by] == value).to_numpy(dtype=bool) for value in values}
    pairs = _reused_pairs(baseline, candidate, keys)
    if pairs is None:
        parts = {
            value: ReuseSplit(
                baseline.loc[in_base[value]],
                candidate.loc[in_cand[value]],
                pd.DataFrame(columns=keys),
            )
            for value in values
        }
        return ReuseSplit(baseline, candidate, pd.DataFrame(columns=keys)), parts
    pair_part = pairs.frame[by].to_numpy()
    parts = {}
    for value in values:
        rows_a, rows_b = np.flatnonzero(in_base[value]), np.flatnonzero(in_cand[value])
        mine = pair_part == value
        # Pair rows renumbered within the part: row i of the whole is row rank[i] of the part.
        rank_a = np.cumsum(in_base[value]) - 1
        rank_b = np.cumsum(in_cand[value]) - 1
        part = _Pairs(
            pairs.frame.loc[mine].reset_index(drop=True),
            rank_a[pairs.rows_a[mine]],
            rank_b[pairs.rows_b[mine]],
            pairs.reused[mine],
        )
        parts[value] = _split(baseline.iloc[rows_a], candidate.iloc[rows_b], keys, part)
    return _split(baseline, candidate, keys, pairs), parts


def split_reused_counting_by(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    keys: Sequence[str],
    by: str,
    values: Sequence[str],
) -> tuple[ReuseSplit, dict[str, tuple[int, int]]]:
    """:func:`split_reused` of two frames, with each part's reused and matched pair counts.

    What :func:`split_reused_by` gives without building each part's frames: a part's rows
    are the whole split's rows whose ``by`` is that value. The arguments are those of
    :func:`split_reused_by`.

    Returns:
        The split of the whole, and for each value of ``values`` the ``len(reused)`` and
        ``n_pairs`` of its :func:`split_reused_by` split.

    Raises:
        ValueError: ``by`` is not among ``keys`` (a pair could straddle two parts).
    """
    keys = list(keys)
    if by not in keys:
        raise ValueError(f"split_reused_counting_by: {by!r} must be one of the keys {keys}")
    pairs = _reused_pairs(baseline, candidate, keys)
    if pairs is None:
        whole = ReuseSplit(baseline, candidate, pd.DataFrame(columns=keys))
        return whole, {value: (0, 0) for value in values}
    pair_part = pairs.frame[by].to_numpy()
    counts = {}
    for value in values:
        mine = pair_part == value
        counts[value] = (int(np.count_nonzero(pairs.reused & mine)), int(np.count_nonzero(mine)))
    return _split(baseline, candidate, keys, pairs), counts


class _Pairs(NamedTuple):
    """Rows of two frames matched on keys: the keys, both row positions, reused or not."""

    frame: pd.DataFrame
    rows_a: np.ndarray
    rows_b: np.ndarray
    reused: np.ndarray


def _reused_pairs(
    baseline: pd.DataFrame, candidate: pd.DataFrame, keys: list[str]
) -> _Pairs | None:
    """Every pair of rows matched on ``keys`` and whether it is one sample.

    Returns:
        The pairs, or None when a side records no provenance (nothing can be reused).
    """
    if not has_provenance(baseline) or not has_provenance(candidate):
        return None
    columns = [
        c
        for c in (*SAMPLE_COLUMNS, "passed", "score")
        if c in baseline.columns or c in candidate.columns
    ]
    left = baseline[keys].assign(_row_a=np.arange(len(baseline)))
    right = candidate[keys].assign(_row_b=np.arange(len(candidate)))
    pairs = left.merge(right, on=keys, how="inner")
    rows_a = pairs["_row_a"].to_numpy()
    rows_b = pairs["_row_b"].to_numpy()
    if pairs.empty:
        return _Pairs(pairs, rows_a, rows_b, np.zeros(0, dtype=bool))
    side_a = baseline.reindex(columns=columns).iloc[rows_a].reset_index(drop=True)
    side_b = candidate.reindex(columns=columns).iloc[rows_b].reset_index(drop=True)
    return _Pairs(pairs, rows_a, rows_b, one_sample(side_a, side_b))


def _split(
    baseline: pd.DataFrame, candidate: pd.DataFrame, keys: list[str], pairs: _Pairs
) -> ReuseSplit:
    """The frames without the rows of their reused pairs (``pairs`` index their rows)."""
    if pairs.frame.empty:
        return ReuseSplit(baseline, candidate, pd.DataFrame(columns=keys))
    if not pairs.reused.any():  # the usual case: nothing to take out
        return ReuseSplit(
            baseline.reset_index(drop=True),
            candidate.reset_index(drop=True),
            pairs.frame[keys].iloc[:0].reset_index(drop=True),
            len(pairs.frame),
        )
    drop_a = np.zeros(len(baseline), dtype=bool)
    drop_b = np.zeros(len(candidate), dtype=bool)
    drop_a[pairs.rows_a[pairs.reused]] = True
    drop_b[pairs.rows_b[pairs.reused]] = True
    return ReuseSplit(
        baseline.loc[~drop_a].reset_index(drop=True),
        candidate.loc[~drop_b].reset_index(drop=True),
        pairs.frame.loc[pairs.reused, keys].reset_index(drop=True),
        len(pairs.frame),
    )


def reused_note(n_reused: int, n_pairs: int) -> str:
    """One line explaining excluded reused pairs ("" when there are none).

    Args:
        n_reused: Pairs excluded as one sample.
        n_pairs: Pairs matched in all (reused included).

    Returns:
        The explanation, naming how to draw fresh samples when every pair was reused.
    """
    if n_reused == 0:
        return ""
    if n_reused >= n_pairs:
        return (
            f"all {n_reused} matched item pair(s) are one sample each (outcomes reused from the "
            "cache or a deterministic provider with the same seed): no evidence; rerun with "
            "--no-cache (and a new --seed for seeded providers) to draw fresh samples"
        )
    return (
        f"{n_reused} of {n_pairs} matched item pair(s) are one sample each (outcomes reused from "
        "the cache or a deterministic provider with the same seed) and are left out as no "
        "evidence"
    )
