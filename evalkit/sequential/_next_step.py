"""What would settle a run of ``--until-verdict`` that spent its budget without a verdict.

The plan is :func:`evalkit.analysis.next_step`'s, from the run's own variance components, at
the run's trials and its level (``1 - confidence``): the cases needed for the observed effect
(or, when it is inside the practical threshold, to tell an effect of the threshold's size
from zero) and the trials needed at the cases run. The command continues the run: the same
run id with ``--resume`` and every recorded budget raised to what those cases take (a budget
given again replaces the recorded one). When the suite holds fewer cases than needed, or the
run has drawn them all, no resumed run can reach them: the command is then a fresh sequential
run with the trials needed, and ``note`` says to add cases otherwise.

The cases are planned for the fixed design (one look); the run's anytime-valid interval is
wider at any number of cases, so the budget is the least a continued run needs, and the note
says so.
"""

from __future__ import annotations

import dataclasses
import math
import os
import shlex

import pandas as pd

from evalkit._command_line import without_options
from evalkit.analysis import NEXT_STEP_POWER, NextStep, next_step
from evalkit.errors import InputError
from evalkit.results import SequentialRecord
from evalkit.stats import (
    PowerDesign,
    SequentialComparison,
    estimate_variance_components,
    required_trials,
)

#: Stop reasons of a budget spent (or a suite drawn to its end) without a verdict.
BUDGET_STOPS = ("max-items", "max-usd", "max-rounds", "cases-exhausted")

_SEQUENTIAL_NOTE = (
    "cases planned for a fixed design: the run's anytime-valid interval is wider, so this is "
    "the least its budget must allow"
)


def sequential_next_step(
    comparison: SequentialComparison,
    rows: pd.DataFrame,
    record: SequentialRecord,
    *,
    stop_reason: str,
    run_id: str,
    runs_dir: str | os.PathLike[str],
    trials: int,
    suite_path: str | None,
    cost_usd: float | None = None,
    command_line: str = "",
) -> NextStep | None:
    """Plan what would settle a sequential run stopped by its budget.

    Args:
        comparison: The sequential comparison at the run's last look.
        rows: The run's result rows.
        record: The run's sequential record (order, round size, budgets, level).
        stop_reason: Why the run stopped (only :data:`BUDGET_STOPS` get a plan).
        run_id: The run's id (the command resumes it).
        runs_dir: Where the run lives.
        trials: Trials per case and condition of the run.
        suite_path: The suite the run came from (None: no command).
        cost_usd: Agent cost spent so far (scales a ``--max-usd`` budget).
        command_line: The ``evalkit run`` command that made the run (kept in the command,
            budgets replaced); empty: the command is built from the record.

    Returns:
        The :class:`NextStep` (``command`` continues the run or starts a fresh one), or None
        when the run settled, failed, or its variances cannot be estimated.
    """
    if stop_reason not in BUDGET_STOPS or comparison.verdict != "inconclusive":
        return None
    level = dataclasses.replace(comparison, alpha=1.0 - record.confidence)
    planned = next_step(level, rows, None)
    if planned is None:
        return None
    needed = planned.cases or planned.cases_at_threshold
    available = len(record.order)
    notes = [planned.note] if planned.note else []
    command = None
    if needed is not None and needed <= available and stop_reason != "cases-exhausted":
        command = _resume_command(record, run_id, runs_dir, trials, needed, suite_path,
                                  cost_usd, len(rows), command_line)
    else:
        more = _trials_at(planned.effect, available, rows, record, level.alpha)
        said = ""
        if needed is not None and needed > available:
            said = (f"the run can draw {available} cases (the suite's, after its filters) and "
                    f"{needed} are needed at {trials} trials")
        elif stop_reason == "cases-exhausted":
            said = (f"the run has drawn all {available} cases it can (the suite's, after its "
                    "filters) without a verdict")
        if said:
            notes.append(said + ": add cases" + (
                f", or run {more} trials per case over all {available}" if more else ""))
        if more is not None:
            command = _fresh_command(record, more, available, suite_path, command_line,
                                     runs_dir)
    notes.append(_SEQUENTIAL_NOTE)
    return dataclasses.replace(planned, command=command, note="; ".join(notes))


