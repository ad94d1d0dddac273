"""Planning a sequential comparison by simulation: the settings, the stops and their summary.

:func:`~evalkit.stats.simulate_sequential` (in :mod:`evalkit.stats._sequential_simulation`)
draws the simulated suites and runs them through :func:`simulate_stops`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

import numpy as np

from evalkit._settings import ROUND_CASES
from evalkit.errors import InputError
from evalkit.stats._frame import check_confidence, check_positive_int, json_ready
from evalkit.stats._power import _number
from evalkit.stats._sequential import (
    FUTILE_PLANNED,
    FUTILE_REASONS,
    FUTILITY_BETA,
    SEQUENTIAL_METHOD,
    run_looks,
)
from evalkit.stats._settings import check_threshold


@dataclass(frozen=True)
class SequentialPlan:
    """Cases a sequential comparison needs until its verdict, simulated under Miller's model.

    Attributes:
        effect: True difference of pass rates simulated.
        n_trials: Trials per case and arm.
        baseline_rate: Mean baseline pass rate.
        alpha: 1 - confidence of the confidence sequence.
        threshold: Practical threshold of "improved".
        max_cases: Budget of cases (a comparison unsettled at it stops there).
        round_cases: Cases per round (one look after each).
        plan_cases: Cases the bets are tuned for (None: untuned).
        expected_cases: Mean number of cases at the stop (budget included).
        median_cases: Median of it.
        p90_cases: Its 90th percentile.
        improved: Share of simulations that stopped with "improved".
        regressed: Share that stopped with "regressed".
        futile: Share that stopped as futile (either futility rule).
        unsettled: Share that spent the budget without settling.
        n_sims: Simulated comparisons.
        seed: Seed of the simulation.
        method: The interval's method.
        plan_effect: Planned effect of the futility boundary (None: no such boundary).
        futility_beta: Its ``beta``.
        futile_planned: Share that stopped at the planned-effect futility boundary.
    """

    effect: float
    n_trials: int
    baseline_rate: float
    alpha: float
    threshold: float
    max_cases: int
    round_cases: int
    plan_cases: int | None
    expected_cases: float
    median_cases: float
    p90_cases: float
    improved: float
    regressed: float
    futile: float
    unsettled: float
    n_sims: int
    seed: int | None
    method: str = SEQUENTIAL_METHOD
    plan_effect: float | None = None
    futility_beta: float = FUTILITY_BETA
    futile_planned: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON values."""
        return dict(json_ready(asdict(self)))


@dataclass(frozen=True)
class SimulationSettings:
    """The checked settings of a simulated sequential design.

    Attributes:
        effect: True difference of pass rates simulated.
        n_trials: Trials per case and arm (of a full case).
        baseline_rate: Mean baseline pass rate.
        confidence: Level of the confidence sequence (1 - alpha).
        threshold: Practical threshold of "improved".
        max_cases: Budget of cases.
        round_cases: Cases per round (one look after each).
        plan_cases: Cases the bets are tuned for (None: untuned).
        n_sims: Simulated comparisons.
        seed: Seed of the simulation.
        plan_effect: Planned effect of the futility boundary (None: no such boundary).
        futility_beta: Its ``beta``.
    """

    effect: float
    n_trials: int
    baseline_rate: float
    confidence: float
    threshold: float
    max_cases: int
    round_cases: int
    plan_cases: int | None
    n_sims: int
    seed: int | None
    plan_effect: float | None
    futility_beta: float

    def plan_fields(self) -> dict[str, Any]:
        """The settings as fields of a :class:`SequentialPlan` (``alpha``, not the level)."""
        fields = asdict(self)
        fields["alpha"] = 1.0 - fields.pop("confidence")
        return fields


def check_simulation(
    effect: float,
    n_trials: int,
    *,
    baseline_rate: float,
    alpha: float,
    threshold: float | None,
    max_cases: int,
    round_cases: int,
    plan_cases: int | None,
    n_sims: int,
    seed: int | None,
    plan_effect: float | None,
    futility_beta: float,
) -> SimulationSettings:
    """Validate the settings shared by the sequential simulations.

    The arguments are those of the same names of :func:`simulate_sequential` and
    its adaptive-trials form (``n_trials``: of a full case),
    checked in this order.

    Returns:
        The checked :class:`SimulationSettings`.

    Raises:
        InputError: The first value out of range, named.
    """
    checked_effect = _number(effect, "effect", -1.0, 1.0)
    rate = _number(baseline_rate, "baseline_rate", 0.0, 1.0, open_low=True)
    level = check_confidence(1.0 - alpha, "1 - alpha")
    limit = check_threshold(threshold)
    trials = check_positive_int(n_trials, "n_trials")
    cases = check_positive_int(max_cases, "max_cases")
    size = ROUND_CASES.check(round_cases)
    sims = check_positive_int(n_sims, "n_sims")
    planned, beta = check_futility(plan_effect, futility_beta)
    return SimulationSettings(
        effect=checked_effect,
        n_trials=trials,
        baseline_rate=rate,
        confidence=level,
        threshold=limit,
        max_cases=cases,
        round_cases=size,
        plan_cases=plan_cases,
        n_sims=sims,
        seed=seed,
        plan_effect=planned,
        futility_beta=beta,
    )


