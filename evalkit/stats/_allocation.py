"""Trials where the information is: Neyman allocation of paired trials over a suite's cases.

Design. A sequential comparison of a fixed suite of ``N`` cases estimates the suite's mean
difference ``delta = (1 / N) sum_i delta_i`` (``delta_i`` = a case's candidate pass rate minus
its baseline pass rate). It runs in rounds of paired trials (one baseline and one candidate
trial of the same case, the pair's difference ``D`` in {-1, 0, 1}). Before each round the
probability ``q_i`` of drawing each case is computed from the pairs of the earlier rounds
only; the round then draws its cases independently with those probabilities (a case can be
drawn several times, each draw one more pair of it).

Allocation. The share ``1 - floor`` of the probability goes to the cases in proportion to an
estimate of the root mean square of their pair differences, ``r_i = sqrt(E[D_i^2])`` (the
square root of the probability that a pair of the case differs), the rest is spread evenly:

    q_i = floor / N + (1 - floor) * r_i / sum_j r_j.

The estimate is empirical Bayes over two kinds of case, those that never flip and those that
do. ``rho``, the disagreement rate of a case that flips, is pooled over the cases whose pairs
have differed (prior: one differing pair in two); the share of cases that flip is their count
over the chance of having noticed a flipping case with the pairs each case had. A case whose
pairs have differed gets ``r_i^2 = (s_i + prior_pairs * rho) / (n_i + prior_pairs)`` (``n_i``
pairs, ``s_i`` of them differing); a case none of whose ``n_i`` pairs has differed gets
``r_i^2 = P(it flips | n_i agreeing pairs) * rho``, which falls geometrically with ``n_i``; a
case not drawn yet gets the share of flipping cases times ``rho``. So a case that has not
differed after its first pairs gets few more, cases that flip get more, and no case gets
less than ``floor / N``: every case stays in the estimate.

Estimator. Each pair is weighted by its case's inverse probability, ``X = D / (N q_i)``
(Horvitz-Thompson). Given everything before the draw, the case is ``i`` with probability
``q_i`` and ``E[D | i] = delta_i``, so ``E[X | past] = sum_i q_i delta_i / (N q_i) = delta``:
the increments have the same conditional mean ``delta`` under *any* allocation computed from
past pairs, and they lie in ``[-B, B]`` with ``B = 1 / floor``. The betting confidence sequence
(:func:`~evalkit.stats.run_looks` with ``bound=B``) needs exactly that, so it keeps its
anytime-valid coverage and its verdicts their error rates. Its conditional variance is
``(1 / N^2) sum_i E[D_i^2] / q_i - delta^2``, smallest at ``q_i`` proportional to
``sqrt(E[D_i^2])``: Neyman allocation of the stratified estimator (one stratum per case,
weight ``1 / N`` each), with the pair's root mean square in place of its standard deviation
(the two agree where ``delta_i = 0``). The plain mean of the pairs is *not* valid here: it
weights each case by how often it was drawn, which depends on its outcomes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from evalkit._settings import SEED
from evalkit.errors import InputError
from evalkit.stats._frame import check_positive_int

#: Default share of each draw's probability spread evenly over the cases.
ALLOCATION_FLOOR = 0.7


@dataclass(frozen=True)
class NeymanAllocation:
    """How a sequential comparison spreads paired trials over a suite's cases.

    Attributes:
        floor: Share of the probability spread evenly over the cases, in (0, 1]: no case is
            drawn with probability below ``floor / N``, and the weighted increments lie in
            ``[-1 / floor, 1 / floor]``; 1 draws every case with the same probability.
        prior_pairs: Weight, in pairs, of the pooled disagreement rate of the cases that
            flipped in the estimate of one such case's rate.
        round_pairs: Pairs drawn per round (one look after each round).
        seed: Seed of the draws.
    """

    floor: float = ALLOCATION_FLOOR
    prior_pairs: float = 2.0
    round_pairs: int = 20
    seed: int = SEED.default

    def __post_init__(self) -> None:
        """Check the design (an :class:`~evalkit.errors.InputError` names the bad field)."""
        if not (isinstance(self.floor, int | float) and 0.0 < self.floor <= 1.0):
            raise InputError(
                f"allocation: `floor` must be a share in (0, 1], e.g. 0.7, not {self.floor!r}"
            )
        prior = self.prior_pairs
        if not (isinstance(prior, int | float) and math.isfinite(prior) and prior > 0):
            raise InputError(
                f"allocation: `prior_pairs` must be a positive number, e.g. 1, not {prior!r}"
            )
        check_positive_int(self.round_pairs, "round_pairs")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise InputError(f"allocation: `seed` must be an integer, not {self.seed!r}")

    @property
    def bound(self) -> float:
        """``B = 1 / floor``: every weighted increment lies in ``[-B, B]``."""
        return 1.0 / self.floor


def allocation_probabilities(
    pairs: np.ndarray, differed: np.ndarray, design: NeymanAllocation
) -> np.ndarray:
    """Each case's probability of being drawn next, from the pairs observed so far.

    Args:
        pairs: Pairs observed so far, per case (one entry per case of the suite).
        differed: Of those, the pairs whose two trials differed, per case.
        design: The allocation.

    Returns:
        ``q``, one probability per case, summing to 1, each at least ``floor / N``.

    Examples:
        >>> design = NeymanAllocation(floor=0.5)
        >>> q = allocation_probabilities(np.array([4, 4]), np.array([0, 2]), design)
        >>> bool(q[1] > q[0] >= 0.25), float(q.sum())
        (True, 1.0)
    """
    n = np.asarray(pairs, dtype=float)
    s = np.asarray(differed, dtype=float)
    flipped = s > 0
    rate = (1.0 + s[flipped].sum()) / (2.0 + n[flipped].sum())  # of the cases that flipped
    unseen_flip = (1.0 - rate) ** n  # chance a varying case has not differed in its n pairs
    noticed = 1.0 - unseen_flip[n > 0]
    varying = float(np.clip((flipped.sum() + 1.0) / (noticed.sum() + 2.0), 0.05, 1.0))
    odds = varying * unseen_flip
    chance = np.where(flipped, 1.0, odds / (odds + 1.0 - varying))
    own = np.where(flipped, (s + design.prior_pairs * rate) / (n + design.prior_pairs), rate)
    spread = np.sqrt(chance * own)
    return np.asarray(design.floor / len(n) + (1.0 - design.floor) * spread / spread.sum())


def weighted_increments(
    differences: np.ndarray, probabilities: np.ndarray, n_cases: int
) -> np.ndarray:
    """Horvitz-Thompson increments ``D / (N q)`` of drawn pairs: mean ``delta`` given the past.

    Args:
        differences: Each drawn pair's difference (candidate minus baseline, in {-1, 0, 1}).
        probabilities: The probability its case had when it was drawn.
        n_cases: ``N``, the cases of the suite.

    Returns:
        The increments, in the order of the draws.

    Examples:
        >>> weighted_increments(np.array([1.0, -1.0]), np.array([0.5, 0.25]), 2).tolist()
        [1.0, -2.0]
    """
    weights = n_cases * np.asarray(probabilities, dtype=float)
    return np.asarray(np.asarray(differences, dtype=float) / weights)


def draw_round(probabilities: np.ndarray, design: NeymanAllocation, round_index: int) -> np.ndarray:
    """The cases (indices) a round draws, seeded by ``(seed, round_index)``.

    Args:
        probabilities: ``q`` of the round (:func:`allocation_probabilities`).
        design: The allocation (its ``round_pairs`` and ``seed``).
        round_index: The round, from 0: the same round of the same design draws the same.

    Returns:
        ``round_pairs`` case indices, drawn independently with probabilities ``q``.
    """
    rng = np.random.default_rng([design.seed, round_index])
    return rng.choice(len(probabilities), size=design.round_pairs, p=probabilities)
