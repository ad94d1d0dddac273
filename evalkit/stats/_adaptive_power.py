"""Simulating the sequential comparison with adaptive trials: work items to the verdict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evalkit.stats._adaptive import AdaptiveTrials, corrected_difference
from evalkit.stats._power import _number
from evalkit.stats._sequential_power import (
    SequentialPlan,
    SimulationSettings,
    simulate_stops,
    stop_summary,
)
from evalkit.stats._simulate import simulate_arms

#: Beta concentration of an agent-like suite: ``Beta(a, a)`` with ``a / (2a + 1) = 0.16`` (two
#: identical runs disagree on about 16 % of cases), ``a = 0.16 / 0.68``.
AGENT_CONCENTRATION = 2 * 0.16 / 0.68


@dataclass(frozen=True)
class AdaptivePlan(SequentialPlan):
    """A :class:`SequentialPlan` of the agent-like model, with the work items it spent.

    ``n_trials`` is the design's ``total_trials`` (trials per condition of a full case).

    Attributes:
        design: The adaptive design (``AdaptiveTrials.to_dict()``), or None: every case runs
            ``n_trials`` trials.
        concentration: Beta concentration of case difficulty.
        expected_items: Mean number of work items (cases x conditions x trials) at the stop.
        p90_items: 90th percentile of the work items.
        stage_two_share: Share of observed cases that ran stage 2 (1 without the design).
    """

    design: dict[str, Any] | None = None
    concentration: float = AGENT_CONCENTRATION
    expected_items: float = 0.0
    p90_items: float = 0.0
    stage_two_share: float = 1.0


def simulate_case_differences(
    rng: np.random.Generator,
    n_cases: int,
    effect: float,
    design: AdaptiveTrials,
    *,
    adaptive: bool = True,
    baseline_rate: float = 0.5,
    concentration: float = AGENT_CONCENTRATION,
    coupling: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-case differences and work items of one simulated suite under a design.

    Cases follow Miller's model (:func:`~evalkit.stats._simulate.simulate_arms`: difficulty
    ``p ~ Beta``, the candidate's rate moved by the same share of its headroom so the mean
    difference is ``effect`` exactly). The stage-2 draw of an all-equal case is a uniform
    number below ``design.stage_two_probability`` (as :func:`stage_two_draw` draws it for a
    random case id).

    Args:
        rng: Random generator.
        n_cases: Cases.
        effect: True difference of mean pass rates.
        design: The two-stage design.
        adaptive: False: every case runs all ``total_trials`` (the pooled mean, the design
            switched off).
        baseline_rate: Mean baseline rate.
        concentration: Beta concentration of case difficulty.
        coupling: Share of cases whose candidate rate follows their own difficulty.

    Returns:
        ``(differences, items)`` per case; differences lie in ``[-design.bound, design.bound]``
        (in [-1, 1] without the design).
    """
    base, cand = simulate_arms(
        rng, n_cases, design.total_trials, effect, baseline_rate, concentration, coupling
    )
    if not adaptive:
        return cand.mean(axis=1) - base.mean(axis=1), np.full(n_cases, 2.0 * design.total_trials)
    first = design.first_trials
    stage_one = (base[:, :first].mean(axis=1), cand[:, :first].mean(axis=1))
    stage_two = (base[:, first:].mean(axis=1), cand[:, first:].mean(axis=1))
    drawn = rng.random(n_cases) < design.stage_two_probability
    mixed = (np.concatenate([base[:, :first], cand[:, :first]], axis=1).std(axis=1)) > 0
    ran = mixed | drawn
    base_rate, cand_rate, _ = corrected_difference(stage_one, stage_two, ran, design)
    items = 2.0 * np.where(ran, design.total_trials, first)
    return cand_rate - base_rate, items


def simulate_design(
    settings: SimulationSettings,
    design: AdaptiveTrials,
    *,
    adaptive: bool = True,
    concentration: float = AGENT_CONCENTRATION,
    coupling: float = 1.0,
) -> AdaptivePlan:
    """Simulate the sequential design with (or without) adaptive trials.

    Each simulation draws ``settings.max_cases`` cases (:func:`simulate_case_differences`),
    looks after every ``settings.round_cases`` cases with the betting confidence sequence over
    the corrected differences (range ``[-B, B]``, :attr:`AdaptiveTrials.bound`) and stops at
    the first settled look or at the budget. :func:`~evalkit.stats.simulate_sequential` with
    ``adaptive=`` calls this.

    Args:
        settings: The checked settings (:func:`check_simulation`, ``n_trials`` the design's
            ``total_trials``).
        design: The two-stage design (its ``total_trials`` is ``K`` also when switched off).
        adaptive: False: every case runs ``total_trials`` trials.
        concentration: Beta concentration of case difficulty (default: agent-like).
        coupling: Share of cases whose candidate rate follows their own difficulty
            (:func:`~evalkit.stats._simulate.simulate_arms`; 1 couples every case).

    Returns:
        An :class:`AdaptivePlan`.
    """
    kappa = _number(concentration, "concentration", 0.0, 1e9, open_low=True)
    linked = _number(coupling, "coupling", 0.0, 1.0)
    bound = design.bound if adaptive else 1.0
    full: list[np.ndarray] = []  # per simulation: which cases ran every trial

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        differences, case_items = simulate_case_differences(
            rng, settings.max_cases, settings.effect, design, adaptive=adaptive,
            baseline_rate=settings.baseline_rate, concentration=kappa, coupling=linked,
        )
        full.append(case_items == 2.0 * design.total_trials)
        return differences, case_items

    stops, items, reasons = simulate_stops(draw, settings, bound=bound)
    stage_two = [float(np.mean(ran[: int(n)])) for ran, n in zip(full, stops, strict=True)]
    return AdaptivePlan(
        **settings.plan_fields(),
        **stop_summary(stops, reasons),
        design=design.to_dict() if adaptive else None,
        concentration=kappa,
        expected_items=float(np.mean(items)),
        p90_items=float(np.percentile(items, 90)),
        stage_two_share=float(np.mean(stage_two)),
    )
