"""A confirmation's trials spread over its cases by their pilot spread (Neyman allocation).

:func:`~evalkit.analysis.plan_confirmation` gives every case the trials its own exact test
needs for the effect the screen saw. :func:`allocate_confirmation` keeps that plan's items
and spreads them instead with the probabilities of :class:`~evalkit.stats.NeymanAllocation`
(:func:`~evalkit.stats.allocation_probabilities`), computed from the screen's pairs of each
case (its baseline and candidate trial ``k`` paired, in trial order): a case whose pilot pairs
never differed gets about the floor's share, the cases whose pairs differed get more, in
proportion to the root mean square of their pair differences.

Validity. The shares are a function of the screening data only, and the confirmation's trials
are fresh, independent of it; so, given its trials, each case's Fisher test on the new trials
alone keeps its level and its Newcombe interval its coverage, and Holm over the cases keeps the
family-wise error. No inverse-probability weights are needed here: each case is tested on its
own trials, not pooled into a mean.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalkit.analysis._confirm_plan import CAP_NOTE, CasePlan, ConfirmPlan
from evalkit.stats import NeymanAllocation, allocation_probabilities, fisher_power

#: Fewest trials per side a confirmed case gets under allocation (Fisher's smallest table).
MIN_TRIALS = 2


def pilot_pairs(
    baseline: pd.DataFrame, candidate: pd.DataFrame, case_ids: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Each case's screened pairs and how many of them differed.

    A case's ``k``-th baseline trial (in trial order, then provider) is paired with its
    ``k``-th candidate trial; unpaired trials are left out.

    Args:
        baseline: The screen's baseline rows (``case_id, trial, passed``), one condition.
        candidate: Its candidate rows, one condition.
        case_ids: The cases, in the order of the arrays returned.

    Returns:
        ``(pairs, differed)``, one entry per case.

    Examples:
        >>> base = pd.DataFrame({"case_id": ["a"] * 3, "trial": [0, 1, 2],
        ...                      "passed": [True, True, False]})
        >>> cand = base.assign(passed=[True, False, False])
        >>> [a.tolist() for a in pilot_pairs(base, cand, ["a", "b"])]
        [[3.0, 0.0], [1.0, 0.0]]
    """
    sides = [_outcomes(frame) for frame in (baseline, candidate)]
    pairs = np.zeros(len(case_ids))
    differed = np.zeros(len(case_ids))
    for index, case in enumerate(case_ids):
        base, cand = (side.get(case, np.zeros(0, dtype=bool)) for side in sides)
        n = min(len(base), len(cand))
        pairs[index] = n
        differed[index] = float(np.sum(base[:n] != cand[:n]))
    return pairs, differed


def _outcomes(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    if frame.empty:
        return {}
    order = [c for c in ("case_id", "trial", "provider") if c in frame.columns]
    ordered = frame.sort_values(order, kind="stable")
    return {
        str(case): group["passed"].fillna(False).astype(bool).to_numpy()
        for case, group in ordered.groupby("case_id", sort=False)
    }


def apportion(total: int, shares: np.ndarray, low: int, high: int) -> np.ndarray:
    """``total`` trials split in proportion to ``shares``, each in ``[low, high]``.

    Each case gets ``clip(scale * share, low, high)`` with the one scale at which these sum to
    ``total`` (so a case held at a bound leaves the rest to the others), rounded by largest
    remainders; ``total`` is first brought into ``[low * m, high * m]``.

    Examples:
        >>> apportion(20, np.array([0.5, 0.3, 0.2]), 2, 40).tolist()
        [10, 6, 4]
        >>> apportion(30, np.array([0.9, 0.05, 0.05]), 2, 12).tolist()
        [12, 9, 9]
    """
    m = len(shares)
    total = int(np.clip(total, low * m, high * m))
    weights = np.asarray(shares, dtype=float)

    def spread(scale: float) -> np.ndarray:
        return np.asarray(np.clip(scale * weights, low, high))

    lo, hi = 0.0, float(high) / max(float(weights.min()), 1e-12)
    for _ in range(200):  # sum(spread) rises with the scale: bisect to the total
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if spread(mid).sum() < total else (lo, mid)
    raw = spread(hi)
    counts = np.floor(raw + 1e-9).astype(int)
    room = np.flatnonzero(counts < high)
    order = room[np.argsort(-(raw[room] - counts[room]), kind="stable")]
    counts[order[: max(total - int(counts.sum()), 0)]] += 1
    return counts


def allocate_confirmation(
    plan: ConfirmPlan,
    pairs: np.ndarray,
    differed: np.ndarray,
    *,
    threshold: float,
    design: NeymanAllocation | None = None,
) -> ConfirmPlan:
    """``plan`` with its items spread over its cases by :class:`~evalkit.stats.NeymanAllocation`.

    Args:
        plan: The power plan (:func:`~evalkit.analysis.plan_confirmation`).
        pairs: The screen's pairs per case, in the order of ``plan.cases``
            (:func:`pilot_pairs`).
        differed: Of those, the pairs that differed.
        threshold: Practical threshold of "improved" (for each case's power).
        design: The allocation (None: the default ``NeymanAllocation``, floor 0.7).

    Returns:
        The plan with the same items (within ``[2, max_trials]`` per case), each case's
        ``trials`` and ``power`` (at its planned rates and Holm's first level) at its share,
        and its ``share``, ``pilot_pairs`` and ``pilot_differed`` filled in;
        ``allocation`` names the design.
    """
    if not plan.cases:
        return plan
    design = NeymanAllocation() if design is None else design
    shares = allocation_probabilities(pairs, differed, design)
    total = sum(c.trials for c in plan.cases)
    trials = apportion(total, shares, MIN_TRIALS, plan.max_trials)
    level = plan.alpha / len(plan.cases)
    cases = tuple(
        _at(case, int(k), float(q), (level, plan.power), threshold, plan.max_trials, n, s)
        for case, k, q, n, s in zip(plan.cases, trials, shares, pairs, differed, strict=True)
    )
    notes = [n for n in plan.notes if CAP_NOTE not in n]  # the power plan's caps moved
    capped = [c.case_id for c in cases if c.capped]
    if capped:
        notes.append(
            f"{', '.join(capped)}: {plan.max_trials} trials per side {CAP_NOTE} "
            f"{plan.power:.0%} power for the screened effect; raise --max-trials for more"
        )
    lowered = [
        c.case_id for c, own in zip(cases, plan.cases, strict=True)
        if c.power < plan.power and c.power < own.power - 1e-9 and not c.capped
    ]  # fmt: skip
    if lowered:
        notes.append(
            f"{', '.join(lowered)}: below {plan.power:.0%} power at their share of the trials "
            "(spread by the screened pairs); --no-allocate-trials plans each case at its power"
        )
    return dataclasses.replace(  # the same items: the plan's total is within the bounds
        plan, cases=cases, notes=tuple(notes),
        allocation=f"Neyman allocation of the screened pairs (floor {design.floor:g})",
    )  # fmt: skip


def _at(
    case: CasePlan,
    trials: int,
    share: float,
    target: tuple[float, float],
    threshold: float,
    max_trials: int,
    pairs: float,
    differed: float,
) -> CasePlan:
    level, goal = target  # Holm's first level, the plan's power
    power = fisher_power(case.baseline_rate, case.candidate_rate, trials, level, threshold)
    return dataclasses.replace(
        case,
        trials=trials,
        power=power,
        capped=trials >= max_trials and power < goal,
        share=share,
        pilot_pairs=int(pairs),
        pilot_differed=int(differed),
    )
