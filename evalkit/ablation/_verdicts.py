"""Verdicts per component: the full skill against each ablated copy, paired by case.

For each component the comparison is :func:`evalkit.stats.compare_tables` of two conditions of one
run, the ablated copy as the baseline and the full skill as the candidate, so the estimate is
the component's *contribution*: full minus ablated, the mean over cases of the per-case
difference of pass rates. Its test is the exact sign-flip test over cases (cases are the
units; trials are averaged within a case first).

Family-wise error. With ``m`` components the ``m`` sign-flip p-values go through Holm's step-down
procedure at ``alpha``; a rejected component is *necessary* (estimate > 0: removing it hurts) or
*harmful* (estimate < 0: removing it helps); every other one is *no detectable effect*, stated
with its minimum detectable effect (power 0.8 at the Bonferroni level ``alpha / m``, Holm's
most stringent step; NaN where neither arm varies, so there is nothing to estimate it from),
so "dead weight" is never claimed beyond what the data can show. The intervals are
simultaneous Bonferroni intervals (confidence ``1 - alpha / m``). The cases named inside a
component (where its removal hurt or helped) come from that comparison's own per-case
Fisher tests with Holm across cases at ``alpha / m``.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd

from evalkit._settings import ALPHA, N_RESAMPLES_QUICK, POWER, SEED
from evalkit.errors import InputError
from evalkit.stats import (
    CompareOptions,
    PowerDesign,
    compare_tables,
    estimate_variance_components,
    holm,
    minimum_detectable_effect,
)

ComponentVerdict = Literal["necessary", "harmful", "no detectable effect"]
#: Power at which the minimum detectable effect is stated.
MDE_POWER = POWER.default
#: Columns of :func:`component_verdicts`.
VERDICT_COLUMNS = (
    "component",
    "condition",
    "n_cases",
    "estimate",
    "ci_low",
    "ci_high",
    "confidence",
    "p_value",
    "p_holm",
    "verdict",
    "mde",
    "hurt_cases",
    "helped_cases",
    "method",
)
METHOD = "paired by case: full - ablated; sign-flip test, Holm across components"


def _mde(frame: pd.DataFrame, ablated: str, full: str, n_cases: int, alpha: float) -> float:
    """Minimum detectable |effect| of this comparison at ``alpha`` (two-sided), power 0.8."""
    if n_cases < 2:
        return math.nan
    trials = int(frame.groupby(["case_id", "condition"]).size().median())
    try:
        components = estimate_variance_components(frame, conditions=(ablated, full))
        result = minimum_detectable_effect(
            n_cases,
            max(trials, 1),
            design=PowerDesign.from_components(
                components, alpha=alpha, power=MDE_POWER,
            ), threshold=0.0,
        )
    except InputError:
        return math.nan
    effect = math.nan if result.effect is None else float(result.effect)
    # no variation in either arm gives a zero "MDE", which would claim any effect is seen
    return effect if effect > 1e-9 else math.nan


def component_verdicts(
    frame: pd.DataFrame,
    full: str,
    ablations: dict[str, str],
    *,
    alpha: float = ALPHA.default,
    n_resamples: int = N_RESAMPLES_QUICK.default,
    seed: int | None = SEED.default,
    with_mde: bool = True,
) -> pd.DataFrame:
    """Necessary / harmful / no detectable effect, per component, with family-wise error ``alpha``.

    Args:
        frame: Results with the full skill's condition and each ablation's condition
            (``case_id, condition, trial, passed``, as a run's table).
        full: Condition of the full skill.
        ablations: Component id to the condition of its ablated copy.
        alpha: Family-wise error over the components.
        n_resamples: Bootstrap replicates of each interval.
        seed: Seed of the bootstrap.
        with_mde: Compute each minimum detectable effect (NaN when False: simulations of
            the verdicts' error rates need only the verdicts).

    Returns:
        One row per component: ``component, condition, n_cases, estimate, ci_low, ci_high,
        confidence, p_value, p_holm, verdict, mde, hurt_cases, helped_cases, method``.
        ``estimate`` is full minus ablated (positive: the component helps); ``hurt_cases``
        and ``helped_cases`` are comma-separated case ids where removing the component hurt
        or helped significantly.

    Raises:
        InputError: No component, or a condition absent from ``frame``.
    """
    if not ablations:
        raise InputError("component_verdicts needs at least one ablation")
    if not 0 < alpha < 1:
        raise InputError(f"alpha must lie in (0, 1), but {alpha!r} was passed.")
    m = len(ablations)
    level = alpha / m
    rows = []
    for component, condition in ablations.items():
        pair = frame[frame["condition"].isin((condition, full))]
        result = compare_tables(
            pair,
            conditions=(condition, full),
            options=CompareOptions(
                threshold=0.0, confidence=1 - level, n_resamples=n_resamples, seed=seed,
                alpha=level,
            ),
        )
        cases = result.cases
        rows.append(
            {
                "component": component,
                "condition": condition,
                "n_cases": int(result.n_cases),
                "estimate": float(result.delta.estimate),
                "ci_low": float(result.delta.ci_low),
                "ci_high": float(result.delta.ci_high),
                "confidence": 1 - level,
                "p_value": float(result.sign_flip.pvalue) if result.sign_flip else 1.0,
                "hurt_cases": ",".join(cases.loc[cases["verdict"] == "improved", "case_id"]),
                "helped_cases": ",".join(cases.loc[cases["verdict"] == "regressed", "case_id"]),
                "mde": _mde(pair, condition, full, int(result.n_cases), level)
                if with_mde
                else math.nan,
            }
        )
    out = pd.DataFrame(rows)
    p_holm = holm(out["p_value"].to_numpy())  # = statsmodels multipletests(method="holm")[1]
    reject = p_holm <= alpha
    out["p_holm"] = p_holm
    out["verdict"] = np.where(
        reject & (out["estimate"] > 0),
        "necessary",
        np.where(reject & (out["estimate"] < 0), "harmful", "no detectable effect"),
    )
    out["method"] = METHOD
    return out.loc[:, list(VERDICT_COLUMNS)]
