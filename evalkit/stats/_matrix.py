"""Pairing two tidy frames into per-case trial matrices."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalkit.errors import InputError


@dataclass(frozen=True)
class PairedData:
    """Two arms matched by unit, as ``(n_units, n_trial_labels)`` matrices.

    Attributes:
        keys: One row per matched unit, holding the ``on`` columns (sorted).
        baseline: Baseline values; column ``j`` is the ``j``-th trial label in ``trials``,
            NaN where that trial is absent.
        candidate: Candidate values, same layout.
        trials: The sorted union of trial labels.
        unmatched: Units present on one side only: the ``on`` columns, ``side`` (the side that
            has the unit: ``"baseline"`` or ``"candidate"``) and ``n`` (its rows).
    """

    keys: pd.DataFrame
    baseline: np.ndarray
    candidate: np.ndarray
    trials: np.ndarray
    unmatched: pd.DataFrame


def build_pairs(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    on: Sequence[str],
    value: str,
    trial_col: str = "trial",
) -> PairedData:
    """Match two validated frames on ``on`` and lay out their trials side by side.

    Args:
        baseline: Validated tidy frame of the baseline.
        candidate: Validated tidy frame of the candidate.
        on: Unit columns (e.g. ``case_id, condition``).
        value: The value column (``passed`` or ``score``).
        trial_col: The trial column; equal labels on both sides "line up".

    Returns:
        The paired matrices and the unmatched units.

    Raises:
        InputError: Missing columns, rows not unique on ``on + trial``, or no common unit.
    """
    on = list(on)
    for side, df in (("baseline", baseline), ("candidate", candidate)):
        missing = [c for c in [*on, trial_col, value] if c not in df.columns]
        if missing:
            raise InputError(f"`{side}` is missing column(s) {missing} needed for pairing.")
    stacked = pd.concat(
        [baseline[[*on, trial_col, value]], candidate[[*on, trial_col, value]]],
        ignore_index=True,
    )
    arm_of_row = np.repeat([0, 1], [len(baseline), len(candidate)])
    codes = stacked.groupby(on, sort=True).ngroup().to_numpy()
    n_units = int(codes.max()) + 1
    trials = np.unique(stacked[trial_col].to_numpy())
    columns = np.searchsorted(trials, stacked[trial_col].to_numpy())
    cell = (arm_of_row * n_units + codes) * len(trials) + columns  # one per side, unit, trial
    _refuse_duplicates(stacked, arm_of_row, cell, [*on, trial_col])
    counts = np.zeros((2, n_units), dtype=np.int64)
    np.add.at(counts, (arm_of_row, codes), 1)
    matched = (counts[0] > 0) & (counts[1] > 0)
    first_row = np.full(n_units, -1, dtype=np.int64)
    first_row[codes[::-1]] = np.arange(len(codes))[::-1]
    keys = stacked.iloc[first_row[matched]][on].reset_index(drop=True)
    unmatched = _unmatched(stacked, on, counts, matched, first_row)
    if keys.empty:
        raise InputError(
            f"baseline and candidate share no unit on {on}: check that they hold the same "
            "cases (and conditions), or compare two conditions of one run with `conditions=`."
        )
    unit = np.cumsum(matched) - 1
    values = stacked[value].to_numpy(dtype=float)
    arms = []
    for index in (0, 1):
        rows = (arm_of_row == index) & matched[codes]
        out = np.full((len(keys), len(trials)), np.nan)
        out[unit[codes[rows]], columns[rows]] = values[rows]
        arms.append(out)
    return PairedData(keys, arms[0], arms[1], trials, unmatched)


def _refuse_duplicates(
    stacked: pd.DataFrame, arm_of_row: np.ndarray, cell: np.ndarray, keys: list[str]
) -> None:
    """Refuse a side with several rows for one unit and trial (found from the cell numbers).

    Args:
        stacked: Baseline rows, then candidate rows.
        arm_of_row: 0 for a baseline row, 1 for a candidate row.
        cell: Each row's number of (side, unit, trial): equal numbers are repeated rows.
        keys: The unit columns and the trial column (for the message).

    Raises:
        InputError: Naming the side and the first row of a repeated unit and trial.
    """
    _, inverse, repeats = np.unique(cell, return_inverse=True, return_counts=True)
    repeated = repeats[inverse] > 1
    for index, side in enumerate(("baseline", "candidate")):
        rows = np.flatnonzero(repeated & (arm_of_row == index))
        if len(rows):
            example = stacked[keys].iloc[rows[0]].to_dict()
            raise InputError(
                f"`{side}` has several rows per {keys} (e.g. {example}); "
                "add the distinguishing column (often 'provider') to `on`."
            )


def _unmatched(
    stacked: pd.DataFrame,
    on: list[str],
    counts: np.ndarray,
    matched: np.ndarray,
    first_row: np.ndarray,
) -> pd.DataFrame:
    """The units of one side only: ``on`` columns, ``side`` and ``n``, sorted by ``on``.

    Args:
        stacked: Baseline rows, then candidate rows.
        on: Unit columns.
        counts: ``(2, n_units)`` rows per side and unit.
        matched: Units present on both sides.
        first_row: Each unit's first row in ``stacked``.

    Returns:
        One row per unmatched unit and side (no rows, same columns, when every unit matched).
    """
    if matched.all():
        none = stacked.iloc[:0][on].reset_index(drop=True)
        none["side"] = "baseline"
        none["n"] = counts[0][:0]
        return none
    lonely = []
    for label, index in (("baseline", 0), ("candidate", 1)):
        only = ~matched & (counts[index] > 0)
        part = stacked.iloc[first_row[only]][on].reset_index(drop=True)
        part["side"] = label
        part["n"] = counts[index][only]
        lonely.append(part)
    unmatched: pd.DataFrame = pd.concat(lonely, ignore_index=True).sort_values(on, kind="stable")
    return unmatched.reset_index(drop=True)
