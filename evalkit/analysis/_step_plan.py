"""A next step that can be run as printed: feasible on the suite, priced, in proportion.

:func:`~evalkit.analysis.next_step` plans cases and trials from the compared runs' variances.
This module turns that plan into a command worth running:

- it runs only the conditions that carried evidence (two conditions of one run: those two;
  two runs: the conditions whose pairs were evidence, not those left out as reused);
- it never asks for more cases than the suite holds: past that it says how many cases to add,
  and offers the trials per case that would do over every case the suite has, if any;
- it states the items the command runs, their estimated cost (from the runs' own cost per item,
  marked as simulated where the provider is) and wall time;
- when that is more than 10x the items compared so far it says the plan is out of proportion
  and what to do instead (add cases, raise the threshold, or accept the result).
"""

from __future__ import annotations

import dataclasses
import math
import shlex
from typing import Any

import pandas as pd

from evalkit._command_line import RebuiltLine, rebuild_run_line
from evalkit._percent import percent
from evalkit.analysis._step_price import DEFAULT_CONCURRENCY, OUT_OF_PROPORTION, price
from evalkit.analysis._step_types import NEXT_STEP_POWER, NextStep
from evalkit.stats import (
    PairedComparison,
    PowerDesign,
    equivalence_power,
    required_trials,
    tied_pairs_needed,
    tied_pairs_of as tied_pairs_behind_interval,
)

#: Most trials per case searched for an alternative at the suite's size.
MAX_TRIALS = 200


def feasible_plan(
    step: NextStep,
    result: PairedComparison,
    rows: pd.DataFrame,
    *,
    suite_path: str | None,
    two_runs: bool,
    components: Any,
    command_line: str = "",
) -> NextStep:
    """``step`` with its command, conditions, feasibility on the suite and price.

    Args:
        step: The plan (cases, trials, goal) of :func:`~evalkit.analysis.next_step`.
        result: The comparison it settles.
        rows: The compared rows (both sides).
        suite_path: The suite the runs came from (None: no command).
        two_runs: The comparison is between two runs (the command is then run once per
            skill text).
        components: The runs' variance components.
        command_line: The candidate run's ``evalkit run`` command (filters kept).

    Returns:
        The step with ``command``, ``conditions``, ``suite_cases``, ``cases_to_add``, the
        price fields, ``out_of_proportion`` and ``advice`` filled in.
    """
    suite_cases = int(rows["case_id"].nunique())
    conditions = _conditions(result, rows)
    rows = rows[rows["condition"].astype(str).isin(conditions)]  # the items compared
    trials = step.current_trials
    target = step.equivalence_cases if step.goal == "equivalence" else (
        step.cases if step.cases is not None else step.cases_at_threshold
    )
    advice: list[str] = []
    cases_to_add = None
    run_trials: int | None = trials
    if two_runs and step.goal == "verdict":
        run_trials = step.trials  # a fresh run covers the suite: plan the trials at its size
    if target is not None and target > suite_cases:
        cases_to_add = target - suite_cases
        more = _trials_at(step, components, suite_cases, result.alpha)
        said = (f"the suite has {suite_cases} cases and the plan needs {target} at {trials} "
                f"trials: add {cases_to_add} cases")
        advice.append(said + (f", or run {more} trials per case over all {suite_cases}"
                              if more else _no_trials(step)))
        run_trials = more
    elif target is None:
        run_trials = None
    base = _base(command_line, suite_path, two_runs)
    command = _command(result, step, base.words, conditions,
                       target, run_trials, trials, cases_to_add, two_runs)
    items = None
    per_case = len(conditions) * max(_providers(result), 1) * (2 if two_runs else 1)
    if command is not None and "--until-verdict" in command and target is not None:
        items = per_case * trials * target
    elif command is not None and run_trials is not None:
        items = per_case * run_trials * suite_cases
    elif target is not None:  # the plan itself, on a suite with the cases it needs
        items = per_case * trials * target
    if command is not None and two_runs:
        advice.append("run the command once with the baseline's skill text and once with the "
                      "candidate's, then compare the two runs")
    name_items = None if step.name_trials is None else per_case * step.name_trials * suite_cases
    step = dataclasses.replace(
        step, command=command, conditions=tuple(conditions), suite_cases=suite_cases,
        name_items=name_items,
        cases_to_add=cases_to_add, left_out=base.left_out if command is not None else (),
    )
    if items is None:
        return dataclasses.replace(step, advice="; ".join(advice))
    cost = price(items, rows, _concurrency(command_line))
    if cost.out_of_proportion:
        advice.append(_instead(step, cost.ratio, len(rows)))
    return dataclasses.replace(
        step, items=cost.items, cost_usd=cost.cost_usd, cost_simulated=cost.simulated,
        wall_s=cost.wall_s, ratio=cost.ratio, out_of_proportion=cost.out_of_proportion,
        concurrency=cost.concurrency,
        advice="; ".join(advice),
    )


