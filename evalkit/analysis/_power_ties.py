"""``evalkit power --equivalence --from-run`` on a pilot whose every pair tied.

A pilot in which every aligned pair of trials ties (a harmless edit, or a saturated
comparison: every item passes in both conditions) measures no variance at all, so the
variance-based plan (:func:`evalkit.stats.equivalence_cases`) would claim that 2 cases at the
pilot's trials suffice, a design whose interval is the exact bound of its few tied pairs
(2 cases at 2 trials: ±60 pp), which cannot show "no practical difference". ``compare``
makes that interval from the number of tied pairs (:mod:`evalkit.stats._ties`), so the plan
is made with the same rule: the fewest tied pairs whose exact bound lies inside the
threshold (:func:`evalkit.stats.tied_pairs_needed`, 72 at ±5 pp and 95 %), as cases at the
trials planned, and as trials at the pilot's cases. It holds if the pairs keep tying; one
pair that differs hands the interval back to the rule over cases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from evalkit._percent import percent
from evalkit.stats import (
    PowerResult,
    VarianceComponents,
    tied_pairs_needed,
    tied_pairs_of as tied_pairs_behind_interval,
)


def pilot_tied_pairs(
    pilot: pd.DataFrame, conditions: Sequence[str] | None, alpha: float
) -> tuple[float, int, int] | None:
    """The pilot's tied pairs, cases and trials per case when the tied-pairs rule made its interval.

    Args:
        pilot: The pilot's rows.
        conditions: Its two conditions compared (None or not two: no pairs to read).
        alpha: 1 - the interval's confidence.

    Returns:
        ``(pairs, cases, trials)``, or None when some pair differs (or no pairs were given).
    """
    if conditions is None or len(conditions) != 2 or "passed" not in pilot:
        return None
    if not _every_pair_ties(pilot, [str(c) for c in conditions]):
        return None  # some pair differs: the rule over cases makes the interval
    from evalkit.analysis._compare import compare

    result = compare(pilot, conditions=list(conditions), alpha=alpha, confidence=1.0 - alpha,
                     metric="passed")
    if "estimate" not in result.cases or result.n_cases < 1:
        return None
    tied = tied_pairs_behind_interval(result.delta, result.cases["estimate"].to_numpy(float))
    if tied is None:
        return None
    kept = pilot[pilot["condition"].astype(str).isin([str(c) for c in conditions])]
    trials = int(kept.groupby(["case_id", "condition"])["trial"].nunique().median())
    return float(tied), int(result.n_cases), max(1, trials)


def tied_equivalence_plan(
    tied: tuple[float, int, int],
    *,
    margin: float,
    trials: int | None,
    effect: float | None,
    alpha: float,
    components: VarianceComponents,
) -> PowerResult:
    """The cases (at ``trials``) whose pairs, if they keep tying, show no practical difference.

    Args:
        tied: ``(pairs, cases, trials)`` of the pilot (:func:`pilot_tied_pairs`).
        margin: The practical threshold.
        trials: Trials per case of the plan (None: the pilot's).
        effect: The true change asked for (a change other than 0 is not a tie: no plan).
        alpha: 1 - the interval's confidence.
        components: The pilot's variance components (reported as measured: no variance).

    Returns:
        The plan: ``n_cases`` at ``n_trials``, ``power`` 1 if the pairs keep tying, and a
        ``note`` giving the rule and the trials at the pilot's cases.
    """
    pairs, cases, pilot_trials = tied
    planned = trials if trials is not None else pilot_trials
    per_case_trial = pairs / (cases * pilot_trials)  # providers x conditions pooled per case
    needed = tied_pairs_needed(margin, 1.0 - alpha)
    common: dict[str, Any] = {"alpha": alpha, "baseline_rate": float(components.baseline_rate),
              "var_between": float(components.var_between),
              "var_within": float(components.var_within),
              "correlation": float(components.correlation), "se": 0.0, "threshold": margin,
              "method": "tied pairs"}
    head = (f"every pair of the pilot tied ({round(pairs)} pairs over {cases} cases), so it "
            "measured no variance and compare's interval is the exact bound of the tied pairs")
    if effect:
        return PowerResult(n_cases=None, n_trials=planned, effect=float(effect), power=0.0,
                           note=f"{head}: it cannot plan for a true change of "
                                f"{percent(effect):+.1f} pp (pairs that differ); plan from "
                                "defaults (no --from-run) or a pilot whose pairs differ",
                           **common)
    n_cases = max(2, math.ceil(needed / (per_case_trial * planned) - 1e-9))
    at_cases = max(1, math.ceil(needed / (per_case_trial * cases) - 1e-9))
    level = f"{(1 - alpha) * 100:g} %"
    note = (f"{head}: {needed} tied pairs put its {level} bound inside ±{margin * 100:g} pp, "
            f"so {n_cases} cases at {planned} trials (or {at_cases} trials at the pilot's "
            f"{cases} cases) show no practical difference if the pairs keep tying (one pair "
            "that differs hands the interval back to the rule over cases)")
    return PowerResult(n_cases=n_cases, n_trials=planned, effect=0.0, power=1.0, note=note,
                       **common)


def _every_pair_ties(pilot: pd.DataFrame, conditions: list[str]) -> bool:
    """Every trial of one condition has a partner in the other with the same outcome."""
    keys = [c for c in ("lane", "case_id", "provider", "trial") if c in pilot]
    sides = [pilot.loc[pilot["condition"].astype(str) == name, [*keys, "passed"]]
             for name in conditions]
    if any(side.empty for side in sides):
        return False
    pairs = sides[0].merge(sides[1], on=keys, suffixes=("_a", "_b"))
    return bool(len(pairs)) and bool(
        (pairs["passed_a"].astype(bool) == pairs["passed_b"].astype(bool)).all()
    )
