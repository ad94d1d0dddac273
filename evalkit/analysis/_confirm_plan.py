"""The plan of a confirmation: which screened cases to rerun, at how many trials, at what price.

A comparison's per-case rows are a screen. :func:`flagged_cases` reads the cases it flags;
:func:`plan_confirmation` gives each the trials per side at which its own exact test, on fresh
trials alone and Holm-corrected over the cases confirmed, reaches the target power for the
effect the screen saw, capped, and prices the whole (items, agent cost, wall time) from the
screened runs' own rows. A budget of items drops the weakest-screened cases first, and the
plan says which and why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalkit._plain import plain_fields
from evalkit._settings import ALPHA, POWER, THRESHOLD
from evalkit.analysis._step_price import DEFAULT_CONCURRENCY, Price, price
from evalkit.errors import ConfigError
from evalkit.stats import PairedComparison, adjust_pvalues, trials_to_confirm

#: Cap on the trials per side of one confirmed case.
CONFIRM_MAX_TRIALS = 40
#: Words of the note on cases the cap on trials holds below the target power.
CAP_NOTE = "(the cap) stay below"
#: Standard errors the screened change is moved toward zero before planning (winner's curse).
SHRINK_SE = 1


@dataclass(frozen=True)
class FlaggedCase:
    """A case the screen flagged (or the user named), with its screening figures.

    Attributes:
        case_id: The case.
        baseline_passes: Baseline passes in the screen.
        baseline_trials: Baseline trials in the screen.
        candidate_passes: Candidate passes in the screen.
        candidate_trials: Candidate trials in the screen.
        estimate: Screened difference of pass rates (candidate - baseline).
        p_value: Its unadjusted per-case p-value.
        p_screen: Its p-value adjusted by the screen (Benjamini-Hochberg over the case rows).
        verdict: The screen's per-case verdict.
        named: True when ``--case`` named it (flagged or not).
    """

    case_id: str
    baseline_passes: int
    baseline_trials: int
    candidate_passes: int
    candidate_trials: int
    estimate: float
    p_value: float
    p_screen: float
    verdict: str
    named: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The case as JSON values."""
        return plain_fields(self)


def flagged_cases(
    comparison: PairedComparison, alpha: float = ALPHA.default
) -> tuple[FlaggedCase, ...]:
    """The cases a comparison's per-case screen flags, strongest first.

    A case is flagged when its row has the verdict ``improved`` or ``regressed``, or when its
    p-value stays below ``alpha`` after the screen's false-discovery-rate correction. The
    rows are the comparison's pooled case rows (one per case, over its providers and
    conditions) where it has them, else its per-unit rows, corrected here by
    Benjamini-Hochberg, each case keeping its strongest.

    Args:
        comparison: The screening comparison (pass rates).
        alpha: The screen's false discovery rate.

    Returns:
        The flagged cases, by ascending screening p-value.
    """
    return tuple(c for c in _screened(comparison, alpha) if c.p_screen < alpha
                 or c.verdict in ("improved", "regressed"))  # fmt: skip


def screened_case(
    comparison: PairedComparison, case_id: str, alpha: float = ALPHA.default
) -> FlaggedCase:
    """One case's screening figures, flagged or not (a case ``--case`` names).

    Raises:
        ConfigError: The comparison has no row of that case.
    """
    for case in _screened(comparison, alpha):
        if case.case_id == case_id:
            return FlaggedCase(**{**plain_fields(case), "named": True})
    raise ConfigError(
        f"--case: the compared runs have no case '{case_id}' on both sides; name a case of "
        "the comparison (evalkit compare lists them)"
    )


def strongest_cases(
    comparison: PairedComparison, count: int = 3, alpha: float = ALPHA.default
) -> tuple[FlaggedCase, ...]:
    """The ``count`` cases of the screen with the smallest p-values, flagged or not."""
    return tuple(c for c in _screened(comparison, alpha) if c.estimate != 0)[:count]