def _no_trials(step: NextStep) -> str:
    """Why more trials at the suite's cases would not settle the plan."""
    if step.current_trials <= 1:
        return " (trials cannot be planned from one trial per case)"
    return (" (more trials per case cannot narrow the interval enough: the spread between "
            "cases stays however many trials run, so only more cases settle it)")


def _conditions(result: PairedComparison, rows: pd.DataFrame) -> list[str]:
    """The conditions that carried evidence (the command runs only these)."""
    if result.conditions is not None:
        return list(result.conditions)
    if result.by_condition:
        return [name for name, part in result.by_condition if part.n_cases > 0]
    return sorted(str(c) for c in rows["condition"].unique())


def _providers(result: PairedComparison) -> int:
    return len(result.pooled_providers) or 1


def _trials_at(step: NextStep, components: Any, cases: int, alpha: float) -> int | None:
    """Trials per case that would do the plan over ``cases`` cases (None: none would).

    The plan is the verdict's own: "improved" with the practical threshold, equivalence at
    the observed change, and where every pair tied the tied-pairs bound (more tied pairs
    narrow it; more trials elsewhere cannot beat the spread between cases).
    """
    if step.tied_pairs is not None and step.goal == "equivalence":
        per_case_trial = step.tied_pairs / (step.current_cases * step.current_trials)
        needed = tied_pairs_needed(step.threshold, 1.0 - alpha)
        return max(1, math.ceil(needed / (per_case_trial * cases) - 1e-9))
    if step.current_trials <= 1:
        return None  # one-trial pilot: the within-case variance is unknown
    if step.goal == "verdict":
        return required_trials(step.effect, cases,
                               design=PowerDesign.from_components(
                                   components, alpha=alpha, power=NEXT_STEP_POWER,
                               ), threshold=step.threshold).n_trials
    return equivalence_trials(step.effect, step.threshold, components, cases, alpha)


def equivalence_trials(
    effect: float, threshold: float, components: Any, cases: int, alpha: float
) -> int | None:
    """Trials per case for "no practical difference" at ``cases`` cases if ``effect`` is true.

    Args:
        effect: The observed change (the plan assumes it is the true one).
        threshold: The practical threshold.
        components: The runs' variance components.
        cases: Cases of the design.
        alpha: 1 - the interval's confidence.

    Returns:
        The fewest trials up to :data:`MAX_TRIALS` (None: none, e.g. when the spread between
        cases alone keeps the interval past the threshold, or ``|effect| >= threshold``).
    """
    if not abs(effect) < threshold or cases < 2:
        return None
    design = PowerDesign.from_components(components, alpha=alpha, power=NEXT_STEP_POWER)
    if design.between_diff <= 0 and design.within <= 0:
        return None  # no variance measured: the zero-spread rule, not this model, decides
    omega_floor = math.sqrt(design.between_diff)
    guard = 1.0 - alpha  # the case x condition test must not reject either (equivalence_cases)

    def reach(omega: float) -> float:
        return guard * equivalence_power(effect, threshold, omega, cases, alpha)

    if reach(omega_floor) < NEXT_STEP_POWER:
        return None  # the spread between cases alone is too wide at these cases
    for trials in range(1, MAX_TRIALS + 1):
        if reach(math.sqrt(design.omega2(trials))) >= NEXT_STEP_POWER:
            return trials
    return None


def equivalence_spread_binds(
    effect: float, threshold: float, components: Any, cases: int, alpha: float
) -> bool:
    """Whether the spread between cases alone keeps "no practical difference" out of reach.

    True when even infinitely many trials per case (only the between-case spread left) give
    less than the planned power at ``cases`` cases; False when trials could do it, if enough
    of them (:func:`equivalence_trials` returns None also when more than :data:`MAX_TRIALS`
    would be needed).
    """
    design = PowerDesign.from_components(components, alpha=alpha, power=NEXT_STEP_POWER)
    omega_floor = math.sqrt(max(design.between_diff, 0.0))
    guard = 1.0 - alpha
    return guard * equivalence_power(effect, threshold, omega_floor, cases, alpha) < (
        NEXT_STEP_POWER
    )


