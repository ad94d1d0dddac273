"""Why a case's trials failed, per case: the reasons beside compare's and flips' case rows.

A comparison or a flip table names cases; the reasons of their failing trials
(:func:`evalkit.results.item_reasons`) say why. Each case (or case, condition, provider unit)
gets its number of trials, how many failed, the failing trials counted by primary cause, and
one example reason line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalkit._settings import RUNS_DIR
from evalkit.results import (
    NO_REASONS,
    item_reasons,
    primary_causes,
    read_scores,
    resolve_run_dir,
)

#: Most causes named in a one-line summary of a case.
MAX_CAUSES = 3


def run_scores(
    data: pd.DataFrame | str | os.PathLike[str], runs_dir: str | os.PathLike[str] = RUNS_DIR.default
) -> pd.DataFrame | None:
    """The score rows behind a run argument (None for a frame that names no run directory).

    Args:
        data: A run directory or run id, or a frame from :func:`evalkit.read_run` (its
            ``attrs["run_dir"]``).
        runs_dir: Where run ids are looked up.

    Returns:
        The run's ``scores.parquet`` rows, or None when there is no run to read them from.
    """
    if isinstance(data, pd.DataFrame):
        run_dir = data.attrs.get("run_dir")
        if not run_dir:
            return None
    else:
        run_dir = resolve_run_dir(data, runs_dir)
    return read_scores(run_dir)


def case_reasons(
    rows: pd.DataFrame,
    scores: pd.DataFrame | None,
    units: Sequence[str],
    causes: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Each unit's trials, failures, failures by primary cause and one example reason.

    Args:
        rows: Result rows of one side.
        scores: Its score rows, or None (every failure then reads "no reasons recorded").
        units: Columns naming a unit (``case_id`` and, where present, ``condition``,
            ``provider``, ``lane``).
        causes: The primary cause of each failing row of ``rows``, in order, when the caller
            has them already; None: computed here.

    Returns:
        One row per unit: the unit columns, ``trials``, ``failing``, ``causes`` (``{cause:
        failing trials}``, most frequent first) and ``example`` (the reason line of a
        failing trial of the most frequent cause, or None when nothing failed).
    """
    units = [u for u in units if u in rows.columns]
    passed = rows["passed"].fillna(False).astype(bool)
    out = rows.groupby(units, sort=False, dropna=False).size().rename("trials").reset_index()
    failed = rows[~passed].reset_index(drop=True)
    if failed.empty:
        out["failing"] = 0
        out["causes"] = pd.Series([{} for _ in range(len(out))], index=out.index, dtype=object)
        out["example"] = None
        return out
    # counting needs only each failure's primary cause; a line is built for one example each
    found = primary_causes(failed, scores).to_numpy() if causes is None else causes
    frame = failed[units].assign(cause=found)
    sizes = frame.groupby([*units, "cause"], sort=False, dropna=False).size()
    counts = sizes.rename("n").reset_index().sort_values(
        [*units, "n", "cause"], ascending=[True] * len(units) + [False, True], kind="stable"
    )
    # one row per unit that failed, in the order of ``counts`` (most frequent cause first)
    grouped = counts.groupby(units, sort=False, dropna=False)
    unit_of = grouped.ngroup().to_numpy()
    causes_of: list[dict[str, int]] = [{} for _ in range(grouped.ngroups)]
    for unit, cause, n in zip(unit_of, counts["cause"].astype(str).to_numpy(dtype=object),
                              counts["n"].to_numpy(), strict=True):
        causes_of[unit][cause] = int(n)
    summary = counts.drop_duplicates(units)[[*units, "cause"]].rename(columns={"cause": "_top"})
    summary = summary.reset_index(drop=True)
    top = frame.merge(summary, on=units, how="left")["_top"].to_numpy(dtype=object)
    examples = failed[frame["cause"].to_numpy(dtype=object) == top].drop_duplicates(units)
    lines = examples[units].assign(example=item_reasons(examples, scores)["reason"].to_numpy())
    summary = summary.assign(
        failing=np.bincount(unit_of, weights=counts["n"].to_numpy()).astype(int),
        causes=pd.Series(causes_of, dtype=object),
    ).merge(lines, on=units, how="left")
    joined = out[units].merge(summary, on=units, how="left")
    out["failing"] = joined["failing"].fillna(0).astype(int).to_numpy()
    out["causes"] = pd.Series(
        [c if isinstance(c, dict) else {} for c in joined["causes"]], index=out.index,
        dtype=object,
    )
    out["example"] = pd.Series(
        [None if e is None or e != e else e for e in joined["example"]], index=out.index,
        dtype=object,
    )
    return out


