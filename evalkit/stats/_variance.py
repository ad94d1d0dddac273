"""Variance components of a run: the inputs of the power functions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.stats._frame import (
    KEY_COLUMNS,
    as_frame,
    json_ready,
    match_columns,
    only_columns,
)
from evalkit.stats._matrix import build_pairs


class VarianceComponents(NamedTuple):
    """Variance components estimated from a run (inputs of the power functions).

    Attributes:
        baseline_rate: Mean per-case rate of the (baseline) arm.
        var_between: Between-case variance of the true per-case rate, averaged over arms
            (method of moments: variance of case means minus mean within-variance / K,
            floored at 0). NaN with one trial per case (not separable).
        var_within: Mean within-case (trial-to-trial) variance, unbiased (ddof=1), averaged
            over arms. NaN with one trial per case.
        correlation: ``cov(arm means) / var_between``, so that
            ``2 * var_between * (1 - correlation)`` is the between-case variance of the paired
            difference; NaN with a single arm.
        n_cases: Cases (units) used.
        n_trials: Median number of trials per case.
        var_difference: Variance over cases of the paired difference of the arms' case
            means, as measured at the pilot's trials (``n_trials``): the variance a plan at
            those trials needs, whether or not it splits into between and within parts (with
            one trial per case it does not). NaN with a single arm or fewer than two cases.
    """

    baseline_rate: float
    var_between: float
    var_within: float
    correlation: float
    n_cases: int
    n_trials: int
    var_difference: float = float("nan")

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict (NaN → None).

        Returns:
            The fields as a dict.
        """
        return dict(json_ready(self._asdict()))


def _arm_components(matrix: np.ndarray) -> tuple[float, float, np.ndarray]:
    """Method-of-moments (between, within) variances and case means of one arm."""
    counts = np.isfinite(matrix).sum(axis=1)
    means = np.nanmean(matrix, axis=1)
    multi = counts >= 2
    if not multi.any() or len(means) < 2:
        return float("nan"), float("nan"), means
    deviations = np.where(np.isfinite(matrix), matrix - means[:, None], 0.0)
    within_case = (deviations**2).sum(axis=1)[multi] / (counts[multi] - 1)
    within = float(within_case.mean())
    between = float(np.var(means, ddof=1) - np.mean(within_case / counts[multi]))
    return max(between, 0.0), within, means


def estimate_variance_components(
    data: pd.DataFrame,
    candidate: pd.DataFrame | None = None,
    *,
    conditions: Sequence[str] | None = None,
    value: str = "passed",
) -> VarianceComponents:
    """Estimate the inputs of the power functions from an existing run (or a pair of runs).

    - One run and ``conditions=(A, B)``: arms are conditions A and B, matched by case (and
      lane/provider when several) and trial.
    - Two runs: arms are the runs, matched on case and condition (and lane/provider when
      several), as :func:`compare_tables` does.
    - One run alone: a single arm (every case/condition is a unit); the correlation is NaN and
      the power functions then use their default.

    Within-case variances need at least two trials per case; with one trial per case
    ``var_between`` and ``var_within`` are NaN (the total variance cannot be split).

    Args:
        data: The (baseline) run or tidy frame.
        candidate: A second run, or None.
        conditions: Two conditions of ``data`` to use as the arms.
        value: ``"passed"`` or ``"score"``.

    Returns:
        :class:`VarianceComponents`.

    Raises:
        InputError: Bad input or unknown conditions.
    """
    read = (*KEY_COLUMNS, "status", value)  # validation copies no transcripts or timings
    base = as_frame(only_columns(data, read), what="data", value=value)
    arms: list[np.ndarray]
    if candidate is not None or conditions is not None:
        if candidate is not None:
            cand = as_frame(only_columns(candidate, read), what="candidate", value=value)
        else:
            if conditions is None or isinstance(conditions, str) or len(conditions) != 2:
                raise InputError(
                    "`conditions` must name two conditions, e.g. ('none', 'preloaded')."
                )
            first, second = (str(c) for c in conditions)
            available = sorted(base["condition"].unique())
            for name in (first, second):
                if name not in available:
                    raise InputError(
                        f"condition {name!r} is not in the run; available conditions: {available}."
                    )
            cand = base[base["condition"] == second].assign(condition="arm")
            base = base[base["condition"] == first].assign(condition="arm")
        on = match_columns(base, cand)
        pairs = build_pairs(base, cand, on, value)
        arms = [pairs.baseline, pairs.candidate]
    else:
        units = [c for c in ("lane", "case_id", "condition", "provider") if c in base.columns]
        codes = base.groupby(units, sort=True).ngroup().to_numpy()
        trials = base.groupby(units, sort=True).cumcount().to_numpy()
        matrix = np.full((int(codes.max()) + 1, int(trials.max()) + 1), np.nan)
        matrix[codes, trials] = base[value].to_numpy(dtype=float)
        arms = [matrix]
    parts = [_arm_components(arm) for arm in arms]
    between = float(np.mean([p[0] for p in parts]))
    within = float(np.mean([p[1] for p in parts]))
    correlation = float("nan")
    if len(parts) == 2 and len(parts[0][2]) >= 2 and math.isfinite(between) and between > 0:
        covariance = float(np.cov(parts[0][2], parts[1][2], ddof=1)[0, 1])
        correlation = float(np.clip(covariance / between, -1.0, 1.0))
    counts = np.isfinite(arms[0]).sum(axis=1)
    var_difference = float("nan")
    if len(parts) == 2:
        differences = parts[1][2] - parts[0][2]
        differences = differences[np.isfinite(differences)]
        if len(differences) >= 2:
            var_difference = float(np.var(differences, ddof=1))
    return VarianceComponents(
        baseline_rate=float(np.mean(parts[0][2])),
        var_between=between,
        var_within=within,
        correlation=correlation,
        n_cases=len(parts[0][2]),
        n_trials=int(np.median(counts)),
        var_difference=var_difference,
    )
