"""What would settle an inconclusive comparison: cases, trials and the command that runs them.

From the compared runs' own variance components (:func:`evalkit.stats.estimate_variance_
components`), the power functions of :mod:`evalkit.stats` plan, at 80 % power and the
comparison's alpha and practical threshold: the cases needed at the runs' trials for the
observed effect, the cases needed at those trials to tell an effect of the threshold's size
from zero, and the trials needed at the runs' cases for the observed effect. The command is
the ``evalkit run --until-verdict`` that would draw them (two conditions of one run), or a
fresh run of the candidate's suite with the trials needed (two runs). Nothing is guessed: a
step the data cannot plan (one trial per case, an effect at or below the threshold) is None,
and ``note`` says why.
"""

from __future__ import annotations

import math
import os
from typing import Any

import pandas as pd

from evalkit._percent import percent
from evalkit._settings import RUNS_DIR
from evalkit.analysis._step_cases import NamingPlan, naming_plan
from evalkit.analysis._step_plan import (
    MAX_TRIALS,
    equivalence_spread_binds,
    equivalence_trials,
    feasible_plan,
    tied_pairs_of,
    tied_plan,
)
from evalkit.analysis._step_types import NEXT_STEP_POWER, NextStep
from evalkit.errors import InputError
from evalkit.results import peek_manifest, resolve_run_dir
from evalkit.stats import (
    PairedComparison,
    PowerDesign,
    equivalence_cases,
    estimate_variance_components,
    required_cases,
    required_trials,
)


def next_step(
    result: PairedComparison,
    baseline: pd.DataFrame,
    candidate: pd.DataFrame | None,
    *,
    suite_path: str | None = None,
    strict_trials: int | None = None,
    command_line: str = "",
) -> NextStep | None:
    """Plan what would settle ``result`` if it is inconclusive.

    Args:
        result: The comparison.
        baseline: The baseline rows compared.
        candidate: The candidate rows (None: two conditions of ``baseline``).
        suite_path: The suite the runs came from (for the command).
        command_line: The ``evalkit run`` command of the candidate run (its filters and
            provider are kept in the command; :func:`run_command_line`).
        strict_trials: The rows are one strict outcome per case (the gate's strict flake
            policy: a case passes when all of its trials pass), folded from this many
            trials per case: the cases are planned for that outcome at these trials, and no
            number of trials is planned (more trials would change what is measured).

    Returns:
        The :class:`NextStep`, or None when the verdict is not inconclusive or no case matched.
    """
    if result.verdict != "inconclusive" or result.n_cases < 2:
        return None
    if result.equivalence["equivalent"]:
        return None  # settled as "no practical difference": nothing to run
    conditions = result.conditions if candidate is None else None
    try:
        components = estimate_variance_components(
            baseline, candidate, conditions=list(conditions) if conditions else None
        )
    except InputError:
        return None
    trials = max(1, int(components.n_trials))
    effect = float(result.delta.estimate)
    alpha = float(result.alpha)
    threshold = float(result.threshold)
    notes = []
    cases = trials_needed = None
    inside = math.isfinite(effect) and abs(effect) < threshold
    if effect != 0 and math.isfinite(effect) and not inside:
        plan = required_cases(effect, trials,
                              design=PowerDesign.from_components(
                                  components, alpha=alpha, power=NEXT_STEP_POWER,
                              ), threshold=threshold)
        cases = plan.n_cases
        if plan.note:
            notes.append(plan.note)
        if cases is not None and trials > 1:
            more = required_trials(effect, result.n_cases,
                                   design=PowerDesign.from_components(
                                       components, alpha=alpha, power=NEXT_STEP_POWER,
                                   ), threshold=threshold)
            trials_needed = more.n_trials
            if more.n_trials is None and more.note:
                notes.append(more.note)
    elif not inside:
        notes.append("the observed effect is 0: plan for the threshold instead")
    at_threshold = required_cases(threshold, trials,
                                  design=PowerDesign.from_components(
                                      components, alpha=alpha, power=NEXT_STEP_POWER,
                                  ), threshold=0.0).n_cases
    equivalent_cases = None
    tied = tied_pairs_of(result)
    if inside and threshold > 0:
        if tied is not None:
            equivalent_cases, trials_needed, note = tied_plan(tied, result, trials)
            notes.append(note)
            if _deterministic(baseline, candidate):
                notes.append(FRESH_SEED_NOTE)
        else:
            plan = equivalence_cases(threshold, trials, true_effect=effect, components=components,
                                     alpha=alpha, power=NEXT_STEP_POWER)
            equivalent_cases = plan.n_cases
            if plan.n_cases is None:
                notes.append(plan.note)
            if trials > 1 and strict_trials is None:
                trials_needed = equivalence_trials(effect, threshold, components,
                                                   result.n_cases, alpha)
                if trials_needed is None:
                    notes.append(
                        _spread_note(components, result.n_cases, equivalent_cases, trials, alpha)
                        if equivalence_spread_binds(effect, threshold, components,
                                                    result.n_cases, alpha)
                        else _trials_cap_note(effect, threshold, result.n_cases,
                                              equivalent_cases, trials)
                    )
        notes.append(_inside_note(result, effect, threshold))
    if strict_trials is not None:
        notes.append(f"under the strict flake policy a case is one outcome (all of its "
                     f"{strict_trials} trials pass): cases are planned at {strict_trials} "
                     "trials, and more trials would change what is measured")
    elif trials == 1:
        notes.append("one trial per case: trials cannot be planned (within-case variance "
                     "unknown); run at least 2 trials")
    naming = None if strict_trials is not None else naming_plan(
        result, cases_past_threshold(result)[0], trials
    )
    rows = baseline if candidate is None else pd.concat([baseline, candidate], ignore_index=True)
    step = NextStep(
        cases, trials_needed, effect, at_threshold, threshold, result.n_cases,
        strict_trials or trials, NEXT_STEP_POWER, None, "; ".join(notes),
        goal="equivalence" if inside else "verdict", equivalence_cases=equivalent_cases,
        tied_pairs=None if tied is None else round(tied),
        **_naming_fields(naming),
    )
    return feasible_plan(step, result, rows, suite_path=suite_path,
                         two_runs=candidate is not None, components=components,
                         command_line=command_line)