#: Options of the original command line the resumed command sets itself (each takes a value).
_REPLACED = ("--max-items", "--max-usd", "--max-rounds", "--run-id", "--runs-dir")
#: Flags of the original command line the resumed command drops or sets itself.
_DROPPED = ("--resume", "--json")


def _resume_command(
    record: SequentialRecord,
    run_id: str,
    runs_dir: str | os.PathLike[str],
    trials: int,
    cases: int,
    suite_path: str | None,
    cost_usd: float | None,
    items: int,
    command_line: str = "",
) -> str | None:
    """``evalkit run ... --resume`` with every recorded budget raised to ``cases``.

    The run's own command line is kept (its provider, model, seed and skill options shape the
    outcomes, and ``--resume`` refuses other ones), with its budgets, id and directory set.
    """
    rounds = math.ceil(cases / record.round_cases)
    drawn = min(rounds * record.round_cases, len(record.order))
    planned_items = 2 * trials * drawn
    base = _kept(command_line)
    if base is None:
        if suite_path is None:
            return None
        base = [
            "evalkit", "run", suite_path, "--conditions",
            f"{record.baseline},{record.candidate}", "--until-verdict", "--trials", str(trials),
            "--round-cases", str(record.round_cases),
        ]
    argv = [*base, "--run-id", run_id, "--runs-dir", str(runs_dir), "--resume",
            "--max-items", str(max(planned_items, record.max_items or 0))]
    if record.max_rounds is not None:
        argv += ["--max-rounds", str(max(rounds, record.max_rounds))]
    if record.max_usd is not None and cost_usd is not None and items > 0:
        budget = math.ceil(cost_usd / items * planned_items * 100) / 100  # whole cents, up
        argv += ["--max-usd", f"{max(budget, record.max_usd):g}"]
    return shlex.join(argv)


def _kept(command_line: str, extra: tuple[str, ...] = ()) -> list[str] | None:
    """The original ``evalkit run`` arguments without budgets, id, directory and output flags.

    Args:
        command_line: The run's command line (``RunConfig.command_line``).
        extra: Further options to leave out (a fresh run sets them itself).
    """
    try:
        words = shlex.split(command_line)
    except ValueError:
        return None
    if words[:2] != ["evalkit", "run"] or "--until-verdict" not in words:
        return None
    flags = {"--adaptive-trials"} & set(extra)  # the one option of ``extra`` without a value
    return without_options(words, {*_REPLACED, *extra} - flags, {*_DROPPED, *flags})


def _trials_at(
    effect: float, cases: int, rows: pd.DataFrame, record: SequentialRecord, alpha: float
) -> int | None:
    """Trials per case needed for ``effect`` over ``cases`` cases (None: none suffice)."""
    if effect == 0 or not math.isfinite(effect) or cases < 2:
        return None
    try:
        components = estimate_variance_components(
            rows, conditions=[record.baseline, record.candidate]
        )
    except InputError:
        return None
    if components.n_trials < 2:  # the within-case variance is unknown
        return None
    return required_trials(effect, cases,
                           design=PowerDesign.from_components(
                               components, alpha=alpha, power=NEXT_STEP_POWER,
                           )).n_trials


def _fresh_command(
    record: SequentialRecord, trials: int, cases: int, suite_path: str | None,
    command_line: str, runs_dir: str | os.PathLike[str],
) -> str | None:
    """A new sequential run of every case the run can draw, with ``trials`` trials.

    The original command line is kept (filters, provider) without its id, budgets, trials
    and tuning.
    """
    base = _kept(command_line, extra=("--trials", "--plan-cases", "--adaptive-trials"))
    if base is None:
        if suite_path is None:
            return None
        base = ["evalkit", "run", suite_path, "--conditions",
                f"{record.baseline},{record.candidate}", "--until-verdict",
                "--round-cases", str(record.round_cases), "--no-cache"]
    return shlex.join([*base, "--runs-dir", str(runs_dir), "--trials", str(trials),
                       "--plan-cases", str(cases), "--max-items", str(2 * trials * cases)])
