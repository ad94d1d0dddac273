"""Anytime-valid paired comparison: a betting confidence sequence over cases.

Method. The per-case differences ``d = candidate_rate - baseline_rate`` lie in [-1, 1]; mapped
to ``x = (d + 1) / 2`` in [0, 1] their mean is estimated with the hedged-capital confidence
sequence of Waudby-Smith & Ramdas (2023, JRSS-B, "Estimating means of bounded random variables
by betting", Theorem 3 with the predictable plug-in bets of their eq. 26-27). For every
candidate mean ``m`` two gamblers bet on ``x`` being above and below ``m``; their wealth is a
nonnegative martingale when ``m`` is the true mean, so by Ville's inequality the set of ``m``
whose combined wealth stays below ``1 / alpha`` covers the true mean *at every number of cases
at once* with probability at least ``1 - alpha``. Looking after every case, or stopping
whenever the verdict is settled, therefore keeps the stated level, which a fixed-design
interval looked at repeatedly does not. The running intersection over looks keeps the
sequence nested.

It is computed on a grid of candidate means (step ``1 / GRID`` of the [-1, 1] range), each
bound moved outward by one grid step, so the grid never narrows the interval.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from evalkit._settings import CONFIDENCE
from evalkit.stats._types import Verdict
from evalkit.stats._verdicts import _TOLERANCE

#: Grid points of candidate means over [0, 1] (d-scale step 2 / GRID).
GRID = 1000
#: Cap on a bet (WSR 2023 suggest 1/2 or 3/4): wealth never falls by more than this share.
BET_CAP = 0.75
_GRID_POINTS = np.linspace(0.0, 1.0, GRID + 1)[1:-1]
#: The cap on a bet on "above m" (``BET_CAP / m``) and on "below m" (``BET_CAP / (1 - m)``).
_CAP_UP = BET_CAP / _GRID_POINTS
_CAP_DOWN = BET_CAP / (1.0 - _GRID_POINTS)
SEQUENTIAL_METHOD = "betting-confidence-sequence (Waudby-Smith & Ramdas 2023, hedged capital)"
#: Default ``beta`` of the planned-effect futility boundary (stop futile when wealth >= 1/beta).
FUTILITY_BETA = 0.2
#: Reason of a look stopped by the planned-effect futility boundary.
FUTILE_PLANNED = "futile-planned"
#: Reasons of a futile stop: the sequence inside (-threshold, threshold), or the planned effect
#: excluded by the futility e-process.
FUTILE_REASONS = ("futile", FUTILE_PLANNED)


class ConfidenceSequence(NamedTuple):
    """A confidence sequence for the mean of per-case differences in [-1, 1].

    Attributes:
        n: Observations after each look, ``1..T``.
        estimate: Running mean of the differences, clipped into the sequence's interval.
        ci_low: Lower bound after each observation (running intersection).
        ci_high: Upper bound after each observation (running intersection).
        confidence: Level, uniform over every number of observations.
    """

    n: np.ndarray
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    confidence: float


def confidence_sequence(
    differences: np.ndarray, confidence: float = CONFIDENCE.default, plan_cases: int | None = None
) -> ConfidenceSequence:
    """Hedged-capital betting confidence sequence for the mean of values in [-1, 1].

    The bets are WSR's predictable plug-in ``sqrt(2 log(2/alpha) / (var_{t-1} h_t))`` capped
    at :data:`BET_CAP` (``/ m`` or ``/ (1 - m)``), with ``h_t = t log(1 + t)`` (tight at every
    ``t``) or, given ``plan_cases = n``, ``h_t = n`` (WSR's choice for a planned size: tighter
    near ``n``, a little looser far from it). Any predictable bet keeps the coverage; the
    choice only moves where the sequence is tightest.

    Args:
        differences: Observations in their order of arrival (per-case differences).
        confidence: Level ``1 - alpha`` holding simultaneously at every ``t``.
        plan_cases: Number of cases the bets are tuned for (None: no planned size).

    Returns:
        The bounds after each observation.

    Raises:
        ValueError: A value outside [-1, 1] or not finite.

    Examples:
        >>> cs = confidence_sequence(np.full(60, 0.5))
        >>> bool(cs.ci_low[-1] > 0), bool(cs.ci_low[4] > 0)
        (True, False)
    """
    sequence, _ = _extend(_Wealth.empty(), _checked(differences), confidence, plan_cases)
    return sequence


class RunningConfidenceSequence:
    """:func:`confidence_sequence` fed as observations arrive, a look paying for its new ones.

    Looking after every batch with :func:`confidence_sequence` recomputes the whole sequence
    (``t`` rows of grid wealth at the ``t``-th observation); this keeps the gamblers' wealth
    and the running bounds between batches instead. The bounds are the same numbers, bit for
    bit, as :func:`confidence_sequence` of all the observations so far.

    Args:
        confidence: Level ``1 - alpha`` holding simultaneously at every ``t``.
        plan_cases: Number of cases the bets are tuned for (None: no planned size).

    Examples:
        >>> running = RunningConfidenceSequence(confidence=0.95)
        >>> _ = running.extend(np.full(30, 0.5))
        >>> latest = running.extend(np.full(30, 0.5))
        >>> whole = confidence_sequence(np.full(60, 0.5))
        >>> bool(latest.ci_low[-1] == whole.ci_low[-1]), int(latest.n[-1])
        (True, 60)
    """

    def __init__(
        self, confidence: float = CONFIDENCE.default, plan_cases: int | None = None
    ) -> None:
        self.confidence = float(confidence)
        self.plan_cases = plan_cases
        self._wealth = _Wealth.empty()

    @property
    def n(self) -> int:
        """Observations so far."""
        return self._wealth.n

    def extend(self, differences: np.ndarray) -> ConfidenceSequence:
        """Add observations (in their order of arrival); the sequence at each of them.

        Raises:
            ValueError: A value outside [-1, 1] or not finite (nothing is added).
        """
        sequence, self._wealth = _extend(
            self._wealth, _checked(differences), self.confidence, self.plan_cases
        )
        return sequence


def _checked(differences: np.ndarray) -> np.ndarray:
    d = np.asarray(differences, dtype=float)
    if d.size and (not np.all(np.isfinite(d)) or np.any(np.abs(d) > 1 + 1e-12)):
        raise ValueError("a confidence sequence needs differences in [-1, 1]")
    return d


class _Wealth(NamedTuple):
    """What a confidence sequence carries from one observation to the next (after ``n``)."""

    n: int
    sum_x: float  # of x = (d + 1) / 2
    sum_sq: float  # of (x_i - mu_{i-1})^2
    sum_d: float
    log_up: np.ndarray  # log wealth of the gambler on "above m", per grid point m
    log_down: np.ndarray
    low: float  # running intersection, before the final ``high >= low``
    high: float

    @classmethod
    def empty(cls) -> _Wealth:
        zeros = np.zeros(GRID - 1)
        return cls(0, 0.0, 0.0, 0.0, zeros, zeros, -math.inf, math.inf)


def _running(start: float, values: np.ndarray) -> np.ndarray:
    """``start + cumsum(values)``, summed in the order one sum over all values would take."""
    return np.cumsum(np.concatenate([[start], values]))[1:]


def _extend(
    wealth: _Wealth, d: np.ndarray, confidence: float, plan_cases: int | None
) -> tuple[ConfidenceSequence, _Wealth]:
    """The sequence at the observations ``d`` that follow ``wealth``, and the wealth after them."""
    count = len(d)
    if count == 0:
        empty = np.zeros(0)
        return ConfidenceSequence(np.zeros(0, dtype=int), empty, empty, empty, confidence), wealth
    alpha = 1.0 - confidence
    x = np.clip((d + 1.0) / 2.0, 0.0, 1.0)
    steps = np.arange(wealth.n + 1, wealth.n + count + 1, dtype=float)
    # predictable plug-in mean and variance (eq. 27): estimates from x_1..x_{t-1}, with the
    # priors 1/2 and 1/4 of weight 1
    sum_x = _running(wealth.sum_x, x)
    weight = np.arange(wealth.n, wealth.n + count, dtype=float) + 1.0  # before each new one
    mu_prev = (0.5 + np.concatenate([[wealth.sum_x], sum_x[:-1]])) / weight
    sum_sq = _running(wealth.sum_sq, (x - mu_prev) ** 2)
    var_prev = (0.25 + np.concatenate([[wealth.sum_sq], sum_sq[:-1]])) / weight
    horizon = steps * np.log1p(steps) if plan_cases is None else np.full(count, plan_cases)
    bets = np.sqrt(2.0 * math.log(2.0 / alpha) / (var_prev * horizon))
    grid = _GRID_POINTS
    excess = x[:, None] - grid[None, :]
    # log wealth of each gambler, log(1 + bet * excess) summed over t (in place: t x grid
    # arrays are the whole cost of a sequence)
    log_up = np.minimum(bets[:, None], _CAP_UP[None, :])
    log_up *= excess
    np.log1p(log_up, out=log_up)
    log_down = np.minimum(bets[:, None], _CAP_DOWN[None, :])
    np.negative(log_down, out=log_down)
    log_down *= excess
    np.log1p(log_down, out=log_down)
    for log_k, before in ((log_up, wealth.log_up), (log_down, wealth.log_down)):
        log_k[0] += before
        for t in range(1, count):  # a cumulative sum over t, row by row: twice numpy's speed
            np.add(log_k[t - 1], log_k[t], out=log_k[t])
    # hedged wealth max(K+/2, K-/2) compared with 1/alpha
    log_wealth = np.maximum(log_up, log_down, out=excess)
    log_wealth += math.log(0.5)
    inside = log_wealth < math.log(1.0 / alpha)
    step = 1.0 / GRID
    # at each t, the grid points still inside: the first and the last of them bound the set;
    # where none is (the grid is coarser than the set), the point of the smallest wealth
    kept = inside.any(axis=1)
    first = grid[np.argmax(inside, axis=1)]
    last = grid[len(grid) - 1 - np.argmax(inside[:, ::-1], axis=1)]
    best = grid[np.argmin(log_wealth, axis=1)]
    low = np.where(kept, np.maximum(first - step, 0.0), best - step)
    high = np.where(kept, np.minimum(last + step, 1.0), best + step)
    low = np.maximum.accumulate(np.concatenate([[wealth.low], low]))[1:]
    high = np.minimum.accumulate(np.concatenate([[wealth.high], high]))[1:]
    sum_d = _running(wealth.sum_d, d)
    after = _Wealth(
        wealth.n + count, float(sum_x[-1]), float(sum_sq[-1]), float(sum_d[-1]),
        log_up[-1].copy(), log_down[-1].copy(), float(low[-1]), float(high[-1]),
    )  # fmt: skip
    high = np.maximum(high, low)
    low_d, high_d = 2.0 * low - 1.0, 2.0 * high - 1.0
    mean = sum_d / steps
    sequence = ConfidenceSequence(
        steps.astype(int), np.clip(mean, low_d, high_d), low_d, high_d, float(confidence)
    )
    return sequence, after


def futility_log_wealth(differences: np.ndarray, plan_effect: float) -> np.ndarray:
    """Log-wealth of a bettor against "the mean difference is at least ``plan_effect``".

    The wealth ``F_t = prod_i (1 - lam_i (d_i - E))`` with predictable bets ``lam_i >= 0``
    is a nonnegative supermartingale whenever the true mean difference is at least ``E``
    (each factor has expectation ``1 - lam_i (mean - E) <= 1``), so by Ville's inequality it
    ever reaches ``1 / beta`` with probability at most ``beta`` (Ville 1939; Ramdas et al.
    2023, Statistical Science, "Game-theoretic statistics and safe anytime-valid
    inference"). The bets are the growth-optimal (Kelly) bet for the alternative "no
    effect", ``lam = E / (var + E^2)`` with the predictable running variance of the
    differences (prior variance 1 of weight 1), capped at :data:`BET_CAP` ``/ (1 - E)`` so a
    factor never falls below ``1 - BET_CAP``.

    Args:
        differences: Observations in [-1, 1] in their order of arrival.
        plan_effect: The planned effect ``E`` in (0, 1).

    Returns:
        ``log F_t`` after each observation.

    Raises:
        ValueError: ``plan_effect`` outside (0, 1) or a value outside [-1, 1].

    Examples:
        >>> wealth = futility_log_wealth(np.zeros(200), 0.2)  # no effect, case after case
        >>> bool(wealth[4] >= np.log(1 / 0.2)), bool(wealth[-1] >= np.log(1 / 0.2))
        (False, True)
    """
    if not 0.0 < plan_effect < 1.0:
        raise ValueError(f"the planned effect must lie in (0, 1), got {plan_effect}")
    d = np.asarray(differences, dtype=float)
    if d.size and (not np.all(np.isfinite(d)) or np.any(np.abs(d) > 1 + 1e-12)):
        raise ValueError("a futility boundary needs differences in [-1, 1]")
    steps = np.arange(1, len(d) + 1, dtype=float)
    mean = np.cumsum(d) / steps
    mean_prev = np.concatenate([[0.0], mean[:-1]])
    var_prev = np.concatenate([[1.0], (1.0 + np.cumsum((d - mean_prev) ** 2))[:-1] / steps[:-1]])
    bets = np.minimum(plan_effect / (var_prev + plan_effect**2), BET_CAP / (1.0 - plan_effect))
    return np.cumsum(np.log1p(-bets * (d - plan_effect)))


class Look(NamedTuple):
    """The state of a sequential comparison after one look.

    Attributes:
        n_cases: Cases observed so far.
        estimate: Mean per-case difference, clipped into the interval.
        ci_low: Lower bound of the confidence sequence.
        ci_high: Upper bound of the confidence sequence.
        verdict: The verdict at this look (:func:`sequential_verdict`).
        settled: Whether the comparison may stop here (a verdict, or futility).
        reason: ``improved``, ``regressed``, ``futile`` (the sequence inside the
            threshold band), ``futile-planned`` (the planned effect excluded) or ``""`` (not
            settled).
        futility_wealth: Wealth of the planned-effect futility bettor at this look (None:
            no planned effect).
    """

    n_cases: int
    estimate: float
    ci_low: float
    ci_high: float
    verdict: Verdict
    settled: bool
    reason: str
    futility_wealth: float | None = None

    def to_dict(self) -> dict[str, object]:
        """This look as plain JSON values (``futility_wealth`` only with a planned effect)."""
        out: dict[str, object] = {
            "n_cases": int(self.n_cases),
            "estimate": float(self.estimate),
            "ci_low": float(self.ci_low),
            "ci_high": float(self.ci_high),
            "verdict": self.verdict,
            "settled": bool(self.settled),
            "reason": self.reason,
        }
        if self.futility_wealth is not None:
            out["futility_wealth"] = float(self.futility_wealth)
        return out


def sequential_verdict(
    estimate: float, ci_low: float, ci_high: float, threshold: float
) -> tuple[Verdict, str]:
    """The three-way verdict at one look, and whether the comparison is settled.

    - ``improved``: the sequence's lower bound is above 0 **and** the estimate (clipped into
      the sequence) is at least ``threshold``;
    - ``regressed``: the upper bound is below 0;
    - ``futile`` (verdict ``inconclusive``, settled): the sequence lies inside
      ``(-threshold, threshold)``: every effect that could give *improved* is excluded (the
      bounds only narrow and the estimate stays inside them, so no number of further cases
      can give it), and any regression left is smaller than the threshold;
    - otherwise ``inconclusive``, not settled.

    Args:
        estimate: Clipped mean difference.
        ci_low: Lower bound.
        ci_high: Upper bound.
        threshold: Practical threshold.

    Returns:
        ``(verdict, reason)`` with reason ``""`` when not settled.

    Examples:
        >>> sequential_verdict(0.12, 0.02, 0.2, 0.05)
        ('improved', 'improved')
        >>> sequential_verdict(0.01, -0.02, 0.04, 0.05)
        ('inconclusive', 'futile')
    """
    if ci_low > 0 and estimate >= threshold - _TOLERANCE:
        return "improved", "improved"
    if ci_high < 0:
        return "regressed", "regressed"
    if ci_high < threshold - _TOLERANCE and ci_low > -threshold + _TOLERANCE:
        return "inconclusive", "futile"
    return "inconclusive", ""


def run_looks(
    differences: np.ndarray,
    look_at: np.ndarray,
    *,
    threshold: float,
    confidence: float,
    stop: bool = True,
    plan_cases: int | None = None,
    bound: float = 1.0,
    plan_effect: float | None = None,
    futility_beta: float = FUTILITY_BETA,
) -> list[Look]:
    """The looks of a sequential comparison at the given numbers of cases.

    Differences in ``[-bound, bound]`` (adaptive trials' corrected differences) are scaled
    into [-1, 1] for the sequence and the bounds scaled back before the verdict, so
    ``estimate``, ``ci_low`` and ``ci_high`` are in the differences' units.

    With ``plan_effect`` a look that :func:`sequential_verdict` leaves unsettled (its
    verdicts and its own futility rule come first) stops as
    ``futile-planned`` (verdict ``inconclusive``) when the futility wealth
    (:func:`futility_log_wealth`, on the same scale) has reached ``1 / futility_beta``: when
    the true difference is at least ``plan_effect``, that happens with probability at most
    ``futility_beta``.

    Args:
        differences: Per-case differences in the order the cases were drawn.
        look_at: Increasing numbers of cases after which to look (each in ``1..len``).
        threshold: Practical threshold.
        confidence: Level of the confidence sequence.
        stop: Stop at the first settled look (the sequential design); else look at all.
        plan_cases: Number of cases the bets are tuned for (see :func:`confidence_sequence`).
        bound: The differences' range is ``[-bound, bound]`` (at least 1).
        plan_effect: The planned effect of the futility boundary (None: no such boundary).
        futility_beta: Its error rate ``beta`` in (0, 1).

    Returns:
        The looks taken.

    Raises:
        ValueError: ``futility_beta`` or ``plan_effect`` (scaled) outside (0, 1), or a
            difference outside the range.
    """
    scaled = _checked(np.asarray(differences, dtype=float) / bound)
    sequence = _LookedSequence(scaled, confidence, plan_cases, whole=not stop)
    wealth = None
    boundary = math.inf
    if plan_effect is not None:
        if not 0.0 < futility_beta < 1.0:
            raise ValueError(f"futility_beta must lie in (0, 1), got {futility_beta}")
        wealth = futility_log_wealth(scaled, plan_effect / bound)
        boundary = math.log(1.0 / futility_beta)
    looks: list[Look] = []
    for n in look_at:
        i = int(n) - 1
        est, low, high = (bound * value for value in sequence.at(i))
        verdict, reason = sequential_verdict(est, low, high, threshold)
        log_wealth = None if wealth is None else float(wealth[i])
        if not reason and log_wealth is not None and log_wealth >= boundary:
            reason = FUTILE_PLANNED
        looks.append(
            Look(
                int(n), est, low, high, verdict, bool(reason), reason,
                None if log_wealth is None else math.exp(min(log_wealth, 700.0)),
            )
        )
        if stop and reason:
            break
    return looks


#: Fewest new observations a stopping :func:`run_looks` adds to its sequence at once: a batch
#: has a fixed cost of about 5 observations' grid wealth, so smaller batches spend more on it
#: than they save of the observations computed past the stop.
_MIN_BATCH = 24
#: A batch also adds at least ``1 / _BATCH_GROWTH`` of the observations before it (a long
#: sequence takes few batches; the rows past the stop stay about a fifth of those read).
_BATCH_GROWTH = 4


class _LookedSequence:
    """The confidence sequence of some observations, computed only as far as it is read.

    A stopping sequential comparison reads the sequence at its looks up to the first settled
    one, usually far short of the budget; the grid wealth (``t`` rows of ``GRID`` points, the
    whole cost of a look) is computed in batches of observations as the looks reach them,
    each batch at least :data:`_MIN_BATCH` observations and a quarter of those before it
    (:data:`_BATCH_GROWTH`). The values read are the same numbers, bit for bit, as those of
    :func:`confidence_sequence` of all the observations (:class:`RunningConfidenceSequence`).

    Args:
        differences: The checked observations in [-1, 1], in their order of arrival.
        confidence: Level ``1 - alpha`` of the sequence.
        plan_cases: Number of cases the bets are tuned for (None: no planned size).
        whole: Compute the whole sequence at once (every observation will be read).
    """

    def __init__(
        self, differences: np.ndarray, confidence: float, plan_cases: int | None, *, whole: bool
    ) -> None:
        self._differences = differences
        self._running = RunningConfidenceSequence(confidence, plan_cases)
        self._columns: list[np.ndarray] = [np.zeros(0)] * 3  # estimate, ci_low, ci_high so far
        if whole:
            self._extend(len(differences))

    def _extend(self, size: int) -> None:
        computed = self._running.n
        batch = self._running.extend(self._differences[computed : computed + size])
        self._columns = [
            np.concatenate([before, new])
            for before, new in zip(
                self._columns, (batch.estimate, batch.ci_low, batch.ci_high), strict=True
            )
        ]

    def at(self, index: int) -> tuple[float, float, float]:
        """``(estimate, ci_low, ci_high)`` after observation ``index`` (0-based, >= 0)."""
        computed = self._running.n
        if index >= computed:
            self._extend(max(index + 1 - computed, _MIN_BATCH, computed // _BATCH_GROWTH))
        estimate, low, high = self._columns
        return float(estimate[index]), float(low[index]), float(high[index])


def case_order(case_ids: list[str], seed: int | None) -> list[str]:
    """The random order, fixed by ``seed``, in which a sequential design draws cases.

    Args:
        case_ids: The suite's case ids (any order: they are sorted first).
        seed: Seed of the order.

    Returns:
        The case ids in drawing order.

    Examples:
        >>> case_order(["c", "a", "b"], 1) == case_order(["b", "c", "a"], 1)
        True
    """
    ordered = sorted(set(case_ids))
    permutation = np.random.default_rng(seed).permutation(len(ordered))
    return [ordered[int(i)] for i in permutation]