#: What a fresh seed does, said where the compared runs' provider is deterministic given it.
FRESH_SEED_NOTE = (
    "these runs' provider is deterministic given an item's seed (the simulated agent): at the "
    "same --seed a new run's first trials repeat the outcomes already seen (the same samples, "
    "not new evidence), so give it a fresh --seed to draw every trial anew (a real agent "
    "samples afresh on every call; a new seed only gives its items new hashes, so the "
    "outcome cache is not reused)"
)


def _deterministic(baseline: pd.DataFrame, candidate: pd.DataFrame | None) -> bool:
    """Every compared row declares a provider deterministic given its seed."""
    frames = [baseline] if candidate is None else [baseline, candidate]
    column = "provider_deterministic"
    return all(column in f and len(f) > 0 and bool(f[column].fillna(False).astype(bool).all())
               for f in frames)


def _spread_note(
    components: Any, cases: int, equivalent_cases: int | None, trials: int, alpha: float
) -> str:
    """Why no number of trials shows no practical difference at these cases, and what does."""
    design = PowerDesign.from_components(components, alpha=alpha, power=NEXT_STEP_POWER)
    spread = math.sqrt(max(design.between_diff, 0.0))
    more = (f"more cases do ({equivalent_cases} at {trials} trials)" if equivalent_cases
            else f"no number of cases at {trials} trials does either")
    return (f"more trials cannot narrow the interval enough at these {cases} cases: the "
            f"spread between cases (standard deviation {percent(spread):.1f} pp of a case's "
            f"true change) stays however many trials run; {more}")