def _screened(comparison: PairedComparison, alpha: float) -> list[FlaggedCase]:
    rows = comparison.case_rows
    if rows is None or rows.empty:
        return []
    if comparison.metric != "passed":
        raise ConfigError("confirm: confirms pass rates only (compare --metric passed)")
    if comparison.case_screen is not None:  # one row per case, pooled and already screened
        screen = rows["p_adjusted"].to_numpy(dtype=float)
    else:
        screen = adjust_pvalues(rows["p_value"].to_numpy(dtype=float), alpha, "fdr_bh")
    rows = rows.assign(_screen=screen).sort_values(["p_value", "case_id"], kind="stable")
    out = []
    for case_id, group in rows.groupby("case_id", sort=False):
        row = group.iloc[0]
        out.append(
            FlaggedCase(
                case_id=str(case_id),
                baseline_passes=int(round(row["baseline_rate"] * row["n_baseline"])),
                baseline_trials=int(row["n_baseline"]),
                candidate_passes=int(round(row["candidate_rate"] * row["n_candidate"])),
                candidate_trials=int(row["n_candidate"]),
                estimate=float(row["estimate"]),
                p_value=float(row["p_value"]),
                p_screen=float(row["_screen"]),
                verdict=str(row["verdict"]),
            )
        )
    return out


@dataclass(frozen=True)
class CasePlan:
    """One case of a confirmation: the rates it is planned at and its trials per side.

    Attributes:
        case_id: The case.
        screen: Its screening figures.
        baseline_rate: Baseline pass rate planned for (the screen's, shrunk: passes + 1/2
            over trials + 1, so 3 of 3 plans at 0.875, not at a certain pass).
        candidate_rate: Candidate pass rate planned for (likewise, with a flagged case's
            change moved :data:`SHRINK_SE` standard errors toward zero, and at least the
            practical threshold away from the baseline).
        trials: Trials per side.
        power: The exact power at those trials and the Holm level of the plan's first step.
        capped: True when the cap on trials was reached below the target power.
        share: Under allocation, the case's share of the trials (None: the power plan).
        pilot_pairs: Under allocation, the screen's pairs of the case.
        pilot_differed: Of those, the pairs that differed.
    """

    case_id: str
    screen: FlaggedCase
    baseline_rate: float
    candidate_rate: float
    trials: int
    power: float
    capped: bool
    share: float | None = None
    pilot_pairs: int | None = None
    pilot_differed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The case's plan as JSON values."""
        return plain_fields(self)


