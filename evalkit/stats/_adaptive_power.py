"""Simulating the sequential comparison with adaptive trials: work items to the verdict."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from evalkit.stats._adaptive import AdaptiveTrials, corrected_difference
from evalkit.stats._frame import check_confidence, check_positive_int, json_ready
from evalkit.stats._paired import check_threshold
from evalkit.stats._power import _number
from evalkit.stats._sequential import SEQUENTIAL_METHOD, run_looks
from evalkit.stats._simulate import simulate_arms

#: Beta concentration of an agent-like suite: ``Beta(a, a)`` with ``a / (2a + 1) = 0.16`` (two
#: identical runs disagree on about 16 % of cases), ``a = 0.16 / 0.68``.
AGENT_CONCENTRATION = 2 * 0.16 / 0.68


@dataclass(frozen=True)
class AdaptivePlan:
    """Work items a sequential comparison spends until its verdict, simulated.

    Attributes:
        effect: True difference of mean pass rates simulated.
        design: The adaptive design (``AdaptiveTrials.to_dict()``), or None: every case runs
            ``total_trials`` trials.
        total_trials: Trials per condition of a full case.
        baseline_rate: Mean baseline pass rate.
        concentration: Beta concentration of case difficulty.
        alpha: 1 - confidence of the confidence sequence.
        threshold: Practical threshold of "improved".
        max_cases: Budget of cases.
        round_size: Cases per round (one look after each).
        plan_cases: Cases the bets are tuned for (None: untuned).
        expected_cases: Mean number of cases at the stop.
        expected_items: Mean number of work items (cases x conditions x trials) at the stop.
        p90_items: 90th percentile of the work items.
        stage_two_share: Share of observed cases that ran stage 2 (1 without the design).
        improved: Share of simulations that stopped with "improved".
        regressed: Share that stopped with "regressed".
        futile: Share that stopped as futile.
        unsettled: Share that spent the budget without settling.
        n_sims: Simulated comparisons.
        seed: Seed.
        method: The interval's method.
    """

    effect: float
    design: dict[str, Any] | None
    total_trials: int
    baseline_rate: float
    concentration: float
    alpha: float
    threshold: float
    max_cases: int
    round_size: int
    plan_cases: int | None
    expected_cases: float
    expected_items: float
    p90_items: float
    stage_two_share: float
    improved: float
    regressed: float
    futile: float
    unsettled: float
    n_sims: int
    seed: int | None
    method: str = SEQUENTIAL_METHOD

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON values."""
        return dict(json_ready(asdict(self)))


def simulate_case_differences(
    rng: np.random.Generator,
    n_cases: int,
    effect: float,
    design: AdaptiveTrials,
    *,
    adaptive: bool = True,
    baseline_rate: float = 0.5,
    concentration: float = AGENT_CONCENTRATION,
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

    Returns:
        ``(differences, items)`` per case; differences lie in ``[-design.bound, design.bound]``
        (in [-1, 1] without the design).
    """
    base, cand = simulate_arms(
        rng, n_cases, design.total_trials, effect, baseline_rate, concentration
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


def simulate_adaptive(
    effect: float,
    design: AdaptiveTrials,
    *,
    adaptive: bool = True,
    baseline_rate: float = 0.5,
    concentration: float = AGENT_CONCENTRATION,
    alpha: float = 0.05,
    threshold: float | None = None,
    max_cases: int = 1000,
    round_size: int = 10,
    plan_cases: int | None = None,
    n_sims: int = 200,
    seed: int | None = 0,
) -> AdaptivePlan:
    """Simulate the sequential design with (or without) adaptive trials.

    Each simulation draws ``max_cases`` cases (:func:`simulate_case_differences`), looks
    after every ``round_size`` cases with the betting confidence sequence over the corrected
    differences (range ``[-B, B]``, :attr:`AdaptiveTrials.bound`) and stops at the first
    settled look or at the budget.

    Args:
        effect: True difference of mean pass rates.
        design: The two-stage design (its ``total_trials`` is ``K`` also when switched off).
        adaptive: False: every case runs ``total_trials`` trials.
        baseline_rate: Mean baseline rate (in (0, 1)).
        concentration: Beta concentration of case difficulty (default: agent-like).
        alpha: 1 - confidence of the confidence sequence.
        threshold: Practical threshold (default 0.05).
        max_cases: Budget of cases.
        round_size: Cases per round.
        plan_cases: Cases the bets are tuned for (None: untuned).
        n_sims: Simulations.
        seed: Seed.

    Returns:
        An :class:`AdaptivePlan`.

    Examples:
        >>> plan = simulate_adaptive(0.3, AdaptiveTrials(), max_cases=200, n_sims=10, seed=1)
        >>> plan.improved
        1.0
    """
    effect = _number(effect, "effect", -1.0, 1.0)
    rate = _number(baseline_rate, "baseline_rate", 0.0, 1.0, open_low=True)
    kappa = _number(concentration, "concentration", 0.0, 1e9, open_low=True)
    level = check_confidence(1.0 - alpha, "1 - alpha")
    limit = check_threshold(threshold)
    max_cases = check_positive_int(max_cases, "max_cases")
    round_size = check_positive_int(round_size, "round_size")
    n_sims = check_positive_int(n_sims, "n_sims")
    rng = np.random.default_rng(seed)
    marks = np.unique(np.append(np.arange(round_size, max_cases + 1, round_size), max_cases))
    bound = design.bound if adaptive else 1.0
    stops = np.empty(n_sims)
    items = np.empty(n_sims)
    full = np.empty(n_sims)
    reasons: list[str] = []
    for i in range(n_sims):
        differences, case_items = simulate_case_differences(
            rng, max_cases, effect, design, adaptive=adaptive, baseline_rate=rate,
            concentration=kappa,
        )
        looks = run_looks(
            differences, marks, threshold=limit, confidence=level, plan_cases=plan_cases,
            bound=bound,
        )
        n = looks[-1].n_cases
        stops[i], items[i] = n, case_items[:n].sum()
        full[i] = float(np.mean(case_items[:n] == 2.0 * design.total_trials))
        reasons.append(looks[-1].reason)
    share = {name: reasons.count(name) / n_sims for name in ("improved", "regressed", "futile")}
    return AdaptivePlan(
        effect=effect,
        design=design.to_dict() if adaptive else None,
        total_trials=design.total_trials,
        baseline_rate=rate,
        concentration=kappa,
        alpha=1.0 - level,
        threshold=limit,
        max_cases=max_cases,
        round_size=round_size,
        plan_cases=plan_cases,
        expected_cases=float(np.mean(stops)),
        expected_items=float(np.mean(items)),
        p90_items=float(np.percentile(items, 90)),
        stage_two_share=float(np.mean(full)),
        improved=share["improved"],
        regressed=share["regressed"],
        futile=share["futile"],
        unsettled=reasons.count("") / n_sims,
        n_sims=n_sims,
        seed=seed,
    )