def check_futility(plan_effect: float | None, futility_beta: float) -> tuple[float | None, float]:
    """Validate the planned-effect futility settings.

    Args:
        plan_effect: Planned effect in (0, 1), or None (no futility boundary).
        futility_beta: Its ``beta`` in (0, 1).

    Returns:
        ``(plan_effect, futility_beta)`` as floats.

    Raises:
        InputError: A value out of range.
    """
    beta = _number(futility_beta, "futility_beta", 0.0, 1.0, open_low=True)
    if beta >= 1.0:
        raise InputError(
            f"The value for `futility_beta` must lie in (0, 1), but {futility_beta!r} was passed."
        )
    if plan_effect is None:
        return None, beta
    effect = _number(plan_effect, "plan_effect", 0.0, 1.0, open_low=True)
    if effect >= 1.0:
        raise InputError(
            f"The value for `plan_effect` must lie in (0, 1), but {plan_effect!r} was passed."
        )
    return effect, beta


def simulate_stops(
    draw: Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]],
    settings: SimulationSettings,
    *,
    bound: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Run ``settings.n_sims`` simulated sequential comparisons to their stop.

    Args:
        draw: One simulated suite from the generator: per-case differences (in drawing
            order, in ``[-bound, bound]``) and per-case work items.
        settings: The design: budget, rounds, threshold, confidence, tuning, futility
            boundary, simulations and the seed of the generator passed to every ``draw``
            (``draw`` gives at least ``settings.max_cases`` cases).
        bound: Range of the differences.

    Returns:
        ``(cases, items, reasons)``: cases observed and work items spent at each stop, and
        each stop's reason (``""`` when the budget ran out unsettled).
    """
    rng = np.random.default_rng(settings.seed)
    max_cases, round_cases = settings.max_cases, settings.round_cases
    marks = np.unique(np.append(np.arange(round_cases, max_cases + 1, round_cases), max_cases))
    stops = np.empty(settings.n_sims)
    items = np.empty(settings.n_sims)
    reasons: list[str] = []
    for i in range(settings.n_sims):
        differences, case_items = draw(rng)
        looks = run_looks(
            differences, marks, threshold=settings.threshold, confidence=settings.confidence,
            plan_cases=settings.plan_cases, bound=bound, plan_effect=settings.plan_effect,
            futility_beta=settings.futility_beta,
        )
        n = looks[-1].n_cases
        stops[i], items[i] = n, float(np.sum(case_items[:n]))
        reasons.append(looks[-1].reason)
    return stops, items, reasons


class StopSummary(TypedDict):
    """Where simulated sequential comparisons stopped (fields of :class:`SequentialPlan`)."""

    expected_cases: float
    median_cases: float
    p90_cases: float
    improved: float
    regressed: float
    futile: float
    unsettled: float
    futile_planned: float


def stop_summary(stops: np.ndarray, reasons: list[str]) -> StopSummary:
    """Cases at the stop (mean, median, 90th percentile) and the share of each stop reason.

    Args:
        stops: Cases observed at each simulated stop.
        reasons: Each stop's reason (``""``: the budget ran out unsettled).

    Returns:
        ``expected_cases, median_cases, p90_cases, improved, regressed, futile`` (either
        futility rule), ``unsettled`` and ``futile_planned`` (the planned-effect boundary).
    """
    count = len(reasons)
    return StopSummary(
        expected_cases=float(np.mean(stops)),
        median_cases=float(np.median(stops)),
        p90_cases=float(np.percentile(stops, 90)),
        improved=reasons.count("improved") / count,
        regressed=reasons.count("regressed") / count,
        futile=sum(reasons.count(reason) for reason in FUTILE_REASONS) / count,
        unsettled=reasons.count("") / count,
        futile_planned=reasons.count(FUTILE_PLANNED) / count,
    )
