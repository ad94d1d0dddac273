"""The anytime-valid comparison of a run under Neyman allocation, from its tidy results.

The run's rounds are replayed (:func:`~evalkit.stats.allocation_plan`), the weighted
increments of its complete rounds go to the betting confidence sequence
(:func:`~evalkit.stats._sequential.run_looks`, range ``1 / floor``) with a look after each
round, and the fixed-design side figures (cases table, wins, losses, sign-flip test) are
those of ``compare`` on the trials run. A look's ``n_cases`` counts *pairs* here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalkit._settings import N_RESAMPLES_QUICK
from evalkit.stats._allocation import NeymanAllocation
from evalkit.stats._allocation_replay import allocation_plan
from evalkit.stats._compare import compare_tables
from evalkit.stats._options import CompareOptions
from evalkit.stats._paired import PairedComparison
from evalkit.stats._sequential import FUTILITY_BETA, SEQUENTIAL_METHOD, run_looks
from evalkit.stats._sequential_compare import SequentialComparison, sequential_note

#: The interval's method under allocation.
ALLOCATION_METHOD = (
    f"{SEQUENTIAL_METHOD} on Horvitz-Thompson weighted pairs (Neyman allocation of trials)"
)


def allocated_compare_tables(
    data: pd.DataFrame,
    case_ids: Sequence[str],
    conditions: tuple[str, str],
    design: NeymanAllocation,
    *,
    options: CompareOptions | None = None,
    plan_pairs: int | None = None,
    plan_effect: float | None = None,
    futility_beta: float = FUTILITY_BETA,
    max_rounds: int | None = None,
) -> SequentialComparison:
    """Anytime-valid comparison of a run under allocation, a look after each complete round.

    Args:
        data: Tidy results of the run (``case_id, condition, trial, passed``).
        case_ids: The cases the run draws from.
        conditions: ``(baseline, candidate)``.
        design: The allocation the run followed.
        options: Its ``threshold`` (of *improved*) and ``confidence`` (the level of the
            confidence sequence) decide; None: the defaults.
        plan_pairs: Pairs the bets are tuned for (None: untuned).
        plan_effect: Planned effect of the futility boundary (None: none).
        futility_beta: Its error rate.
        max_rounds: Look at most this many rounds (None: every complete one).

    Returns:
        A :class:`~evalkit.stats.SequentialComparison` whose looks count pairs, whose
        ``order`` is the cases drawn from (sorted) and whose ``method`` names the weighting.

    Raises:
        InputError: Bad results (see :func:`~evalkit.stats.allocation_plan`).
    """
    plan = allocation_plan(data, case_ids, conditions, design, max_rounds=max_rounds)
    settings = options or CompareOptions()
    fixed: PairedComparison = compare_tables(
        data,
        conditions=conditions,
        options=settings.model_copy(
            update={"n_resamples": N_RESAMPLES_QUICK.default, "resample_trials": False}
        ),
    )
    looks = (
        run_looks(
            plan.increments,
            np.array(plan.looks),
            threshold=fixed.threshold,
            confidence=settings.confidence,
            plan_cases=plan_pairs,
            bound=design.bound,
            plan_effect=plan_effect,
            futility_beta=futility_beta,
        )
        if plan.looks
        else []
    )
    last = looks[-1] if looks else None
    return SequentialComparison.from_looks(
        fixed,
        looks,
        note=sequential_note(last, fixed.threshold, None, unit="pairs"),
        confidence=settings.confidence,
        order=sorted(set(case_ids)),
        plan_effect=plan_effect,
        futility_beta=futility_beta,
        method=ALLOCATION_METHOD,
    )
