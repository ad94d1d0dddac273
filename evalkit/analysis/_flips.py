"""Flip rates of one run (across trials) or between two runs (``evalkit flips``)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

import pandas as pd

from evalkit._settings import CONFIDENCE, RUNS_DIR
from evalkit.analysis._case_reasons import case_reasons, causes_text, run_scores
from evalkit.analysis._providers import select_providers
from evalkit.results import load_results
from evalkit.stats import FlipRate, flip_rate_between, flip_rate_within


def flips(
    run_a: pd.DataFrame | str | os.PathLike[str],
    run_b: pd.DataFrame | str | os.PathLike[str] | None = None,
    *,
    confidence: float = CONFIDENCE.default,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    providers: str | Sequence[str] | None = None,
) -> FlipRate:
    """Flip rate within a run (``run_b`` None) or between two runs.

    Within a run with k trials, the share of disagreeing trial pairs per (case, condition)
    (and provider and lane, when the run holds several: trials of two providers are never
    paired), pooled, with one row per provider in ``by_provider``; between two runs, the
    share of matched work items (case, condition, provider, trial) whose ``passed`` differs.
    Two independent runs of the same agent disagree on about
    18 % of their items (the demo suite with ``--no-cache`` and seeds 1 and 2): this is the
    noise floor any claimed skill effect has to clear. Pairs whose two sides are one sample
    (cache copies, or a deterministic provider rerun with the same seed) are left out and
    counted in ``reused_items``; when every pair is one, ``flip_rate`` is NaN and ``message``
    says to rerun with ``--no-cache`` and a new ``--seed``.

    Args:
        run_a: A run directory or id, or a tidy DataFrame.
        run_b: A second run to compare against, or None.
        confidence: Confidence level of the interval.
        runs_dir: Where run ids are looked up.
        providers: Keep only these providers (``"P,Q"`` or a sequence; default all).

    Returns:
        A :class:`~evalkit.stats.FlipRate`; ``.to_dict()`` is the ``flips`` JSON.

    Examples:
        >>> df = pd.DataFrame({"case_id": ["a"] * 3 + ["b"] * 3, "condition": "none",
        ...                    "trial": [0, 1, 2] * 2,
        ...                    "passed": [True, True, False, True, True, True]})
        >>> round(flips(df).flip_rate, 3)
        0.333
    """
    a = select_providers(load_results(run_a, runs_dir, what="run_a"), providers, "run_a")
    sides = [(a, run_scores(run_a, runs_dir))]
    if run_b is None:
        result = flip_rate_within(a, confidence=confidence)
    else:
        b = select_providers(load_results(run_b, runs_dir, what="run_b"), providers, "run_b")
        sides.append((b, run_scores(run_b, runs_dir)))
        result = flip_rate_between(a, b, confidence=confidence)
    return dataclasses.replace(result, by_case=_with_causes(result.by_case, sides))


def _with_causes(
    by_case: pd.DataFrame, sides: Sequence[tuple[pd.DataFrame, pd.DataFrame | None]]
) -> pd.DataFrame:
    """``by_case`` with why its failing items failed: ``causes`` and one ``example`` reason.

    The failing items of both runs count (between runs, a flipped item fails on one side).
    """
    if by_case.empty:
        return by_case.assign(causes=pd.Series(dtype=object), example=pd.Series(dtype=object))
    units = [c for c in ("lane", "case_id", "condition", "provider") if c in by_case.columns]
    counted = [case_reasons(rows, scores, units) for rows, scores in sides]
    merged: dict[tuple[str, ...], tuple[dict[str, int], str | None]] = {}
    for frame in counted:
        for record in frame.to_dict("records"):
            key = tuple(str(record[u]) for u in units if u in frame.columns)
            causes, example = merged.get(key, ({}, None))
            causes = {c: causes.get(c, 0) + record["causes"].get(c, 0)
                      for c in {*causes, *record["causes"]}}
            merged[key] = (causes, example or record["example"])
    keys = [tuple(r) for r in by_case[units].astype(str).itertuples(index=False)]
    found = [merged.get(k, ({}, None)) for k in keys]
    return by_case.assign(
        causes=[causes_text(dict(sorted(c.items(), key=lambda x: (-x[1], x[0]))))
                for c, _ in found],
        example=pd.Series([e for _, e in found], index=by_case.index, dtype=object),
    )