def tied_pairs_of(result: PairedComparison) -> float | None:
    """The tied pairs behind ``result``'s interval when the tied-pairs rule made it.

    Returns:
        The pairs (fractional), or None when the rule did not make the interval.
    """
    if "estimate" not in result.cases:
        return None
    return tied_pairs_behind_interval(result.delta, result.cases["estimate"].to_numpy(float))


def tied_plan(
    tied: float, result: PairedComparison, trials: int
) -> tuple[int, int, str]:
    """Cases (at ``trials``) and trials (at these cases) that settle a tied comparison.

    Args:
        tied: The pairs behind its interval (:func:`tied_pairs_of`).
        result: The comparison.
        trials: Its trials per case.

    Returns:
        ``(cases, trials, note)``: the design whose pairs, if they keep tying, put the
        interval inside the threshold, and the sentence that says why.
    """
    needed = tied_pairs_needed(result.threshold, result.delta.confidence)
    per_case = tied / result.n_cases
    cases = max(2, math.ceil(needed / per_case - 1e-9))
    more = max(1, math.ceil(needed / (tied / trials) - 1e-9))
    note = (f"every pair of trials tied, so the interval is the exact bound of the "
            f"discordance rate over {round(tied)} pairs (±{percent(result.delta.ci_high):.1f} "
            f"pp): more trials narrow it, and {needed} tied pairs put it inside "
            f"±{result.threshold * 100:g} pp")
    return cases, more, note


#: Options of the run's own command line that the next step's command sets or drops.
_SET = ("--run-id", "--runs-dir", "--trials", "--conditions", "--max-items", "--max-usd",
        "--max-rounds", "--plan-cases", "--round-cases", "--plan-effect", "--futility-beta",
        "--threshold")
_FLAGS = ("--resume", "--json", "--until-verdict", "--no-cache", "--adaptive-trials",
          "--no-progress")


def _base(command_line: str, suite_path: str | None, two_runs: bool) -> RebuiltLine:
    """``evalkit run SUITE [its filters and provider name]``: what every command starts with.

    The run's command line is data of the run: only its allow-listed options are kept
    (:func:`evalkit._command_line.rebuild_run_line`); what changes where data goes or what
    is read is left out and named.
    """
    skills = ("--skill", "--description") if two_runs else ()  # each side sets its own
    return rebuild_run_line(command_line, suite_path=suite_path,
                            drop={*_SET, *skills, *_FLAGS})


def _command(
    result: PairedComparison,
    step: NextStep,
    base: list[str] | None,
    conditions: list[str],
    target: int | None,
    run_trials: int | None,
    trials: int,
    cases_to_add: int | None,
    two_runs: bool,
) -> str | None:
    if base is None or run_trials is None or target is None:
        return None
    words = [*base, "--conditions", ",".join(conditions)]
    sequential = (not two_runs and step.goal == "verdict" and cases_to_add is None
                  and run_trials == trials)
    if sequential:
        words += ["--until-verdict", "--trials", str(trials), "--plan-cases", str(target),
                  "--max-items", str(len(conditions) * target * trials),
                  "--threshold", f"{result.threshold:g}"]
    else:
        words += ["--trials", str(run_trials)]
    return shlex.join([*words, "--no-cache"])


def _concurrency(command_line: str) -> int:
    """The run's ``--concurrency`` (``evalkit run``'s default when its line does not set it)."""
    try:
        words = shlex.split(command_line)
    except ValueError:
        return DEFAULT_CONCURRENCY
    for index, word in enumerate(words):
        value = word.partition("=")[2] if word.startswith("--concurrency=") else (
            words[index + 1] if word == "--concurrency" and index + 1 < len(words) else "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return DEFAULT_CONCURRENCY


def _instead(step: NextStep, ratio: float, so_far: int) -> str:
    """What to do instead of a plan out of proportion."""
    head = (f"that is {ratio:.1f}x the {so_far:,} items compared so far, out of proportion "
            f"(more than {OUT_OF_PROPORTION:g}x); instead")
    if step.goal == "equivalence":
        return (f"{head}: read this result as 'no average change as large as "
                f"{step.threshold * 100:g} pp was seen' (not a proof of none), add cases "
                "(a new case carries more than another trial of an old one), or raise the "
                "threshold (--threshold) if a larger change is what matters")
    return (f"{head}: add cases, raise the practical threshold (--threshold) if an effect "
            f"of {percent(abs(step.effect)):.1f} pp does not matter, or accept that this effect "
            "cannot be settled at a proportionate cost")
