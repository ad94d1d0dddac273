"""Pooled rates across conditions whose providers or cases differ: the Simpson's-paradox guard.

A per-condition pass rate pools every (provider, case) cell the condition ran. When the
conditions did not run the same cells (on a leaderboard, six harnesses ran model A and two ran
model B), the pooled rates compare different mixes: model A's 36 % averages weak and strong
harnesses, model B's 49 % only the two that ran it, and the gap (+13 pp) says little about the
models, whose paired difference over the harnesses that ran both is +6 pp. This module finds
the cells every condition shares, gives each condition's rate over them beside its pooled
rate, and says in one sentence why they differ.

Both rates weigh a case's providers alike, as ``compare`` does: a cell's rate is the mean of
its trials, a case's rate the mean of its cells (its providers), and a condition's rate the
mean over cases (a case within a lane is one case). So a provider that ran 10 trials of a
case weighs no more than one that ran 2, and the gap of the matched rates of two conditions
is the figure ``compare RUN --conditions A,B`` prints (to rounding). The interval is the
clustered Wilson interval of those case rates (:func:`~evalkit.stats.cluster_wilson`; the
pooled Wilson interval when every case has a single trial).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalkit._percent import percent
from evalkit._settings import CONFIDENCE
from evalkit.stats._frame import as_frame
from evalkit.stats._interval import Interval
from evalkit.stats._proportions import cluster_wilson, proportion_ci

#: Columns that, with ``case_id``, make one cell of a run when present.
CELL_COLUMNS = ("lane", "provider", "case_id")


@dataclass(frozen=True)
class MatchedRates:
    """Each condition's pooled rate beside its rate over the cells every condition shares.

    Attributes:
        table: One row per condition: ``condition, cells, estimate, ci_low, ci_high`` (the
            pooled rate over the condition's own cells) and ``matched_cells,
            matched_estimate, matched_ci_low, matched_ci_high`` (over the shared cells).
        balanced: Every condition ran the same cells (the pooled rates are the matched ones).
        warning: One sentence saying how the conditions' cells differ and which figure to
            read ("" when balanced).
    """

    table: pd.DataFrame
    balanced: bool
    warning: str


def matched_rates(
    rows: pd.DataFrame,
    *,
    conditions: Sequence[str] | None = None,
    confidence: float = CONFIDENCE.default,
) -> MatchedRates:
    """Per-condition pass rates, pooled and over the cells every condition ran.

    Args:
        rows: Result rows (``case_id, condition, passed``; ``provider`` and ``lane`` when
            present make the cells finer).
        conditions: The conditions to set side by side (default: every condition there).
        confidence: Level of the intervals (:func:`~evalkit.stats.pass_rates`).

    Returns:
        The :class:`MatchedRates`.
    """
    cells = [c for c in CELL_COLUMNS if c in rows.columns]
    if conditions is not None:
        rows = rows[rows["condition"].isin(list(conditions))]
    rows = as_frame(rows, required=[*cells, "condition"])  # skipped out, errors fail
    cell = rows.groupby(cells, sort=False, observed=True, dropna=False).ngroup()
    present = pd.crosstab(cell, rows["condition"].astype(str)) > 0  # cells x conditions
    shared = present.index[present.all(axis=1)]
    counts = present.sum(axis=0)
    balanced = bool(present.to_numpy().all())
    pooled = case_weighted_rates(rows, confidence)
    matched_rows = rows[cell.isin(shared).to_numpy()]
    table = pooled[["condition", "estimate", "ci_low", "ci_high"]].copy()
    table.insert(
        1, "cells", table["condition"].astype(str).map(counts).fillna(0).astype("int64")
    )
    if matched_rows.empty:
        table["matched_cells"] = 0
        for column in ("matched_estimate", "matched_ci_low", "matched_ci_high"):
            table[column] = float("nan")
    else:
        matched = case_weighted_rates(matched_rows, confidence)
        matched = matched.set_index(matched["condition"].astype(str))
        name = table["condition"].astype(str)
        table["matched_cells"] = len(shared)
        table["matched_estimate"] = name.map(matched["estimate"])
        table["matched_ci_low"] = name.map(matched["ci_low"])
        table["matched_ci_high"] = name.map(matched["ci_high"])
    warning = "" if balanced else _warning(rows, table, counts, len(shared))
    return MatchedRates(table.reset_index(drop=True), balanced, warning)


def case_weighted_rates(rows: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Each condition's rate with a case's providers weighed alike (see the module docstring).

    Args:
        rows: Validated result rows (``case_id, condition, passed``; ``provider`` and
            ``lane`` when present).
        confidence: Level of the intervals.

    Returns:
        One row per condition (sorted): ``condition, n_cases, n, estimate, ci_low, ci_high``.

    Examples:
        >>> rows = pd.DataFrame({"case_id": ["a"] * 4 + ["b"] * 2, "condition": "x",
        ...                      "provider": ["p", "p", "p", "q", "p", "q"],
        ...                      "passed": [True, True, True, False, False, False]})
        >>> float(case_weighted_rates(rows, 0.95)["estimate"].iloc[0])  # ((1 + 0) / 2 + 0) / 2
        0.25
    """
    cells = [c for c in CELL_COLUMNS if c in rows.columns]
    cases = [c for c in ("lane", "case_id") if c in rows.columns]
    values = rows.assign(passed=rows["passed"].astype(float))
    per_cell = values.groupby(["condition", *cells], sort=True, observed=True, dropna=False)[
        "passed"
    ].agg(["mean", "size"])
    per_case = per_cell.groupby(["condition", *cases], sort=True, observed=True,
                                dropna=False).agg(rate=("mean", "mean"), n=("size", "sum"))
    out = []
    for condition, group in per_case.groupby(level="condition", sort=True):
        rates, n = group["rate"].to_numpy(dtype=float), int(group["n"].sum())
        interval: Interval = (
            proportion_ci(float(np.mean(rates)) * n, n, confidence, "wilson")
            if n == len(rates)
            else cluster_wilson(rates, n, confidence)
        )
        out.append({"condition": condition, "n_cases": len(rates), "n": n,
                    "estimate": float(np.mean(rates)), "ci_low": interval.ci_low,
                    "ci_high": interval.ci_high})
    return pd.DataFrame(out, columns=["condition", "n_cases", "n", "estimate", "ci_low",
                                      "ci_high"])


def _warning(rows: pd.DataFrame, table: pd.DataFrame, counts: pd.Series, shared: int) -> str:
    """How the conditions' cells differ, the two gaps, and what to read."""
    differs = []
    if "provider" in rows:
        providers = rows.groupby(rows["condition"].astype(str))["provider"].agg(
            lambda s: sorted({str(v) for v in s if pd.notna(v)})
        )
        if len({tuple(p) for p in providers}) > 1:
            differs.append("; ".join(
                f"{name} {len(p)} provider(s)" + (f" ({', '.join(p)})" if len(p) <= 3 else "")
                for name, p in providers.items()
            ))
    cases = rows.groupby(rows["condition"].astype(str))["case_id"].nunique()
    if cases.nunique() > 1:
        differs.append("; ".join(f"{name} {n} cases" for name, n in cases.items()))
    what = ", ".join(differs) or "; ".join(f"{name} {n} cells" for name, n in counts.items())
    text = (
        f"The conditions did not run the same cells ({what}), so their pooled rates compare "
        "different mixes of providers and cases (Simpson's paradox)"
    )
    if len(table) == 2 and shared:
        first, second = table.iloc[0], table.iloc[1]
        pooled_gap = percent(second["estimate"] - first["estimate"])
        matched_gap = percent(second["matched_estimate"] - first["matched_estimate"])
        text += (
            f": {second['condition']} minus {first['condition']} is {pooled_gap:+.1f} pp "
            f"pooled but {matched_gap:+.1f} pp over the {shared:,} cells both ran"
        )
    if not shared:
        return text + "; no cell was run under every condition, so no rate is comparable."
    return (
        text + ". Read the matched rates; `evalkit compare RUN --conditions A,B` pairs them "
        "case by case with an interval."
    )
