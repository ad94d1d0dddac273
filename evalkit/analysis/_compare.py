"""``compare``: the library function behind ``evalkit compare`` (runs or tables in)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pandas as pd

from evalkit._lanes import EVIDENCE_METRICS
from evalkit._settings import (
    ALPHA,
    CASE_CORRECTION,
    CONFIDENCE,
    CORRECTION,
    N_RESAMPLES,
    RUNS_DIR,
    SEED,
    THRESHOLD,
)
from evalkit.analysis._calibration import check_judge_calibration, judged_run
from evalkit.analysis._case_reasons import compare_reasons, run_scores
from evalkit.analysis._compare_causes import compare_cause_changes
from evalkit.analysis._compare_metrics import compare_report_metrics
from evalkit.analysis._evidence import lane_metric_table, with_lane_metrics
from evalkit.analysis._next_step import next_step, run_command_line, run_suite_path
from evalkit.analysis._providers import select_providers
from evalkit.analysis._run_comparison import RunComparison
from evalkit.errors import InputError
from evalkit.results import (
    errored_conditions,
    load_results,
    primary_causes,
    run_label,
)
from evalkit.stats import (
    CompareOptions,
    Correction,
    Metric,
    PairedComparison,
    compare_tables,
)


def refuse_errored(compared: pd.DataFrame, label: str) -> None:
    """Refuse to compare a condition that has only errors: its 0 % measured nothing.

    Args:
        compared: The run's compared rows (:func:`compared_rows`).
        label: The run's name in the message.
    """
    errored = errored_conditions(compared) if "condition" in compared else {}
    if errored:
        said = "; ".join(
            f"condition '{name}' has only errors ({r.items} items; {r.error_class} x{r.count}: "
            f"{r.message})"
            for name, r in errored.items()
        )
        raise InputError(
            f"compare: run '{label}': {said}; there is nothing to compare: fix the cause "
            "(see evalkit run's message) and run it again"
        )


def compare(
    baseline: pd.DataFrame | str | os.PathLike[str],
    candidate: pd.DataFrame | str | os.PathLike[str] | None = None,
    *,
    conditions: Sequence[str] | None = None,
    metric: Metric | str = "passed",
    threshold: float = THRESHOLD.default,
    confidence: float = CONFIDENCE.default,
    n_resamples: int = N_RESAMPLES.default,
    seed: int | None = SEED.default,
    alpha: float = ALPHA.default,
    correction: Correction = CORRECTION.default,
    case_correction: Correction = CASE_CORRECTION.default,
    resample_trials: bool = False,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    providers: str | Sequence[str] | None = None,
) -> RunComparison:
    """Did the candidate do better, worse, or can we not tell yet? (``evalkit compare``).

    Two runs are matched on ``case_id`` and ``condition`` (plus ``provider`` or ``lane`` when
    either run holds several of them), and trials line up by ``trial``; the result is labelled
    with the two run ids. With ``candidate=None`` and ``conditions=(A, B)``, two conditions of
    one run are compared instead (labels ``A`` and ``B``; every case's ``condition`` reads
    ``"B vs A"``). The statistics are those of :func:`evalkit.stats.compare_tables`, which this
    function calls on the runs' tables: between two runs one comparison per condition
    (``by_condition``) and, with several conditions, overall figures stratified by case; item
    pairs whose two sides are one sample (cache copies, or a deterministic provider rerun with
    the same seed) are left out and counted in ``reused_items``.

    Args:
        baseline: Baseline run (directory or run id) or tidy DataFrame.
        candidate: Candidate run or DataFrame; None to compare two conditions of ``baseline``.
        conditions: ``(baseline_condition, candidate_condition)`` for one run, or a filter on
            conditions for two runs.
        metric: ``"passed"`` (pass rate), ``"score"``, or an evidence-lane metric
            (``evidence_completeness``, ``report_completeness``, ``taxonomy_usage``): the
            items that measured it are compared on its value, like ``score``.
        threshold: Practical threshold for "improved" (default 0.05: 5 pp, or 0.05 of score).
        confidence: Confidence level.
        n_resamples: Bootstrap replicates.
        seed: Seed (same seed, same result).
        alpha: Per-case significance level after correction.
        correction: Multiplicity correction across cases (``"holm"`` or ``"fdr_bh"``, ...).
        case_correction: Correction across the pooled case rows (``"fdr_bh"``, ``"fdr_by"``
            or ``"holm"``).
        resample_trials: Two-stage bootstrap with trial resampling (conservative).
        runs_dir: Where run ids are looked up.
        providers: Keep only these providers (``"P,Q"`` or a sequence; default all). With
            several providers every provider gets its own verdict (``by_provider``, a
            direction only when its p Holm-adjusted across the providers is below alpha)
            and the overall figures are pooled over providers, clustered by case.

    Returns:
        A :class:`~evalkit.analysis.RunComparison`: the statistics' result
        (:class:`~evalkit.stats.PairedComparison`, whose figures it reads through) with what
        the runs add: why each case's trials failed, the failures by cause, the report's
        further metrics, the judge's calibration, the ungraded items and, when inconclusive,
        the next step. ``.to_dict()`` is the ``evalkit compare --json`` object.

    Raises:
        RunNotFoundError: A run does not exist.
        InputError: Bad input, unknown conditions, nothing to match, or a compared condition
            whose every item ended in an error (it measured nothing: the message names the
            run, the condition and the dominant error).

    Examples:
        >>> before = pd.DataFrame({
        ...     "run_id": "r1",
        ...     "case_id": list("abcdefghijkl"),
        ...     "condition": "none",
        ...     "passed": [False, True] * 6,
        ... })
        >>> after = before.assign(run_id="r2", passed=True)
        >>> result = compare(before, after, n_resamples=2000)
        >>> result.verdict, result.baseline_label, result.candidate_label
        ('improved', 'r1', 'r2')
    """
    lane_metric = metric if metric in EVIDENCE_METRICS else None
    settings = CompareOptions(  # the one place the comparison's options are built
        metric="score" if lane_metric is not None else metric,  # a lane metric is a score
        threshold=threshold,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        alpha=alpha,
        correction=correction,
        case_correction=case_correction,
        resample_trials=resample_trials,
    )
    base = load_results(baseline, runs_dir, what="baseline")  # bad input: InputError first
    base_label = run_label(baseline, runs_dir) or "baseline"
    base = select_providers(base, providers, base_label)
    # each run's compared rows, filtered once (the tables hold every column of every item)
    base_rows = compared_rows(base, conditions)
    refuse_errored(base_rows, base_label)
    if lane_metric is not None:
        base = _lane_rows(baseline, runs_dir, lane_metric, "baseline")
        base = select_providers(base, providers, base_label)
        base_rows = compared_rows(base, conditions)
    labels = None
    cand = cand_rows = None
    if candidate is not None:
        cand = load_results(candidate, runs_dir, what="candidate")
        labels = (base_label, run_label(candidate, runs_dir) or "candidate")
        if lane_metric is not None:
            cand = _lane_rows(candidate, runs_dir, lane_metric, "candidate")
        cand = select_providers(cand, providers, labels[1])
        cand_rows = compared_rows(cand, conditions)
        refuse_errored(cand_rows, labels[1])
    result = compare_tables(base, cand, conditions=conditions, options=settings, labels=labels)
    compared = [judged_run(baseline, base_rows, base_label, runs_dir)]
    if candidate is not None and labels is not None and cand_rows is not None:
        compared.append(judged_run(candidate, cand_rows, labels[1], runs_dir))
    ungraded = sum(_ungraded(rows) for rows in (base_rows, cand_rows) if rows is not None)
    made_by = candidate if candidate is not None else baseline
    step = next_step(result, base, cand, suite_path=run_suite_path(made_by, runs_dir),
                     command_line=run_command_line(made_by, runs_dir))
    sides = _sides(base_rows, cand_rows, conditions)
    reasons, changes = _reasons(result, baseline, candidate, sides, runs_dir)
    check = check_judge_calibration(compared)
    return RunComparison(
        result,
        lane_metric=lane_metric,  # compared as a score; labelled with the lane metric it is
        ungraded_items=ungraded,
        ungraded_note=_ungraded_note(ungraded),
        next_step=None if step is None else step.to_dict(),
        case_reasons=reasons,
        failure_changes=changes,
        report_metrics=compare_report_metrics(result, *sides),
        judge_calibration=None if check is None else check.to_dict(),
        options=settings,
    )


def _ungraded_note(ungraded: int) -> str:
    """Why ``ungraded`` compared items are left out ("" when there are none)."""
    if not ungraded:
        return ""
    return (
        f"{ungraded} item(s) left out as missing evidence: their judged expectations were "
        "not graded (the offline simulated judge has no known truth for them), so they "
        "neither pass nor fail; grade them with `evalkit judge RUN --judge-provider NAME` "
        "and compare the judged runs"
    )


def _reasons(
    result: PairedComparison,
    baseline: pd.DataFrame | str | os.PathLike[str],
    candidate: pd.DataFrame | str | os.PathLike[str] | None,
    sides: tuple[pd.DataFrame, pd.DataFrame],
    runs_dir: str | os.PathLike[str],
) -> tuple[tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
    """Why each compared case failed on each side, and the sides' failures by cause.

    See :func:`compare_reasons` and :func:`compare_cause_changes`.
    """
    base_scores = run_scores(baseline, runs_dir)
    cand_scores = base_scores if candidate is None else run_scores(candidate, runs_dir)
    both = (sides[0], base_scores, sides[1], cand_scores)
    # each side's failing rows' primary causes, found once for both tables
    causes = (_failing_causes(sides[0], base_scores), _failing_causes(sides[1], cand_scores))
    return (compare_reasons(result.cases, *both, within_run=candidate is None, causes=causes),
            compare_cause_changes(*both, causes=causes))


def _sides(
    base_rows: pd.DataFrame, cand_rows: pd.DataFrame | None, conditions: Sequence[str] | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The compared rows of each side (two conditions of one run: each condition's rows).

    Args:
        base_rows: The baseline run's compared rows (:func:`compared_rows`).
        cand_rows: The candidate run's, or None for two conditions of the baseline run.
        conditions: The compared conditions.
    """
    if cand_rows is None:
        first, second = (conditions or ("", ""))[:2]
        condition = base_rows["condition"]
        return base_rows[condition == first], base_rows[condition == second]
    return base_rows, cand_rows