@dataclass(frozen=True)
class ConfirmPlan:
    """What a confirmation runs and costs, before anything is spent.

    Attributes:
        cases: The cases it reruns, with their trials per side.
        dropped: Cases left out by the budget, weakest-screened first dropped.
        items: Items it runs (both sides, every planned trial).
        price: Items, agent cost and wall time (from the screened runs' rows).
        alpha: Family-wise level of the confirmatory verdicts.
        power: Target power of each case.
        max_trials: Cap on the trials per side.
        budget: The budget of items (None: none).
        notes: What the plan could not do as asked.
        allocation: How the trials were spread over the cases when not by each case's power
            (``--allocate-trials``: :func:`~evalkit.analysis.allocate_confirmation`).
    """

    cases: tuple[CasePlan, ...]
    dropped: tuple[FlaggedCase, ...]
    items: int
    price: Price
    alpha: float
    power: float
    max_trials: int
    budget: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    allocation: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON values (``price`` with its ``text``)."""
        out = plain_fields(self)
        out["price"] = {**plain_fields(self.price), "text": self.price.text()}
        return out


def plan_confirmation(
    screen: Sequence[FlaggedCase],
    rows: pd.DataFrame,
    *,
    alpha: float = ALPHA.default,
    power: float = POWER.default,
    max_trials: int = CONFIRM_MAX_TRIALS,
    threshold: float = THRESHOLD.default,
    budget: int | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> ConfirmPlan:
    """Plan the confirmation of ``screen``'s cases: trials per case, items, price, budget.

    Each case is planned at the level ``alpha / m`` (Holm's first step, m the cases
    confirmed), so the plan holds for every case Holm reaches. When the items exceed
    ``budget`` the case with the largest screening p-value is dropped and the rest replanned
    (one case fewer lowers the level each needs), until the plan fits; the strongest case
    alone runs at the trials the budget affords (its power said in a note).

    Args:
        screen: The cases to confirm, strongest first (:func:`flagged_cases`).
        rows: The screened runs' result rows (for the price of an item).
        alpha: Family-wise level of the confirmatory verdicts.
        power: Target power per case.
        max_trials: Cap on the trials per side of a case.
        threshold: Practical threshold of "improved".
        budget: Items the confirmation may run at most (None: no cap).
        concurrency: Items in flight the wall time assumes.

    Returns:
        The plan (possibly with no case, when not even one fits the budget).
    """
    kept = list(screen)
    dropped: list[FlaggedCase] = []
    notes: list[str] = []
    while True:
        cases = tuple(
            _case_plan(c, alpha / max(len(kept), 1), power, max_trials, threshold) for c in kept
        )
        items = 2 * sum(c.trials for c in cases)
        if budget is None or items <= budget or not kept:
            break
        if len(kept) == 1 and budget >= 4:  # the strongest case alone: at the trials it affords
            cases = (_case_plan(kept[0], alpha, power, budget // 2, threshold),)
            items = 2 * cases[0].trials
            notes.append(
                f"the budget of {budget:,} items binds: {cases[0].case_id} runs "
                f"{cases[0].trials} trials per side, power {cases[0].power:.0%}"
            )
            break
        dropped.insert(0, kept.pop())
    if dropped:
        notes.append(
            f"the budget of {budget:,} items binds: left out "
            + ", ".join(c.case_id for c in dropped)
            + " (the weakest in the screen first); raise --budget to confirm them too"
        )
    capped = [c.case_id for c in cases if c.capped and c.trials == max_trials]
    if capped:
        notes.append(
            f"{', '.join(capped)}: {max_trials} trials per side {CAP_NOTE} {power:.0%} "
            "power for the screened effect; raise --max-trials for more"
        )
    return ConfirmPlan(
        cases=cases,
        dropped=tuple(dropped),
        items=items,
        price=price(items, rows, concurrency),
        alpha=alpha,
        power=power,
        max_trials=max_trials,
        budget=budget,
        notes=tuple(notes),
    )


def _case_plan(
    case: FlaggedCase, level: float, power: float, max_trials: int, threshold: float
) -> CasePlan:
    base = (case.baseline_passes + 0.5) / (case.baseline_trials + 1)
    cand = (case.candidate_passes + 0.5) / (case.candidate_trials + 1)
    direction = 1.0 if cand > base else -1.0
    se = math.sqrt(
        base * (1 - base) / (case.baseline_trials + 1)
        + cand * (1 - cand) / (case.candidate_trials + 1)
    )
    # a case flagged because it looked large is smaller on average (the winner's curse): plan
    # for the screened change less SHRINK_SE standard errors, and never below the threshold;
    # a case the user named was not selected by the screen, and is planned as it was seen
    shrink = 0.0 if case.named else SHRINK_SE * se
    effect = max(abs(cand - base) - shrink, threshold)
    cand = float(np.clip(base + direction * effect, 0.0, 1.0))
    plan = trials_to_confirm(
        base, cand, alpha=level, power=power, max_trials=max_trials, threshold=threshold
    )
    return CasePlan(
        case_id=case.case_id,
        screen=case,
        baseline_rate=base,
        candidate_rate=cand,
        trials=plan.trials,
        power=plan.power,
        capped=plan.capped,
    )
