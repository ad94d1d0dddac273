"""``evalkit run --until-verdict``: run rounds of cases until the verdict is settled.

Each round is an ordinary run of the cases drawn so far, continued with ``resume`` (the run
grows, ``RunConfig.extend``), so a round is crash-safe and cached like any run. After each
round the anytime-valid comparison (:func:`evalkit.stats.sequential_compare_tables`) looks at every
round so far; the run stops at the first settled look (improved, regressed, futile) or when a
budget is spent. Every look is written to the manifest (``sequential``), and since the looks
are a function of the outcomes on disk, a resumed run recomputes them identically.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import pandas as pd

from evalkit.analysis import agent_cost, run_suite_path
from evalkit.cases import Suite, load_suite
from evalkit.errors import ConfigError
from evalkit.results import (
    AdaptiveCaseRecord,
    AdaptiveRecord,
    SequentialRecord,
    load_manifest,
    read_run,
)
from evalkit.runner import RunConfig, RunResult, run
from evalkit.sequential._allocated import allocation_record, run_allocated
from evalkit.sequential._config import SequentialConfig
from evalkit.sequential._looks import close_round, has_results
from evalkit.sequential._next_step import sequential_next_step
from evalkit.sequential._result import SequentialRun
from evalkit.stats import (
    FUTILITY_BETA,
    SEQUENTIAL_METHOD,
    AdaptiveTrials,
    CompareOptions,
    case_order,
    sequential_compare_tables,
    stage_two_decisions,
)


def _budget_reason(
    record: SequentialRecord, rounds: int, items_per_case: int, items: int, cost: float | None
) -> str | None:
    """Which budget forbids another round (None: another round fits).

    The next round is charged ``items_per_case`` for each new case (every trial: with
    adaptive trials, a round runs at most that many).
    """
    drawn = min(rounds * record.round_cases, len(record.order))
    if drawn >= len(record.order):
        return "cases-exhausted"
    if record.max_rounds is not None and rounds >= record.max_rounds:
        return "max-rounds"
    following = min(drawn + record.round_cases, len(record.order))
    if record.max_items is not None and items + (following - drawn) * items_per_case > (
        record.max_items
    ):
        return "max-items"
    if record.max_usd is not None and cost is not None:
        per_round = cost / rounds
        if cost + per_round > record.max_usd:
            return "max-usd"
    return None


def _new_record(
    suite: Suite, config: RunConfig, sequential: SequentialConfig, adaptive: AdaptiveTrials | None
) -> SequentialRecord:
    """The manifest record of a new sequential run: its drawing order and its design."""
    conditions = config.conditions or ()
    if len(conditions) != 2:
        raise ConfigError(
            "--until-verdict compares two conditions: pass --conditions BASELINE,CANDIDATE "
            f"(e.g. --conditions none,preloaded), not {','.join(conditions) or 'the default'}"
        )
    cases = suite.select(
        case_ids=config.case_ids, lanes=config.lanes, tags=config.tags, splits=config.splits,
        conditions=conditions,
    )
    seed = config.seed if config.seed is not None else suite.spec.defaults.seed
    return SequentialRecord(
        baseline=conditions[0],
        candidate=conditions[1],
        order=case_order([case.id for case in cases], seed),
        round_cases=sequential.round_cases,
        threshold=sequential.threshold,
        confidence=sequential.confidence,
        method=SEQUENTIAL_METHOD,
        plan_cases=sequential.plan_cases,
        plan_effect=sequential.plan_effect,
        futility_beta=None if sequential.plan_effect is None else sequential.futility_beta,
        max_items=sequential.max_items,
        max_usd=sequential.max_usd,
        max_rounds=sequential.max_rounds,
        allocation=allocation_record(sequential.round_cases, seed)
        if sequential.allocate_trials
        else None,
        adaptive=None
        if adaptive is None
        else AdaptiveRecord(
            total_trials=adaptive.total_trials,
            first_trials=adaptive.first_trials,
            probability=adaptive.stage_two_probability,
            seed=adaptive.seed,
        ),
    )


def _recorded_design(record: SequentialRecord) -> AdaptiveTrials | None:
    """The adaptive-trials design of a sequential record (None: every case runs every trial)."""
    if record.adaptive is None:
        return None
    return AdaptiveTrials(**record.adaptive.model_dump(exclude={"cases"}))


def _adaptive_design(sequential: SequentialConfig, trials: int, seed: int) -> AdaptiveTrials | None:
    """The design of ``adaptive_trials`` for a new sequential run (None when off)."""
    if not sequential.adaptive_trials:
        return None
    if trials < 2:
        raise ConfigError(
            f"--adaptive-trials needs at least 2 trials per case (stage 1 runs 1), got "
            f"{trials}; pass --trials 3 (or more)"
        )
    return AdaptiveTrials(
        total_trials=trials,
        first_trials=1,
        probability=sequential.stage_two_probability,
        seed=seed,
    )


def _decide(
    rows: pd.DataFrame, record: SequentialRecord, design: AdaptiveTrials, drawn: Sequence[str]
) -> dict[str, int]:
    """Trials of each drawn case, and its draw written into ``record.adaptive``.

    A case whose stage 1 is done runs ``total_trials`` if it needs stage 2, else
    ``first_trials``; a case whose stage 1 is not done yet runs its ``first_trials``.
    """
    assert record.adaptive is not None
    decided = (
        stage_two_decisions(rows, design, (record.baseline, record.candidate))
        if len(rows)
        else pd.DataFrame(columns=["case_id", "probability", "drawn", "stage_two"])
    )
    keep = set(drawn)
    record.adaptive.cases = {
        str(case): AdaptiveCaseRecord(
            probability=float(probability), drawn=bool(draw), stage_two=bool(stage_two)
        )
        for case, probability, draw, stage_two in zip(
            decided["case_id"], decided["probability"], decided["drawn"], decided["stage_two"],
            strict=True,
        )
        if case in keep
    }
    full = {case for case, rec in record.adaptive.cases.items() if rec.stage_two}
    return {
        case: design.total_trials if case in full else design.first_trials for case in drawn
    }


def _adaptive_round(
    suite: Suite, round_config: RunConfig, record: SequentialRecord, design: AdaptiveTrials,
    drawn: Sequence[str],
) -> RunResult:
    """One round with adaptive trials: stage 1 of the new cases, then stage 2 of those drawn.

    The trials of each case follow from the outcomes on disk, so a resumed round plans the
    same items.
    """
    run_dir = Path(round_config.runs_dir) / str(round_config.run_id)
    before = read_run(run_dir) if round_config.resume and has_results(run_dir) else None
    trials = _decide(before if before is not None else pd.DataFrame(), record, design, drawn)
    while True:
        result = run(suite, round_config.model_copy(update={"case_trials": trials}))
        following = _decide(read_run(result.run_dir), record, design, drawn)
        if following == trials or result.failure is not None:
            return result
        trials = following
        round_config = round_config.model_copy(update={"resume": True, "extend": True})


def _rounds_on_disk(run_dir: Path, record: SequentialRecord) -> int:
    """The round a resumed run continues with: the last one any finished item belongs to.

    Its plan holds every finished item, so the run can grow from it (an earlier round's plan
    would not hold the items of later cases); the looks of earlier rounds are kept.
    """
    if not has_results(run_dir):
        return 1
    present = set(read_run(run_dir)["case_id"])
    position = {case: i for i, case in enumerate(record.order)}
    last = max((position[case] + 1 for case in present if case in position), default=1)
    return max(1, math.ceil(last / record.round_cases))






def run_until_verdict(
    suite: str | os.PathLike[str] | Suite,
    config: RunConfig,
    sequential: SequentialConfig | None = None,
) -> SequentialRun:
    """Run baseline and candidate in rounds of cases until the verdict is settled.

    The cases (after the config's filters) are drawn in a random order fixed by the run seed;
    round ``k`` runs the first ``k * round_cases`` of them under ``config.conditions``
    (exactly two: baseline, candidate). After each round the sequential comparison looks at
    every round so far and the run stops at the first settled look or when a budget is
    spent. With ``config.resume`` an interrupted sequential run continues from its manifest
    (same drawing order, round size, threshold, level, tuning, adaptive design and futility
    boundary); a budget passed again replaces the recorded one, so a run stopped by its
    budget can be continued with a larger one.

    Args:
        suite: Suite directory or loaded suite.
        config: Run options; ``conditions`` must name the baseline and the candidate.
        sequential: The design (round size, threshold, level, budgets, adaptive trials,
            planned effect); None: the defaults of :class:`SequentialConfig`.

    Returns:
        A :class:`SequentialRun`.

    Raises:
        ConfigError: Not two conditions, a budget smaller than one round, adaptive trials
            with fewer than 2 trials, or a sequential run resumed with other conditions or
            another planned effect (a bad value of the design is refused when the
            :class:`SequentialConfig` is built).
    """
    sequential = SequentialConfig() if sequential is None else sequential
    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    run_id = config.run_id or datetime.now().strftime("%Y%m%d-%H%M%S-seq")
    run_dir = Path(config.runs_dir) / run_id
    previous = load_manifest(run_dir) if config.resume and run_dir.is_dir() else None
    record = previous.sequential if previous is not None else None
    trials = config.trials or loaded.spec.defaults.trials
    if record is None:
        seed = config.seed if config.seed is not None else loaded.spec.defaults.seed
        record = _new_record(
            loaded, config, sequential, _adaptive_design(sequential, trials, seed)
        )
    elif tuple(config.conditions or ()) != (record.baseline, record.candidate):
        raise ConfigError(
            f"--resume: sequential run '{run_id}' compares {record.baseline},"
            f"{record.candidate}; pass --conditions {record.baseline},{record.candidate}"
        )
    elif sequential.plan_effect is not None and sequential.plan_effect != record.plan_effect:
        recorded = "none" if record.plan_effect is None else f"--plan-effect {record.plan_effect:g}"
        raise ConfigError(
            f"--resume: sequential run '{run_id}' was planned with {recorded}; its futility "
            "boundary cannot change mid-run: drop --plan-effect or start a new run"
        )
    else:  # a budget given again replaces the recorded one (a spent run can be continued)
        record = record.model_copy(update=sequential.budgets())
    if record.allocation is not None:
        result, comparison, stop, rounds, rows = run_allocated(loaded, config, record, run_id)
        return SequentialRun(
            run=result, comparison=comparison, stop_reason=stop, rounds=rounds,
            items=len(rows), cost_usd=agent_cost(rows), record=record,
        )  # fmt: skip
    design = _recorded_design(record)
    items_per_case = 2 * trials
    first = min(record.round_cases, len(record.order)) * items_per_case
    if record.max_items is not None and first > record.max_items:
        raise ConfigError(
            f"--max-items {record.max_items} is smaller than one round ({first} items: "
            f"{record.round_cases} cases x 2 conditions x {trials} trials); raise it or lower "
            "--round-cases"
        )
    rounds = _rounds_on_disk(run_dir, record) - 1 if config.resume else 0
    while True:
        rounds += 1
        drawn = record.order[: rounds * record.round_cases]
        round_config = config.model_copy(
            update={
                "run_id": run_id,
                "case_ids": tuple(drawn),
                "conditions": (record.baseline, record.candidate),
                "resume": config.resume or rounds > 1,
                "extend": True,
            }
        )
        result = (
            run(loaded, round_config)
            if design is None
            else _adaptive_round(loaded, round_config, record, design, drawn)
        )
        rows = read_run(result.run_dir)
        comparison = sequential_compare_tables(
            rows,
            conditions=(record.baseline, record.candidate),
            options=CompareOptions(threshold=record.threshold, confidence=record.confidence),
            order=record.order,
            look_at=[k * record.round_cases for k in range(1, rounds + 1)],
            plan_cases=record.plan_cases,
            adaptive=design,
            plan_effect=record.plan_effect,
            futility_beta=FUTILITY_BETA if record.futility_beta is None else record.futility_beta,
        )
        cost = agent_cost(rows)
        budget = _budget_reason(record, rounds, items_per_case, len(rows), cost)
        reason = close_round(record, comparison, rounds, result, len(rows), cost, budget)
        if reason:
            step = sequential_next_step(
                comparison, rows, record, stop_reason=reason, run_id=run_id,
                runs_dir=config.runs_dir, trials=trials, cost_usd=cost,
                suite_path=run_suite_path(result.run_dir), command_line=config.command_line,
            )
            if step is not None:
                comparison = dataclasses.replace(comparison, next_step=step.to_dict())
            return SequentialRun(
                run=result,
                comparison=comparison,
                stop_reason=reason,
                rounds=rounds,
                items=len(rows),
                cost_usd=cost,
                record=record,
            )