def causes_text(causes: dict[str, int]) -> str:
    """``"skill not loaded (2), verifier failed (1)"``: a unit's causes on one line."""
    if not causes:
        return ""
    shown = [f"{c} ({n})" for c, n in list(causes.items())[:MAX_CAUSES]]
    rest = sum(list(causes.values())[MAX_CAUSES:])
    return ", ".join(shown) + (f", {rest} other" if rest else "")


def side_line(label: str, record: dict[str, Any] | None) -> str:
    """One side of a case in words: ``"candidate 3/3 failing: verifier failed (3) — ..."``.

    Args:
        label: The side's name.
        record: ``{"trials", "failing", "causes", "example"}``, or None when the side has no
            trial of the case.

    Returns:
        The line.
    """
    if record is None:
        return f"{label}: no trial"
    head = f"{label} {record['failing']}/{record['trials']} failing"
    if not record["failing"]:
        return head
    example = record["example"]
    said = "" if example in (None, NO_REASONS) else f" — {example}"
    return f"{head}: {causes_text(record['causes'])}{said}"


def as_records(
    frame: pd.DataFrame, units: Sequence[str]
) -> dict[tuple[str, ...], dict[str, Any]]:
    """The JSON of each unit's side: ``{unit values as strings: {"trials", "failing", ...}}``.

    Args:
        frame: The output of :func:`case_reasons`.
        units: Its unit columns.

    Returns:
        One ``{"trials", "failing", "causes", "example"}`` per unit.
    """
    units = [u for u in units if u in frame.columns]
    out = {}
    # column by column (``tolist`` gives Python values; a missing one reads as in the frame's
    # records, "None" for pd.NA): building the frame's records is slow
    keys = zip(*(frame[u].tolist() for u in units), strict=True)
    for key, trials, failing, causes, example in zip(
        keys, frame["trials"].tolist(), frame["failing"].tolist(), frame["causes"].tolist(),
        frame["example"].tolist(), strict=True,
    ):
        out[tuple("None" if value is pd.NA else str(value) for value in key)] = {
            "trials": int(trials),
            "failing": int(failing),
            "causes": dict(causes),
            "example": example,
        }
    return out


def compare_reasons(
    cases: pd.DataFrame,
    baseline: pd.DataFrame,
    baseline_scores: pd.DataFrame | None,
    candidate: pd.DataFrame,
    candidate_scores: pd.DataFrame | None,
    *,
    within_run: bool,
    causes: tuple[Sequence[str] | None, Sequence[str] | None] = (None, None),
) -> tuple[dict[str, Any], ...]:
    """The reasons of each row of a comparison's case table, in its order.

    Args:
        cases: The comparison's ``cases`` table.
        baseline: The baseline side's rows (one condition of the run when ``within_run``).
        baseline_scores: Their score rows, or None.
        candidate: The candidate side's rows.
        candidate_scores: Their score rows, or None.
        within_run: Whether the sides are two conditions of one run (the case table's
            ``condition`` then reads ``"B vs A"`` and is not a unit of either side).
        causes: Each side's primary causes of its failing rows, when known (see
            :func:`case_reasons`).

    Returns:
        One ``{"baseline": side, "candidate": side}`` per case row (a side is None when it has
        no trial of the case).
    """
    units = [c for c in ("lane", "case_id", "condition", "provider") if c in cases.columns]
    if within_run and "condition" in units:
        units.remove("condition")
    sides = [
        as_records(case_reasons(rows, scores, units, known), units)
        for rows, scores, known in ((baseline, baseline_scores, causes[0]),
                                    (candidate, candidate_scores, causes[1]))
    ]
    out = []
    for record in cases[units].astype(str).itertuples(index=False):
        key = tuple(record)
        out.append({"baseline": sides[0].get(key), "candidate": sides[1].get(key)})
    return tuple(out)
