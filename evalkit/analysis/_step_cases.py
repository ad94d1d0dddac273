"""The next step whose goal is naming a case: trials per case that survive the case screen.

"Which cases moved" is answered by the comparison's case screen: one row per case (its
providers pooled), each tested on its own trials and corrected across the screened rows
(Benjamini-Hochberg at 5 % by default, ``--case-correction``). More trials per case make one
case's test stronger, but its p-value must then clear the correction, not ``alpha``. A plan
for naming a case is therefore made at the level at which the screen names it *whatever the
other rows show*:

- Benjamini-Hochberg, Holm and Bonferroni name a row whose p-value is at most ``alpha / m``
  (``m`` screened rows): Holm's first step and Benjamini-Hochberg's smallest step;
- Benjamini-Yekutieli at most ``alpha / (m * (1 + 1/2 + ... + 1/m))``.

At that level the trials per side come from the exact power of the case's Fisher test
(:func:`evalkit.stats.trials_to_confirm`), for the change the pilot saw moved a standard
error toward zero (a case picked because it looked large is smaller on average), and never
planned below the practical threshold, which binds a named case's estimate in both
directions. Several providers pooled by a stratified test are planned as one Fisher table of
their trials together (the providers' rates averaged).
"""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.analysis._confirm_plan import (
    CasePlan,
    FlaggedCase,
    _case_plan,
    flagged_cases,
    strongest_cases,
)
from evalkit.analysis._step_types import NEXT_STEP_POWER
from evalkit.stats import PairedComparison, fisher_power

#: Most trials per case (and side) a naming plan searches.
NAMING_MAX_TRIALS = 200
#: Cases a naming plan is made for at most (the strongest the screen ranks).
NAMING_CASES = 3


@dataclass(frozen=True)
class NamingPlan:
    """Trials per case at which the case screen names the cases that moved.

    Attributes:
        cases: The cases planned for (strongest first) with their trials and exact power.
        rows: Case rows the screen corrects across.
        correction: The screen's correction (``"fdr_bh"``, ...).
        level: The per-row level the plan is made at (see the module doc).
        trials: Trials per case and side that name every planned case at ``NEXT_STEP_POWER``
            (None: none up to :data:`NAMING_MAX_TRIALS` does).
        power: The smallest planned power of those cases at ``trials``.
        beyond: Moved cases that no number of trials up to :data:`NAMING_MAX_TRIALS` names
            at that power (left to ``evalkit confirm``, which reruns only them).
    """

    cases: tuple[CasePlan, ...]
    rows: int
    correction: str
    level: float
    trials: int | None
    power: float
    beyond: tuple[str, ...] = ()


def naming_level(alpha: float, rows: int, correction: str) -> float:
    """The per-row level at which the screen names a row whatever the other rows show.

    Examples:
        >>> naming_level(0.05, 40, "fdr_bh")
        0.00125
        >>> round(naming_level(0.05, 3, "fdr_by"), 5)
        0.00909
    """
    rows = max(int(rows), 1)
    if correction == "none":
        return float(alpha)
    if correction == "fdr_by":
        return float(alpha) / (rows * sum(1.0 / i for i in range(1, rows + 1)))
    return float(alpha) / rows


def naming_plan(
    result: PairedComparison, moved: list[str], current_trials: int = 1
) -> NamingPlan | None:
    """Plan the trials per case that name the cases that moved, through the case screen.

    Args:
        result: The comparison (pass rates, with its case rows).
        moved: Cases that moved past the threshold in the sample (strongest first).
        current_trials: Trials per case already run (the plan never asks for fewer).

    Returns:
        The plan, or None when nothing moved past the threshold or the metric is not pass
        rates (the screen's exact test is for pass bits).
    """
    if result.metric != "passed" or not moved:
        return None
    rows = result.case_rows
    if rows is None or rows.empty:
        return None
    alpha = float(result.alpha)
    past = set(moved)
    chosen: list[FlaggedCase] = [c for c in flagged_cases(result, alpha) if c.case_id in past]
    if not chosen:
        chosen = [c for c in strongest_cases(result, len(rows), alpha) if c.case_id in past]
    chosen = chosen[:NAMING_CASES]
    if not chosen:
        return None
    level = naming_level(alpha, len(rows), str(result.case_correction))
    threshold = float(result.threshold)
    plans = tuple(_case_plan(c, level, NEXT_STEP_POWER, NAMING_MAX_TRIALS, threshold)
                  for c in chosen)
    reached = tuple(p for p in plans if not p.capped)
    trials = max((p.trials for p in reached), default=None)
    beyond = tuple(p.case_id for p in plans if p.capped) if reached else ()
    plans = reached or plans  # plan for the cases trials can name; ``beyond`` says the others
    if trials is None:
        power = max(p.power for p in plans)
    else:  # every planned case at the one number of trials the command runs
        trials = max(trials, int(current_trials))
        power = min(fisher_power(p.baseline_rate, p.candidate_rate, trials, level, threshold)
                    for p in plans)
    return NamingPlan(plans, len(rows), str(result.case_correction), level, trials, power,
                      beyond)