def _trials_cap_note(
    effect: float, threshold: float, cases: int, equivalent_cases: int | None, trials: int
) -> str:
    """Why no trials option is printed when trials could narrow the interval, given enough."""
    more = (f"more cases do it sooner ({equivalent_cases} at {trials} trials)"
            if equivalent_cases else f"no number of cases at {trials} trials does either")
    return (f"more than {MAX_TRIALS} trials per case would be needed at these {cases} cases: "
            f"the observed change ({percent(effect):+.1f} pp) is close to the threshold of "
            f"±{percent(threshold):g} pp, so the interval must be very narrow; {more}")


def _naming_fields(plan: NamingPlan | None) -> dict[str, Any]:
    """The ``name_*`` fields of a next step from its naming plan (none: the defaults)."""
    if plan is None:
        return {}
    return {"name_cases": tuple(c.case_id for c in plan.cases), "name_trials": plan.trials,
            "name_power": plan.power, "name_level": plan.level, "name_rows": plan.rows,
            "name_correction": plan.correction, "name_beyond": plan.beyond}


def cases_past_threshold(result: PairedComparison) -> tuple[list[str], int]:
    """The cases that moved past the threshold in this sample, and how many could have.

    The first are strongest first; the count is of the cases whose intervals reach past the
    threshold (the ones the average cannot vouch for). Read from the comparison's pooled case
    rows where it has them, else its per-unit rows.
    """
    rows = result.case_rows
    if rows is None or rows.empty or "ci_low" not in rows:
        return [], 0
    threshold = float(result.threshold)
    low, high = rows["ci_low"].astype(float), rows["ci_high"].astype(float)
    reach = rows[(low <= -threshold) | (high >= threshold)]
    estimate = reach["estimate"].astype(float)
    moved = reach.assign(_size=estimate.abs())[estimate.abs() >= threshold]
    moved = moved.sort_values(["_size", "case_id"], ascending=[False, True], kind="stable")
    return list(dict.fromkeys(moved["case_id"].astype(str))), int(reach["case_id"].nunique())


def _inside_note(result: PairedComparison, effect: float, threshold: float) -> str:
    """Why the plan is for equivalence, and what the average cannot say about single cases."""
    head = (f"the observed change ({percent(effect):+.1f} pp) is inside the practical threshold "
            f"of {threshold * 100:g} pp on average")
    moved, reaching = cases_past_threshold(result)
    if not reaching:
        return (f"{head}: even settled it would not matter in practice, so the plan is for "
                "showing no practical difference rather than a verdict")
    named = ", ".join(moved[:3]) + (f" and {len(moved) - 3} more" if len(moved) > 3 else "")
    which = (f"{len(moved)} case(s) moved by more than {threshold * 100:g} pp in this sample "
             f"({named}), and " if moved else "")
    return (f"{head}, but {which}the intervals of {reaching} case(s) reach past it: the average "
            "cannot show that no single case moved, so this plan is for the average only; "
            "to settle the cases, confirm them on fresh samples (evalkit confirm)")


def run_suite_path(run: object, runs_dir: str | os.PathLike[str] = RUNS_DIR.default) -> str | None:
    """The suite a run was planned from (its manifest's ``suite_path``), for a next step's command.

    Args:
        run: A run directory or id (a DataFrame has no manifest: None).
        runs_dir: Where run ids are looked up.

    Returns:
        The suite path, or None when the run has no readable manifest naming one.
    """
    path = _manifest_field(run, runs_dir, "suite_path")
    return str(path) if path else None


def run_command_line(run: object, runs_dir: str | os.PathLike[str] = RUNS_DIR.default) -> str:
    """The ``evalkit run`` command line that made a run ("" when none is recorded).

    A next step's command keeps its filters (``--case``, ``--lane``, ``--tags``, ``--split``)
    and provider, so it runs the cases that were compared, not the whole suite.
    """
    line = _manifest_field(run, runs_dir, "command_line")
    return str(line) if line else ""


def _manifest_field(run: object, runs_dir: str | os.PathLike[str], key: str) -> object:
    if isinstance(run, pd.DataFrame):
        return None
    try:  # plain JSON: compare of unjudged runs loads no pydantic model
        manifest = peek_manifest(resolve_run_dir(str(run), runs_dir))
    except (InputError, OSError, ValueError):
        return None
    return manifest.get(key) if isinstance(manifest, dict) else None

