"""A run under Neyman allocation, replayed from its outcomes: what to run next, what to look at.

The rounds of :mod:`evalkit.stats._allocation` are a function of the outcomes and the seed
alone: round ``r`` draws with :func:`draw_round` from the probabilities of the pairs of rounds
``0..r-1``, and the ``k``-th draw of a case in the whole run is its pair of trial ``k``
(baseline and candidate trial ``k``). So the tidy results of a run say, without any other
record, which rounds are complete, every pair's weighted increment and how many trials each
case needs for the next round: a resumed or re-read run replays the same draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.stats._allocation import NeymanAllocation, allocation_probabilities, draw_round
from evalkit.stats._frame import as_frame


class AllocationPlan(NamedTuple):
    """The state of a run under allocation, replayed from its results.

    Attributes:
        rounds: Complete rounds on disk (every pair they drew has both trials).
        increments: The weighted increments of those rounds, in the order drawn.
        looks: Pairs after each complete round (where the looks are).
        trials: Trials per condition each case needs once the round after the replayed ones
            is run (the ``case_trials`` of the run that completes it; cases not drawn yet are
            absent). With ``max_rounds`` replayed, that round is round ``max_rounds + 1``.
    """

    rounds: int
    increments: np.ndarray
    looks: list[int]
    trials: dict[str, int]


def _outcomes(frame: pd.DataFrame, condition: str, cases: list[str]) -> dict[str, list[bool]]:
    """Each case's outcomes of one condition by trial, up to its first missing trial."""
    rows = frame[frame["condition"] == condition]
    out: dict[str, list[bool]] = {case: [] for case in cases}
    for case, group in rows.groupby("case_id"):
        if case not in out:
            continue
        by_trial = dict(zip(group["trial"].astype(int), group["passed"].astype(bool), strict=True))
        trial = 0
        while trial in by_trial:
            out[str(case)].append(by_trial[trial])
            trial += 1
    return out


def allocation_plan(
    data: pd.DataFrame,
    case_ids: Sequence[str],
    conditions: tuple[str, str],
    design: NeymanAllocation,
    max_rounds: int | None = None,
) -> AllocationPlan:
    """Replay a run under allocation from its results.

    Args:
        data: Tidy results (``case_id, condition, trial, passed``; errors count as fails),
            possibly empty.
        case_ids: The suite's cases the run draws from (its ``N``; their order does not
            matter).
        conditions: ``(baseline, candidate)``.
        design: The allocation the run follows.
        max_rounds: Replay at most this many rounds (None: every complete one).

    Returns:
        An :class:`AllocationPlan`.

    Raises:
        InputError: No case to draw from, or results of cases outside ``case_ids``.

    Examples:
        >>> empty = pd.DataFrame(columns=["case_id", "condition", "trial", "passed"])
        >>> plan = allocation_plan(empty, ["a", "b"], ("none", "skill"), NeymanAllocation())
        >>> plan.rounds, sum(plan.trials.values())
        (0, 20)
    """
    cases = sorted(set(case_ids))
    if not cases:
        raise InputError("allocation: no case to draw from; select at least one case")
    frame = as_frame(data, required=("case_id", "condition", "trial")) if len(data) else None
    if frame is not None:
        unknown = sorted(set(frame["case_id"].astype(str)) - set(cases))
        if unknown:
            raise InputError(
                f"allocation: results of case {unknown[0]!r}, which is not among the cases "
                "drawn from; pass the run's case selection"
            )
    empty: dict[str, list[bool]] = {case: [] for case in cases}
    base = _outcomes(frame, conditions[0], cases) if frame is not None else empty
    cand = _outcomes(frame, conditions[1], cases) if frame is not None else empty
    n_cases = len(cases)
    pairs = np.zeros(n_cases)
    differed = np.zeros(n_cases)
    increments: list[float] = []
    looks: list[int] = []
    rounds = 0
    while True:
        q = allocation_probabilities(pairs, differed, design)
        drawn = draw_round(q, design, rounds)
        needed = pairs + np.bincount(drawn, minlength=n_cases)
        available = np.array([min(len(base[c]), len(cand[c])) for c in cases])
        if np.any(needed > available) or (max_rounds is not None and rounds >= max_rounds):
            trials = {case: int(k) for case, k in zip(cases, needed, strict=True) if k > 0}
            return AllocationPlan(rounds, np.array(increments), looks, trials)
        for index in drawn:
            case, trial = cases[index], int(pairs[index])
            difference = float(cand[case][trial]) - float(base[case][trial])
            increments.append(difference / (n_cases * q[index]))
            pairs[index] += 1
            differed[index] += abs(difference)
        rounds += 1
        looks.append(len(increments))
