"""How many cases until the sequential verdict, by simulation (with or without adaptive trials).

:func:`simulate_sequential` simulates the sequential comparison under Miller's model; given an
adaptive-trials design (``adaptive=``) it simulates the two-stage runs of that design and
reports the work items they spend as well.
"""

from __future__ import annotations

import numpy as np

from evalkit._settings import ALPHA, ROUND_CASES, SEED
from evalkit.errors import InputError
from evalkit.stats._adaptive import AdaptiveTrials
from evalkit.stats._adaptive_power import simulate_design
from evalkit.stats._frame import check_positive_int
from evalkit.stats._power import DEFAULT_CONCENTRATION, _number
from evalkit.stats._sequential import FUTILITY_BETA
from evalkit.stats._sequential_power import (
    SequentialPlan,
    check_simulation,
    simulate_stops,
    stop_summary,
)
from evalkit.stats._simulate import simulate_arms

#: Trials per case and arm when neither ``n_trials`` nor a design says.
DEFAULT_SIMULATED_TRIALS = 3


def simulate_sequential(
    effect: float,
    n_trials: int | None = None,
    *,
    adaptive: AdaptiveTrials | None = None,
    baseline_rate: float = 0.5,
    concentration: float = DEFAULT_CONCENTRATION,
    alpha: float = ALPHA.default,
    threshold: float | None = None,
    max_cases: int = 1000,
    round_cases: int = ROUND_CASES.default,
    plan_cases: int | None = None,
    n_sims: int = 200,
    seed: int | None = SEED.default,
    plan_effect: float | None = None,
    futility_beta: float = FUTILITY_BETA,
    coupling: float = 1.0,
) -> SequentialPlan:
    """Simulate the sequential design: cases to the verdict, and which verdict.

    Each simulation draws ``max_cases`` cases of Miller's model
    (:func:`~evalkit.stats._simulate.simulate_arms`: case difficulty from a Beta
    distribution, ``n_trials`` Bernoulli trials per arm), looks after every ``round_cases``
    cases and stops at the first settled look (improved, regressed or futile) or at the
    budget. With ``adaptive``, every case follows that two-stage design
    (:func:`~evalkit.stats._adaptive_power.simulate_case_differences`): the looks run over
    the corrected differences (range ``[-B, B]``, :attr:`AdaptiveTrials.bound`) and the
    result also counts the work items spent.

    Args:
        effect: True difference of mean pass rates.
        n_trials: Trials per case and arm (default 3, or the design's ``total_trials``,
            which it must then equal).
        adaptive: The adaptive-trials design to simulate (None: every case runs
            ``n_trials`` trials).
        baseline_rate: Mean baseline pass rate (in (0, 1)).
        concentration: Beta concentration of case difficulty.
        alpha: 1 - confidence of the confidence sequence.
        threshold: Practical threshold (default 0.05).
        max_cases: Budget of cases.
        round_cases: Cases per round.
        plan_cases: Cases the bets are tuned for (None: untuned).
        n_sims: Simulations.
        seed: Seed.
        plan_effect: Planned effect of the futility boundary (None: no such boundary).
        futility_beta: Its ``beta``.
        coupling: Share of cases whose candidate rate follows their own difficulty
            (:func:`~evalkit.stats._simulate.simulate_arms`; 1 couples every case).

    Returns:
        A :class:`SequentialPlan`; with ``adaptive``, an :class:`AdaptivePlan` (the
        :class:`SequentialPlan` subclass that also counts the work items).

    Raises:
        InputError: A setting out of range (named), or ``n_trials`` other than the design's.

    Examples:
        >>> plan = simulate_sequential(0.3, max_cases=200, n_sims=20, seed=1)
        >>> plan.improved, plan.expected_cases < 60
        (1.0, True)
        >>> design = AdaptiveTrials()
        >>> simulate_sequential(0.3, adaptive=design, max_cases=200, n_sims=10, seed=1).improved
        1.0
    """
    trials = _trials(n_trials, adaptive)
    settings = check_simulation(
        effect, trials, baseline_rate=baseline_rate, alpha=alpha, threshold=threshold,
        max_cases=max_cases, round_cases=round_cases, plan_cases=plan_cases, n_sims=n_sims,
        seed=seed, plan_effect=plan_effect, futility_beta=futility_beta,
    )
    if adaptive is not None:
        return simulate_design(
            settings, adaptive, concentration=concentration, coupling=coupling
        )
    linked = _number(coupling, "coupling", 0.0, 1.0)

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        base, cand = simulate_arms(
            rng, settings.max_cases, settings.n_trials, settings.effect, settings.baseline_rate,
            concentration, linked,
        )
        return (
            cand.mean(axis=1) - base.mean(axis=1),
            np.full(settings.max_cases, 2.0 * settings.n_trials),
        )

    stops, _, reasons = simulate_stops(draw, settings)
    return SequentialPlan(**settings.plan_fields(), **stop_summary(stops, reasons))


def _trials(n_trials: int | None, design: AdaptiveTrials | None) -> int:
    """Trials per case and arm of a simulation: given, the design's, or the default."""
    if design is None:
        return DEFAULT_SIMULATED_TRIALS if n_trials is None else n_trials
    if n_trials is not None and check_positive_int(n_trials, "n_trials") != design.total_trials:
        raise InputError(
            f"`n_trials` ({n_trials}) must equal the adaptive design's total_trials "
            f"({design.total_trials}); leave n_trials out to take the design's"
        )
    return design.total_trials
