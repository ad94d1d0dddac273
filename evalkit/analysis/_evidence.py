"""The evidence lane's metrics per condition and their lifts, with case-bootstrap intervals.

Each evidence item carries ``evidence_completeness`` (share of its artifact requirements met,
the manifest counting as one), ``report_completeness`` (share of required sections present)
and ``taxonomy_usage`` (share of its notes using an issue label) as components of
``scores.parquet``. Per (provider, lane, condition) the level is the mean over cases of the
per-case mean over trials (so a case with more trials weighs no more); the contrasts are the
lift metrics' differences of those levels (``realized_lift`` = B - A, ``oracle_lift`` = C - A,
``routing_gap`` = C - B, ``stale_harm`` = D - C), paired by case. Intervals come from one
bootstrap over cases per group (Hesterberg's expanded percentile, as for the lift metrics).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import pandas as pd

from evalkit._lanes import EVIDENCE_METRICS
from evalkit._settings import CONFIDENCE, N_RESAMPLES, RUNS_DIR, SEED
from evalkit.analysis._contrasts import LIFT_CONTRASTS
from evalkit.analysis._resample import CaseResampler
from evalkit.results import read_run, read_scores, resolve_run_dir

#: The columns of an estimate with its interval, closing a row of the lift tables.
INTERVAL_COLUMNS = ("estimate", "ci_low", "ci_high", "n_cases", "confidence", "method")

#: Columns of the evidence table (``LiftResult.evidence``).
EVIDENCE_COLUMNS = ("provider", "lane", "metric", "contrast", "condition", *INTERVAL_COLUMNS)
METHOD = "case-bootstrap"


def with_lane_metrics(
    data: pd.DataFrame | str | os.PathLike[str], runs_dir: str | os.PathLike[str] = RUNS_DIR.default
) -> pd.DataFrame:
    """A run's result table with one column per evidence metric (NaN where not measured).

    Args:
        data: A run directory or run id (its ``scores.parquet`` is read), or a DataFrame
            (returned as it is: it may carry the metric columns itself).
        runs_dir: Where run ids are looked up.

    Returns:
        The result rows, with ``evidence_completeness``, ``report_completeness`` and
        ``taxonomy_usage`` columns.
    """
    if isinstance(data, pd.DataFrame):
        return data
    run_dir = resolve_run_dir(data, runs_dir)
    rows = read_run(run_dir)
    scores = read_scores(run_dir)
    lane = scores[scores["component"].isin(EVIDENCE_METRICS)]
    wide = lane.pivot_table(
        index="item_key", columns="component", values="value", aggfunc="first"
    ).reindex(columns=list(EVIDENCE_METRICS))
    # an errored or timed-out item measured nothing: it has no score rows, and stays NaN
    return rows.merge(wide, left_on="item_key", right_index=True, how="left")


def lane_metric_table(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows that measured ``metric``, with its value as ``score`` (for ``compare``)."""
    if metric not in frame.columns:
        return frame.iloc[0:0].assign(score=pd.Series(dtype=float))
    measured = frame[frame[metric].notna()]
    return measured.assign(score=measured[metric].astype(float))


def evidence_metrics(
    frame: pd.DataFrame,
    roles: Mapping[str, str],
    *,
    n_resamples: int = N_RESAMPLES.default,
    confidence: float = CONFIDENCE.default,
    seed: int | None = SEED.default,
) -> pd.DataFrame:
    """Levels per condition and contrasts between roles of every evidence metric.

    Args:
        frame: Result rows with the metric columns (:func:`with_lane_metrics`).
        roles: ``{role: condition}`` for A, B, C and D.
        n_resamples: Bootstrap replicates.
        confidence: Confidence level.
        seed: Bootstrap seed.

    Returns:
        One row per (provider, lane, metric, contrast, condition): ``contrast`` is ``level``
        (``condition`` names it) or a lift name (``condition`` reads ``"preloaded - none"``).
        Empty when no item measured an evidence metric.
    """
    present = [m for m in EVIDENCE_METRICS if m in frame.columns and frame[m].notna().any()]
    out: list[dict[str, object]] = []
    if not present:
        return pd.DataFrame(out, columns=list(EVIDENCE_COLUMNS))

    frame = frame.assign(
        provider=frame["provider"].astype(str) if "provider" in frame else "unknown",
        lane=frame["lane"].astype(str) if "lane" in frame else "evidence",
    )
    for index, ((provider, lane), group) in enumerate(
        frame.groupby(["provider", "lane"], sort=True)
    ):
        for metric in present:
            measured = group[group[metric].notna()]
            if measured.empty:
                continue
            per_case = measured.pivot_table(
                index="case_id", columns="condition", values=metric, aggfunc="mean",
                observed=True,
            ).astype(float)
            group_seed = None if seed is None else seed + index
            resampler = CaseResampler(len(per_case), n_resamples, group_seed)
            keys = {"provider": str(provider), "lane": str(lane), "metric": metric}

            conditions = [c for c in dict.fromkeys(roles.values()) if c in per_case.columns]
            conditions += [c for c in per_case.columns if c not in conditions]
            for condition in conditions:
                values = per_case[condition].to_numpy(float)
                out.append(_row(resampler, keys, "level", str(condition), values, confidence))
            for contrast, (hi, lo) in LIFT_CONTRASTS.items():
                a, b = roles.get(hi), roles.get(lo)
                if a in per_case.columns and b in per_case.columns:
                    delta = per_case[a].to_numpy(float) - per_case[b].to_numpy(float)
                    label = f"{a} - {b}"
                    out.append(_row(resampler, keys, contrast, label, delta, confidence))
    return pd.DataFrame(out, columns=list(EVIDENCE_COLUMNS))


def _row(
    resampler: CaseResampler,
    keys: Mapping[str, str],
    contrast: str,
    label: str,
    values: np.ndarray,
    confidence: float,
) -> dict[str, object]:
    """One row: the mean over cases that have a value, with its bootstrap interval."""
    mask = ~np.isnan(values)
    interval, used = resampler.ratio(
        np.where(mask, values, 0.0), mask.astype(float), confidence, METHOD
    )
    return {**keys, "contrast": contrast, "condition": label, "estimate": interval.estimate,
            "ci_low": interval.ci_low, "ci_high": interval.ci_high, "n_cases": used,
            "confidence": interval.confidence, "method": METHOD}
