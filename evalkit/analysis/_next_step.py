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
import shlex
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from evalkit.errors import InputError
from evalkit.results import peek_manifest, resolve_run_dir
from evalkit.stats import (
    PairedComparison,
    estimate_variance_components,
    required_cases,
    required_trials,
)

#: Power every next step is planned for.
NEXT_STEP_POWER = 0.8


@dataclass(frozen=True)
class NextStep:
    """What would settle an inconclusive verdict.

    Attributes:
        cases: Cases needed at ``trials`` trials for the observed effect (None: unreachable).
        trials: Trials per case and arm needed at the compared cases for the observed effect
            (None: no number of trials suffices, or not plannable).
        effect: The observed effect planned for.
        cases_at_threshold: Cases needed at ``current_trials`` to tell an effect of the
            practical threshold's size from zero.
        threshold: The practical threshold.
        current_cases: Matched cases of the comparison.
        current_trials: Trials per case of the compared runs (median).
        power: Power the plan is for.
        command: The command that would run it (None when it cannot be formed).
        note: What limits the plan, in words ("" when nothing does).
    """

    cases: int | None
    trials: int | None
    effect: float
    cases_at_threshold: int | None
    threshold: float
    current_cases: int
    current_trials: int
    power: float
    command: str | None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The ``next_step`` JSON object (every field a plain value).

        Returns:
            The fields as a dict.
        """
        return asdict(self)

    def text(self) -> str:
        """One line for the text output and the rich displays."""
        parts = []
        effect = f"{self.effect * 100:+.1f} pp"
        if self.cases is not None:
            parts.append(
                f"{self.cases} cases at {self.current_trials} trials for the observed {effect}"
            )
        if self.trials is not None:
            parts.append(f"{self.trials} trials at these {self.current_cases} cases")
        if self.cases_at_threshold is not None:
            parts.append(
                f"{self.cases_at_threshold} cases to tell a "
                f"{self.threshold * 100:g} pp effect from zero"
            )
        head = "next step: " + ("; ".join(parts) if parts else "no design settles this")
        head += f" (power {self.power:.0%}, from these runs' variances)"
        if self.command:
            head += f"; run: {self.command}"
        return head + (f". {self.note}" if self.note else "")


def next_step(
    result: PairedComparison,
    baseline: pd.DataFrame,
    candidate: pd.DataFrame | None,
    *,
    suite_path: str | None = None,
    strict_trials: int | None = None,
) -> NextStep | None:
    """Plan what would settle ``result`` if it is inconclusive.

    Args:
        result: The comparison.
        baseline: The baseline rows compared.
        candidate: The candidate rows (None: two conditions of ``baseline``).
        suite_path: The suite the runs came from (for the command).
        strict_trials: The rows are one strict outcome per case (the gate's strict flake
            policy: a case passes when all of its trials pass), folded from this many
            trials per case: the cases are planned for that outcome at these trials, and no
            number of trials is planned (more trials would change what is measured).

    Returns:
        The :class:`NextStep`, or None when the verdict is not inconclusive or no case matched.
    """
    if result.verdict != "inconclusive" or result.n_cases < 2:
        return None
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
    if effect != 0 and math.isfinite(effect):
        plan = required_cases(effect, trials, components=components, alpha=alpha,
                              power=NEXT_STEP_POWER, threshold=threshold)
        cases = plan.n_cases
        if plan.note:
            notes.append(plan.note)
        if cases is not None and trials > 1:
            more = required_trials(effect, result.n_cases, components=components, alpha=alpha,
                                   power=NEXT_STEP_POWER)
            trials_needed = more.n_trials
    else:
        notes.append("the observed effect is 0: plan for the threshold instead")
    at_threshold = required_cases(threshold, trials, components=components, alpha=alpha,
                                  power=NEXT_STEP_POWER, threshold=0.0).n_cases
    if abs(effect) < threshold:
        notes.append(
            f"the observed change is inside the practical threshold of {threshold * 100:g} pp: "
            "even settled it would not matter in practice"
        )
    if candidate is not None and trials_needed is not None:
        notes.append("run the command once with the baseline's skill text and once with the "
                     "candidate's, then compare the two runs")
    if strict_trials is not None:
        notes.append(f"under the strict flake policy a case is one outcome (all of its "
                     f"{strict_trials} trials pass): cases are planned at {strict_trials} "
                     "trials, and more trials would change what is measured")
    elif trials == 1:
        notes.append("one trial per case: trials cannot be planned (within-case variance "
                     "unknown); run at least 2 trials")
    command = _command(result, conditions, suite_path, cases or at_threshold, trials,
                       trials_needed)
    return NextStep(cases, trials_needed, effect, at_threshold, threshold, result.n_cases,
                    strict_trials or trials, NEXT_STEP_POWER, command, "; ".join(notes))


def _command(
    result: PairedComparison,
    conditions: tuple[str, str] | None,
    suite_path: str | None,
    cases: int | None,
    trials: int,
    trials_needed: int | None,
) -> str | None:
    if suite_path is None:
        return None
    suite = shlex.quote(suite_path)
    if conditions is not None and cases is not None:
        base, cand = conditions
        return (
            f"evalkit run {suite} --conditions {shlex.quote(f'{base},{cand}')} --until-verdict "
            f"--trials {trials} --plan-cases {cases} --max-items {2 * cases * trials} "
            f"--threshold {result.threshold:g} --no-cache"
        )
    if trials_needed is not None:  # run for the baseline's and the candidate's skill texts
        return f"evalkit run {suite} --trials {trials_needed} --no-cache"
    return None


def run_suite_path(run: object, runs_dir: str | os.PathLike[str] = "runs") -> str | None:
    """The suite a run was planned from (its manifest's ``suite_path``), for a next step's command.

    Args:
        run: A run directory or id (a DataFrame has no manifest: None).
        runs_dir: Where run ids are looked up.

    Returns:
        The suite path, or None when the run has no readable manifest naming one.
    """
    if isinstance(run, pd.DataFrame):
        return None
    try:  # plain JSON: compare of unjudged runs loads no pydantic model
        manifest = peek_manifest(resolve_run_dir(str(run), runs_dir))
    except (InputError, OSError, ValueError):
        return None
    path = manifest.get("suite_path") if isinstance(manifest, dict) else None
    return str(path) if path else None
