"""``compare`` with an anytime-valid interval: looks after rounds of cases, stops when settled."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit._settings import N_RESAMPLES_QUICK, ROUND_CASES
from evalkit.errors import InputError
from evalkit.stats._adaptive import AdaptiveTrials, adaptive_case_estimates
from evalkit.stats._compare import compare_tables
from evalkit.stats._frame import check_positive_int
from evalkit.stats._interval import Interval
from evalkit.stats._options import CompareOptions
from evalkit.stats._paired import PairedComparison
from evalkit.stats._sequential import (
    FUTILE_PLANNED,
    FUTILE_REASONS,
    FUTILITY_BETA,
    SEQUENTIAL_METHOD,
    Look,
    case_order,
    run_looks,
)
from evalkit.stats._sequential_power import check_futility
from evalkit.stats._types import Metric

#: Bootstrap replicates of the fixed-design figures carried along (cases table, sign-flip).
_SIDE_RESAMPLES = N_RESAMPLES_QUICK.default


@dataclass(frozen=True)
class SequentialComparison(PairedComparison):
    """A :class:`PairedComparison` whose overall interval is a confidence sequence.

    ``delta`` and ``verdict`` are those of the last look taken; the other fields (cases table,
    wins, losses, sign-flip test) describe every case observed up to it.

    Attributes:
        looks: Every look taken, in order.
        stopped_at: Cases observed when the comparison settled (None: not settled yet).
        method: The interval's method (the betting confidence sequence).
        order: Case ids in the order they were drawn (the seeded order).
        adaptive: The adaptive-trials design the per-case differences were corrected for
            (``AdaptiveTrials.to_dict()``), or None.
        futility: The planned-effect futility boundary (``plan_effect``, ``beta``,
            ``boundary`` = 1 / beta and the last look's ``wealth``), or None.
        next_step: A run of ``evalkit run --until-verdict`` that stopped unsettled: what
            would settle it (:class:`evalkit.analysis.NextStep` as a dict); None otherwise.
    """

    looks: tuple[Look, ...] = ()
    stopped_at: int | None = None
    method: str = SEQUENTIAL_METHOD
    order: tuple[str, ...] = ()
    adaptive: dict[str, Any] | None = None
    futility: dict[str, Any] | None = None
    next_step: dict[str, Any] | None = None

    @classmethod
    def from_looks(
        cls,
        side: PairedComparison,
        looks: Sequence[Look],
        *,
        note: str,
        confidence: float,
        order: Sequence[str],
        plan_effect: float | None,
        futility_beta: float,
        method: str = SEQUENTIAL_METHOD,
        adaptive: dict[str, Any] | None = None,
    ) -> SequentialComparison:
        """The comparison whose interval and verdict are the last look's.

        Args:
            side: The fixed-design comparison whose other figures are carried along.
            looks: Every look taken, in order (none: an inconclusive comparison).
            note: The verdict's note (:func:`sequential_note`).
            confidence: Level of the confidence sequence.
            order: Case ids in the order they were drawn.
            plan_effect: Planned effect of the futility boundary (None: no such boundary).
            futility_beta: That boundary's error rate.
            method: The interval's method.
            adaptive: The adaptive-trials design, or None.

        Returns:
            The sequential comparison.
        """
        last = looks[-1] if looks else None
        nan = float("nan")
        bounds = (last.estimate, last.ci_low, last.ci_high) if last else (nan, nan, nan)
        return cls(
            **{f.name: getattr(side, f.name) for f in dataclasses.fields(PairedComparison)}
            | {
                "delta": Interval(*bounds, confidence, method),
                "verdict": last.verdict if last else "inconclusive",
                "verdict_note": note,
            },
            looks=tuple(looks),
            stopped_at=last.n_cases if last is not None and last.settled else None,
            method=method,
            order=tuple(order),
            adaptive=adaptive,
            futility=None
            if plan_effect is None
            else {
                "plan_effect": plan_effect,
                "beta": futility_beta,
                "boundary": 1.0 / futility_beta,
                "wealth": last.futility_wealth if last is not None else None,
            },
        )

    @property
    def futile(self) -> bool:
        """True when the last look settled as futile (either futility rule)."""
        return bool(self.looks) and self.looks[-1].reason in FUTILE_REASONS

    def to_dict(self) -> dict[str, Any]:
        """The ``compare`` JSON shape, extended with ``looks``, ``stopped_at`` and ``method``.

        Returns:
            :meth:`PairedComparison.to_dict` plus ``"looks"`` (``[{"n_cases", "estimate",
            "ci_low", "ci_high", "verdict", "settled", "reason"}]``), ``"stopped_at"`` (cases
            at the settling look, or None), ``"method"`` and ``"order"``; with adaptive trials
            also ``"adaptive"`` (the design, its ``bound`` and the ``estimator``); with a
            planned effect also ``"futility"`` and each look's ``"futility_wealth"``;
            ``"next_step"`` is :attr:`next_step`.
        """
        out = super().to_dict()
        out["looks"] = [look.to_dict() for look in self.looks]
        out["stopped_at"] = self.stopped_at
        out["method"] = self.method
        out["order"] = list(self.order)
        if self.adaptive is not None:
            out["adaptive"] = dict(self.adaptive)
        if self.futility is not None:
            out["futility"] = dict(self.futility)
        out["next_step"] = self.next_step  # in place: the key's position is the compare one
        return out


def case_differences(result: PairedComparison) -> pd.Series:
    """Per-case differences of a comparison, stratified by case (conditions averaged).

    Args:
        result: A fixed-design comparison.

    Returns:
        The mean difference of each case, indexed by ``case_id``.
    """
    cases = result.cases
    if cases.empty:
        return pd.Series(dtype=float)
    return cases.groupby("case_id", sort=True)["estimate"].mean()


def _looks_in_order(
    order: Sequence[str], present: pd.Series, look_at: Sequence[int] | None, round_cases: int
) -> tuple[np.ndarray, np.ndarray]:
    """Differences in drawing order and the observation counts at each look."""
    observed = np.array([case in present.index for case in order], dtype=bool)
    differences = np.array([float(present[c]) for c in order if c in present.index])
    prefix = np.cumsum(observed)
    if look_at is None:
        marks = list(range(round_cases, len(order) + 1, round_cases))
        if not marks or marks[-1] != len(order):
            marks.append(len(order))
    else:
        marks = [min(int(m), len(order)) for m in look_at]
    counts = [int(prefix[m - 1]) for m in marks if m >= 1]
    unique = np.array(sorted({c for c in counts if c >= 1}), dtype=int)
    return differences, unique


def sequential_compare_tables(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame | None = None,
    *,
    conditions: Sequence[str] | None = None,
    order: Sequence[str] | None = None,
    look_at: Sequence[int] | None = None,
    round_cases: int = ROUND_CASES.default,
    stop: bool = True,
    plan_cases: int | None = None,
    labels: tuple[str, str] | None = None,
    adaptive: AdaptiveTrials | None = None,
    plan_effect: float | None = None,
    futility_beta: float = FUTILITY_BETA,
    options: CompareOptions | None = None,
) -> SequentialComparison:
    """Anytime-valid paired comparison: the verdict stays valid however often it is looked at.

    Cases are the sampling unit: a case, with all its trials, is one observation (its mean
    difference over trials, averaged over conditions when two runs share several). Cases are
    observed in a random order fixed by ``seed`` (or the given ``order``) and looked at after
    every ``round_cases`` of them (or after the given ``look_at`` numbers of drawn cases). At
    each look the betting confidence sequence of the mean difference and the verdict rule of
    :func:`~evalkit.stats._sequential.sequential_verdict` decide; with ``stop`` the first
    settled look ends the comparison.

    Args:
        baseline: Baseline results (tidy DataFrame).
        candidate: Candidate results; None to compare two conditions of ``baseline``.
        conditions: As for :func:`evalkit.stats.compare_tables`.
        order: Case ids in drawing order (overrides ``seed``); cases absent from the
            results are skipped.
        look_at: Numbers of drawn cases (positions in ``order``) after which to look.
        round_cases: Cases per round when ``look_at`` is not given.
        stop: Stop at the first settled look.
        plan_cases: Number of cases the bets are tuned for (None: no planned size; see
            :func:`~evalkit.stats.confidence_sequence`).
        labels: ``(baseline_label, candidate_label)`` of two tables.
        adaptive: The adaptive-trials design the run followed: the per-case differences are
            then the corrected estimates of :func:`~evalkit.stats.adaptive_case_estimates`
            (two conditions of one table, ``metric="passed"``), in ``[-B, B]``; the cases
            table and the other side figures stay those of ``compare`` on the trials run.
        plan_effect: The planned effect: a look also stops as ``futile-planned`` when the
            futility e-process against "the mean difference is at least ``plan_effect``"
            reaches ``1 / futility_beta`` (None: no such boundary; see
            :func:`~evalkit.stats.run_looks`).
        futility_beta: Error rate of that boundary: with a true difference of at least
            ``plan_effect`` it stops the comparison with probability at most this.
        options: How it decides (:class:`~evalkit.stats.CompareOptions`; None: the
            defaults): ``metric`` (``"passed"`` or ``"score"``, scores in [0, 1]),
            ``threshold``, ``confidence`` (the level of the confidence sequence, uniform over
            looks), ``seed`` (of the drawing order and the side figures), and ``alpha`` and
            ``correction`` of the cases table; its ``n_resamples`` and ``resample_trials``
            are not used: the side figures take 2,000 replicates.

    Returns:
        A :class:`SequentialComparison`; ``.to_dict()`` is the ``compare`` JSON plus
        ``looks``, ``stopped_at``, ``method`` and ``order`` (and ``adaptive``).

    Raises:
        InputError: Bad input, or per-case differences outside [-1, 1] (scores beyond [0, 1]).

    Examples:
        >>> run = pd.DataFrame({
        ...     "case_id": [f"c{i}" for i in range(40)] * 2,
        ...     "condition": ["none"] * 40 + ["preloaded"] * 40,
        ...     "passed": [i % 2 == 0 for i in range(40)] + [True] * 40,
        ... })
        >>> result = sequential_compare_tables(run, conditions=("none", "preloaded"), round_cases=5)
        >>> result.verdict, result.stopped_at
        ('improved', 15)
    """
    round_cases = ROUND_CASES.check(round_cases)
    plan_effect, futility_beta = check_futility(plan_effect, futility_beta)
    if plan_cases is not None:
        plan_cases = check_positive_int(plan_cases, "plan_cases")
    settings = options or CompareOptions()
    metric, confidence, seed = settings.metric, settings.confidence, settings.seed
    side_compare = functools.partial(
        compare_tables,
        conditions=conditions,
        labels=labels,
        options=settings.model_copy(
            update={"n_resamples": _SIDE_RESAMPLES, "resample_trials": False}
        ),
    )
    fixed = side_compare(baseline, candidate)
    bound = 1.0
    if adaptive is None:
        present = case_differences(fixed)
    else:
        present = _adaptive_differences(baseline, candidate, conditions, metric, adaptive)
        bound = adaptive.bound
    if adaptive is None and len(present) and float(np.max(np.abs(present.to_numpy()))) > 1 + 1e-12:
        raise InputError(
            f"sequential compare: the per-case differences of {metric!r} must lie in [-1, 1] "
            "(scores in [0, 1]); rescale the scores to [0, 1]"
        )
    drawn = list(order) if order is not None else case_order(list(present.index), seed)
    differences, counts = _looks_in_order(drawn, present, look_at, round_cases)
    looks = (
        run_looks(
            differences,
            counts,
            threshold=fixed.threshold,
            confidence=confidence,
            stop=stop,
            plan_cases=plan_cases,
            bound=bound,
            plan_effect=plan_effect,
            futility_beta=futility_beta,
        )
        if len(counts)
        else []
    )
    observed = [c for c in drawn if c in present.index][: looks[-1].n_cases if looks else 0]
    side = fixed  # the fixed-design side figures, over the cases observed up to the last look
    if observed and len(observed) < len(present):
        keep = set(observed)
        side = side_compare(
            baseline[baseline["case_id"].isin(keep)],
            None if candidate is None else candidate[candidate["case_id"].isin(keep)],
        )
    last = looks[-1] if looks else None
    return SequentialComparison.from_looks(
        side,
        looks,
        note=sequential_note(last, fixed.threshold, len(present)),
        confidence=confidence,
        order=drawn,
        plan_effect=plan_effect,
        futility_beta=futility_beta,
        adaptive=None
        if adaptive is None
        else {**adaptive.to_dict(), "bound": bound, "estimator": ADAPTIVE_ESTIMATOR},
    )


#: How the per-case differences of a run with adaptive trials are estimated.
ADAPTIVE_ESTIMATOR = "inverse-probability-weighted control variate (two-stage, unbiased)"


def _adaptive_differences(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame | None,
    conditions: Sequence[str] | None,
    metric: Metric,
    design: AdaptiveTrials,
) -> pd.Series:
    """The corrected per-case differences of a two-stage run, indexed by ``case_id``."""
    if candidate is not None or conditions is None or len(conditions) != 2 or metric != "passed":
        raise InputError(
            "adaptive trials: compare two conditions of one run on 'passed' "
            "(pass conditions=(baseline, candidate) and no candidate table)"
        )
    estimates = adaptive_case_estimates(baseline, design, (conditions[0], conditions[1]))
    return estimates.set_index("case_id")["difference"]


def sequential_note(
    last: Look | None, threshold: float, available: int | None, unit: str = "cases"
) -> str:
    """Why the sequential verdict is what it is, in one line.

    Args:
        last: The last look (None: nothing was looked at).
        threshold: The practical threshold.
        available: How many ``unit`` could have been looked at (None: not said).
        unit: What a look counts: ``cases``, or ``pairs`` for an allocated run.
    """
    if last is None:
        return f"no {unit[:-1]} to compare" if unit == "cases" else "no complete round to look at"
    if last.reason == "futile":
        return (
            f"futile after {last.n_cases} {unit}: the confidence sequence excludes every effect "
            f"at or above the threshold of {threshold * 100:g} pp, so 'improved' cannot be "
            f"reached with more {unit}"
        )
    if last.reason == FUTILE_PLANNED:
        return (
            f"futile after {last.n_cases} {unit}: the planned effect is excluded (the futility "
            f"wealth against it reached {last.futility_wealth or 0:.3g})"
        )
    if last.reason:
        return ""
    if last.ci_low > 0:
        looked = f"{last.n_cases} of {available} {unit}" if available is not None else (
            f"{last.n_cases} {unit}")
        return (
            f"the change is clear but its estimate is below the threshold of "
            f"{threshold * 100:g} pp so far ({looked} looked at)"
        )
    return (f"not settled after {last.n_cases} {unit}: the confidence sequence still "
            "includes 0")
