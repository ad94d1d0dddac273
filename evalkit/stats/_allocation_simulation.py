"""Simulated sequential comparisons under Neyman allocation: error rates, coverage, cost.

:func:`simulate_allocation` runs the design of :mod:`evalkit.stats._allocation` many times on
one suite whose cases have known pass rates: rounds of pairs drawn with the allocation's
probabilities, the weighted increments fed to the betting confidence sequence, a look after
every round, a stop at the first settled look or at the budget. It is what the tests check
the error rates and the coverage with, and what the benchmark measures the items with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from evalkit._settings import CONFIDENCE, SEED, THRESHOLD
from evalkit.errors import InputError
from evalkit.stats._allocation import (
    NeymanAllocation,
    allocation_probabilities,
    weighted_increments,
)
from evalkit.stats._frame import check_positive_int
from evalkit.stats._sequential import FUTILITY_BETA, run_looks


class AllocationSimulation(NamedTuple):
    """What simulated sequential comparisons under an allocation did, one entry per run.

    Attributes:
        pairs: Pairs run to the stop (work items are twice this).
        reasons: Why each run stopped (``improved``, ``regressed``, ``futile``,
            ``futile-planned``, or ``""``: budget spent).
        covered: Whether every look's interval held the suite's true mean difference.
        estimates: The estimate at the last look (clipped into its interval).
        means: The mean of the increments up to the last look (not clipped).
        truth: The suite's true mean difference.
    """

    pairs: np.ndarray
    reasons: list[str]
    covered: np.ndarray
    estimates: np.ndarray
    means: np.ndarray
    truth: float

    def share(self, *reasons: str) -> float:
        """Share of runs that stopped for any of ``reasons``."""
        return float(np.mean([reason in reasons for reason in self.reasons]))

    @property
    def mean_items(self) -> float:
        """Mean work items to the stop (two per pair)."""
        return 2.0 * float(self.pairs.mean())


def _rates(baseline: np.ndarray, candidate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    base = np.asarray(baseline, dtype=float)
    cand = np.asarray(candidate, dtype=float)
    if base.ndim != 1 or base.shape != cand.shape or not len(base):
        raise InputError("simulate_allocation: give one baseline and one candidate rate per case")
    if np.any((base < 0) | (base > 1) | (cand < 0) | (cand > 1)):
        raise InputError("simulate_allocation: pass rates must lie in [0, 1]")
    return base, cand


#: An allocation rule: ``(pairs, differed, net)`` per case so far (pairs, pairs that
#: differed, sum of the pairs' differences) -> the probability of each case in the next round.
AllocationRule = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _draws(
    base: np.ndarray,
    cand: np.ndarray,
    design: NeymanAllocation,
    max_pairs: int,
    n_sims: int,
    rng: np.random.Generator,
    rule: AllocationRule | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per run, every pair's difference and its case's probability, up to the budget."""
    n_cases = len(base)
    size = design.round_pairs
    rounds = -(-max_pairs // size)
    pairs = np.zeros((n_sims, n_cases))
    differed = np.zeros((n_sims, n_cases))
    net = np.zeros((n_sims, n_cases))
    differences = np.zeros((n_sims, rounds * size))
    probabilities = np.zeros((n_sims, rounds * size))
    offsets = np.arange(n_sims)[:, None]
    for r in range(rounds):
        q = np.stack([
            allocation_probabilities(pairs[k], differed[k], design) if rule is None
            else _checked_rule(rule(pairs[k], differed[k], net[k]), design.floor, n_cases)
            for k in range(n_sims)
        ])  # fmt: skip
        cumulative = np.cumsum(q, axis=1)
        cumulative[:, -1] = 1.0
        uniform = rng.random((n_sims, size))
        flat = np.searchsorted((cumulative + offsets).ravel(), (uniform + offsets).ravel(),
                               side="right")  # fmt: skip
        cases = (flat.reshape(n_sims, size) - offsets * n_cases).clip(0, n_cases - 1)
        d = (rng.random((n_sims, size)) < cand[cases]).astype(float) - (
            rng.random((n_sims, size)) < base[cases]
        )
        differences[:, r * size : (r + 1) * size] = d
        probabilities[:, r * size : (r + 1) * size] = np.take_along_axis(q, cases, axis=1)
        rows = np.repeat(np.arange(n_sims), size)
        np.add.at(pairs, (rows, cases.ravel()), 1.0)
        np.add.at(differed, (rows, cases.ravel()), np.abs(d).ravel())
        np.add.at(net, (rows, cases.ravel()), d.ravel())
    return differences[:, :max_pairs], probabilities[:, :max_pairs]


def _checked_rule(q: np.ndarray, floor: float, n_cases: int) -> np.ndarray:
    """A rule's probabilities, checked: one per case, at least ``floor / N``, summing to 1."""
    q = np.asarray(q, dtype=float)
    if q.shape == (n_cases,) and np.any(q < floor / n_cases * (1 - 1e-9)):
        raise InputError(
            f"simulate_allocation: the rule gave a case a probability below floor / N = "
            f"{floor} / {n_cases}: its weighted increments would leave [-{1 / floor:g}, "
            f"{1 / floor:g}]; keep every probability at least floor / N or lower `floor`"
        )
    if q.shape != (n_cases,) or np.any(q < 0) or not np.isclose(q.sum(), 1.0):
        raise InputError(
            "simulate_allocation: a rule must give one probability per case, "
            "nonnegative, summing to 1"
        )
    return q


def simulate_allocation(
    baseline_rates: np.ndarray,
    candidate_rates: np.ndarray,
    design: NeymanAllocation | None = None,
    *,
    max_pairs: int,
    threshold: float = THRESHOLD.default,
    confidence: float = CONFIDENCE.default,
    plan_pairs: int | None = None,
    plan_effect: float | None = None,
    futility_beta: float = FUTILITY_BETA,
    n_sims: int = 200,
    seed: int = SEED.default,
    stop: bool = True,
    rule: AllocationRule | None = None,
    weighted: bool = True,
) -> AllocationSimulation:
    """Simulate sequential comparisons of one suite under an allocation.

    Args:
        baseline_rates: Each case's baseline pass rate.
        candidate_rates: Each case's candidate pass rate.
        design: The allocation (None: :class:`NeymanAllocation` defaults; ``floor=1`` draws
            every case with the same probability, the design without allocation).
        max_pairs: Budget of pairs of a run.
        threshold: Practical threshold of *improved*.
        confidence: Level of the confidence sequence.
        plan_pairs: Pairs the bets are tuned for (None: untuned).
        plan_effect: Planned effect of the futility boundary (None: none).
        futility_beta: Its error rate.
        n_sims: Simulated runs.
        seed: Seed of the simulation.
        stop: Stop at the first settled look (else every look to the budget is taken, so
            ``covered`` checks the interval at all of them).
        rule: Another allocation rule computed from past pairs (None: the design's Neyman
            allocation); the design's ``floor`` then only sets the bound ``B`` of the
            increments, so the rule must keep every probability at least ``floor / N``.
        weighted: Weight each pair by its case's inverse probability (the valid estimator);
            False feeds the plain pair differences to the sequence (invalid under any
            allocation that is not uniform: kept to show it).

    Returns:
        An :class:`AllocationSimulation`.

    Raises:
        InputError: Rates outside [0, 1], or of different lengths.
    """
    base, cand = _rates(baseline_rates, candidate_rates)
    design = NeymanAllocation() if design is None else design
    max_pairs = check_positive_int(max_pairs, "max_pairs")
    n_sims = check_positive_int(n_sims, "n_sims")
    truth = float(np.mean(cand - base))
    differences, probabilities = _draws(
        base, cand, design, max_pairs, n_sims, np.random.default_rng(seed), rule
    )
    increments = (
        weighted_increments(differences, probabilities, len(base)) if weighted else (differences)
    )
    bound = design.bound if weighted else 1.0
    looks_at = np.arange(design.round_pairs, max_pairs + 1, design.round_pairs)
    if looks_at[-1] != max_pairs:
        looks_at = np.append(looks_at, max_pairs)
    pairs, covered, estimates, means, reasons = [], [], [], [], []
    for row in increments:
        looks = run_looks(
            row, looks_at, threshold=threshold, confidence=confidence, stop=stop,
            plan_cases=plan_pairs, bound=bound, plan_effect=plan_effect,
            futility_beta=futility_beta,
        )  # fmt: skip
        last = looks[-1]
        pairs.append(last.n_cases)
        reasons.append(last.reason)
        estimates.append(last.estimate)
        means.append(float(row[: last.n_cases].mean()))
        covered.append(all(look.ci_low <= truth <= look.ci_high for look in looks))
    return AllocationSimulation(
        np.array(pairs), reasons, np.array(covered), np.array(estimates), np.array(means), truth
    )
