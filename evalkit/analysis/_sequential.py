"""Sequential comparisons of finished runs (``evalkit compare --sequential``), and their cost.

A run of ``evalkit run --until-verdict`` (:mod:`evalkit.sequential`) is read back with the
design its manifest records (``sequential``: drawing order, rounds, threshold, level, tuning,
adaptive trials, futility boundary), so the looks are those the run took; any other run, or
two runs, are looked at in a seeded order. :func:`agent_cost` is what the runs' looks and
their reports charge for a set of result rows.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pandas as pd

from evalkit._settings import ROUND_CASES, RUNS_DIR
from evalkit.analysis._compare import compared_rows, refuse_errored
from evalkit.results import (
    SequentialRecord,
    load_manifest,
    load_results,
    resolve_run_dir,
    run_label,
)
from evalkit.stats import (
    FUTILITY_BETA,
    AdaptiveTrials,
    CompareOptions,
    NeymanAllocation,
    SequentialComparison,
    allocated_compare_tables,
    sequential_compare_tables,
)


def agent_cost(rows: pd.DataFrame) -> float | None:
    """Agent cost spent on result rows: outcomes copied from the cache cost nothing again.

    Args:
        rows: Result rows (``cost_usd``, ``cache_hit``).

    Returns:
        The summed ``cost_usd`` of the rows not copied from the cache, or None when no row
        reports a cost.

    Examples:
        >>> agent_cost(pd.DataFrame({"cost_usd": [0.5, 0.25], "cache_hit": [False, True]}))
        0.5
    """
    if "cost_usd" not in rows or rows["cost_usd"].isna().all():
        return None
    fresh = rows if "cache_hit" not in rows else rows[~rows["cache_hit"].fillna(False)]
    return float(fresh["cost_usd"].fillna(0.0).sum())


def _design(record: SequentialRecord) -> AdaptiveTrials | None:
    """The adaptive-trials design of a sequential record (None: every case runs every trial)."""
    if record.adaptive is None:
        return None
    return AdaptiveTrials(
        total_trials=record.adaptive.total_trials,
        first_trials=record.adaptive.first_trials,
        probability=record.adaptive.probability,
        seed=record.adaptive.seed,
    )


def _futility_settings(record: SequentialRecord) -> dict[str, Any]:
    """The ``plan_effect`` and ``futility_beta`` arguments of a sequential record."""
    if record.plan_effect is None:
        return {}
    beta = FUTILITY_BETA if record.futility_beta is None else record.futility_beta
    return {"plan_effect": record.plan_effect, "futility_beta": beta}


def sequential_compare(
    baseline: pd.DataFrame | str | os.PathLike[str],
    candidate: pd.DataFrame | str | os.PathLike[str] | None = None,
    *,
    conditions: Sequence[str] | None = None,
    options: CompareOptions | None = None,
    round_cases: int = ROUND_CASES.default,
    plan_cases: int | None = None,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    plan_effect: float | None = None,
    futility_beta: float | None = None,
) -> SequentialComparison:
    """Anytime-valid ``compare`` of runs (``evalkit compare --sequential``).

    A run made by ``evalkit run --until-verdict`` is read with its own design: the drawing
    order, the rounds, the threshold, the level, the tuning and the planned-effect futility
    boundary of its manifest's ``sequential`` record (so the looks are those the run took).
    Any other run, or two runs, are looked at after every ``round_cases`` cases in the order
    fixed by ``seed``.

    Args:
        baseline: Baseline run (directory or run id) or tidy DataFrame.
        candidate: Candidate run or DataFrame; None to compare two conditions of ``baseline``.
        conditions: As for :func:`evalkit.compare`.
        options: How it decides (:class:`~evalkit.stats.CompareOptions`, None: the
            defaults): ``metric`` (``"passed"`` or ``"score"``, scores in [0, 1]),
            ``threshold`` and ``confidence`` (the level of the confidence sequence; each
            left unset takes the run's recorded one), ``seed`` (the drawing order of a run
            without a sequential record).
        round_cases: Cases per round of a run without a sequential record.
        plan_cases: Cases the bets are tuned for (default: the run's, else untuned).
        runs_dir: Where run ids are looked up.
        plan_effect: Planned effect of the futility boundary (default: the run's, else none).
        futility_beta: Its ``beta`` (default: the run's, else 0.2).

    Returns:
        A :class:`~evalkit.stats.SequentialComparison`.

    Raises:
        InputError: Bad input, or a compared condition with only errors.
    """
    given = options or CompareOptions()
    record = None
    if candidate is None and not isinstance(baseline, pd.DataFrame):
        manifest = load_manifest(resolve_run_dir(baseline, runs_dir))
        record = manifest.sequential if manifest is not None else None
    base = load_results(baseline, runs_dir, what="baseline")
    refuse_errored(compared_rows(base, conditions), run_label(baseline, runs_dir) or "baseline")
    cand = None
    labels = None
    if candidate is not None:
        cand = load_results(candidate, runs_dir, what="candidate")
        labels = (
            run_label(baseline, runs_dir) or "baseline",
            run_label(candidate, runs_dir) or "candidate",
        )
        refuse_errored(compared_rows(cand, conditions), labels[1])
    if record is not None and conditions is None:
        conditions = (record.baseline, record.candidate)
    if record is not None and record.allocation is not None and tuple(conditions or ()) == (
        record.baseline,
        record.candidate,
    ):
        return allocated_compare_tables(
            base,
            record.order,
            (record.baseline, record.candidate),
            NeymanAllocation(**record.allocation.model_dump()),
            options=_recorded(CompareOptions(), given, record),
            plan_pairs=record.plan_cases if plan_cases is None else plan_cases,
            max_rounds=len(record.looks) or None,
            **(
                _futility_settings(record)
                | _given_futility(plan_effect, futility_beta, record.futility_beta)
            ),
        )
    if record is not None and tuple(conditions or ()) == (record.baseline, record.candidate):
        return sequential_compare_tables(
            base,
            conditions=conditions,
            options=_recorded(CompareOptions(metric=given.metric), given, record),
            order=record.order,
            look_at=[look.round * record.round_cases for look in record.looks] or None,
            round_cases=record.round_cases,
            plan_cases=record.plan_cases if plan_cases is None else plan_cases,
            adaptive=_design(record),
            **(
                _futility_settings(record)
                | _given_futility(plan_effect, futility_beta, record.futility_beta)
            ),
        )
    return sequential_compare_tables(
        base,
        cand,
        conditions=conditions,
        options=given,
        round_cases=round_cases,
        plan_cases=plan_cases,
        labels=labels,
        **_given_futility(plan_effect, futility_beta, None),
    )


def _recorded(
    options: CompareOptions, given: CompareOptions, record: SequentialRecord
) -> CompareOptions:
    """``options`` with the threshold and level ``given`` set, else the run's recorded ones.

    A recorded run is read with its own drawing order, so the seed of ``given`` is not used
    (nor, for an allocated run, whose fixed figures are those of pass rates, its metric).
    """
    recorded = {"threshold": record.threshold, "confidence": record.confidence}
    return options.model_copy(update={
        name: getattr(given, name) if name in given.model_fields_set else value
        for name, value in recorded.items()
    })


def _given_futility(
    plan_effect: float | None, futility_beta: float | None, recorded_beta: float | None
) -> dict[str, Any]:
    """Futility arguments given explicitly (they replace a run's recorded ones)."""
    out: dict[str, Any] = {}
    if plan_effect is not None:
        out["plan_effect"] = plan_effect
        beta = futility_beta if futility_beta is not None else recorded_beta
        out["futility_beta"] = FUTILITY_BETA if beta is None else beta
    elif futility_beta is not None:
        out["futility_beta"] = futility_beta
    return out