def _failing_causes(rows: pd.DataFrame, scores: pd.DataFrame | None) -> list[str]:
    """The primary cause of each failing row of ``rows``, in order."""
    passed = rows["passed"].fillna(False).astype(bool) if "passed" in rows else None
    failed = rows if passed is None else rows[~passed]
    return [str(c) for c in primary_causes(failed, scores).to_numpy()] if len(failed) else []


def _ungraded(compared: pd.DataFrame) -> int:
    if "status" not in compared.columns:
        return 0
    return int((compared["status"].astype(str) == "ungraded").sum())


def _lane_rows(
    data: pd.DataFrame | str | os.PathLike[str],
    runs_dir: str | os.PathLike[str],
    metric: str,
    what: str,
) -> pd.DataFrame:
    rows = lane_metric_table(with_lane_metrics(data, runs_dir), metric)
    if rows.empty:
        raise InputError(
            f"compare: the {what} has no item that measured '{metric}' (an evidence-lane "
            "metric: only evidence cases that declare it have it); compare --metric passed"
        )
    return rows


def compared_rows(rows: pd.DataFrame, conditions: Sequence[str] | None) -> pd.DataFrame:
    """The rows of ``conditions`` (all rows without a filter or a ``condition`` column)."""
    if not conditions or "condition" not in rows.columns:
        return rows
    return rows[rows["condition"].isin(list(conditions))]
