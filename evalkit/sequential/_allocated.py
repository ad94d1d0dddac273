"""``evalkit run --until-verdict --allocate-trials``: rounds of pairs drawn where they inform.

Each round draws ``round_cases`` pairs of trials from every selected case with the
probabilities of :class:`~evalkit.stats.NeymanAllocation`, computed from the pairs on disk
(:func:`~evalkit.stats.allocation_plan`), runs the trials they ask for (the run grows with
``case_trials``, crash-safe and cached like any run), and looks with the weighted increments
(:func:`~evalkit.stats.allocated_compare_tables`). The draws are a function of the outcomes
and the seed, so a resumed run replays the same rounds.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evalkit.analysis import agent_cost
from evalkit.cases import Suite
from evalkit.errors import ConfigError
from evalkit.results import AllocationRecord, SequentialRecord, read_run
from evalkit.runner import RunConfig, RunResult, run
from evalkit.sequential._looks import close_round, has_results
from evalkit.stats import (
    FUTILITY_BETA,
    CompareOptions,
    NeymanAllocation,
    SequentialComparison,
    allocated_compare_tables,
    allocation_plan,
)


def allocation_record(round_pairs: int, seed: int) -> AllocationRecord:
    """The manifest record of a new run's allocation (the defaults of the design)."""
    design = NeymanAllocation(round_pairs=round_pairs, seed=seed)
    return AllocationRecord(
        floor=design.floor, prior_pairs=design.prior_pairs, round_pairs=round_pairs, seed=seed
    )


def _design(record: AllocationRecord) -> NeymanAllocation:
    return NeymanAllocation(**record.model_dump())


def _results(run_dir: Path) -> pd.DataFrame:
    """The run's results so far (an empty frame before its first item)."""
    return read_run(run_dir) if has_results(run_dir) else _nothing_yet()


def _nothing_yet() -> pd.DataFrame:
    """The results of a run before its first item."""
    return pd.DataFrame(columns=["case_id", "condition", "trial", "passed"])


def _round(
    suite: Suite, config: RunConfig, record: SequentialRecord, rounds: int
) -> tuple[RunResult, pd.DataFrame]:
    """Run what round ``rounds`` (1-based) needs; the run and its results after it."""
    assert record.allocation is not None
    design = _design(record.allocation)
    conditions = (record.baseline, record.candidate)
    run_dir = Path(config.runs_dir) / str(config.run_id)
    rows = _results(run_dir) if config.resume else _nothing_yet()
    while True:
        # the rounds before this one replayed, the trials through this one asked for
        plan = allocation_plan(rows, record.order, conditions, design, max_rounds=rounds - 1)
        update = {"case_ids": tuple(sorted(plan.trials)), "case_trials": plan.trials}
        result = run(suite, config.model_copy(update=update))
        rows = read_run(result.run_dir)
        replay = allocation_plan(rows, record.order, conditions, design, max_rounds=rounds)
        if replay.rounds >= rounds or result.failure is not None:
            return result, rows
        config = config.model_copy(update={"resume": True, "extend": True})


def _budget_reason(record: SequentialRecord, rounds: int, items: int, cost: float | None) -> str:
    """Which budget forbids another round ("": another round fits)."""
    if record.max_rounds is not None and rounds >= record.max_rounds:
        return "max-rounds"
    following = 2 * record.round_cases
    if record.max_items is not None and items + following > record.max_items:
        return "max-items"
    if record.max_usd is not None and cost is not None and cost + cost / rounds > record.max_usd:
        return "max-usd"
    return ""


def run_allocated(
    suite: Suite, config: RunConfig, record: SequentialRecord, run_id: str
) -> tuple[RunResult, SequentialComparison, str, int, pd.DataFrame]:
    """The rounds of a run under allocation until a settled look or a spent budget.

    Args:
        suite: The loaded suite.
        config: Run options (conditions, trials, seed, ...).
        record: The run's sequential record, with ``allocation``.
        run_id: The run's id.

    Returns:
        ``(last run, comparison at the last look, stop reason, rounds, results)``.

    Raises:
        ConfigError: A budget smaller than one round.
    """
    if record.max_items is not None and record.max_items < 2 * record.round_cases:
        raise ConfigError(
            f"--max-items {record.max_items} is smaller than one round ({2 * record.round_cases}"
            f" items: {record.round_cases} pairs x 2 conditions); raise it or lower --round-cases"
        )
    assert record.allocation is not None
    design = _design(record.allocation)
    conditions = (record.baseline, record.candidate)
    rounds = 0
    if config.resume:
        done = allocation_plan(_results(Path(config.runs_dir) / run_id), record.order,
                               conditions, design).rounds  # fmt: skip
        rounds = max(0, done - 1)
    while True:
        rounds += 1
        round_config = config.model_copy(
            update={
                "run_id": run_id,
                "conditions": conditions,
                "resume": config.resume or rounds > 1,
                "extend": True,
            }
        )
        result, rows = _round(suite, round_config, record, rounds)
        comparison = allocated_compare_tables(
            rows, record.order, conditions, design,
            options=CompareOptions(threshold=record.threshold, confidence=record.confidence),
            plan_pairs=record.plan_cases, plan_effect=record.plan_effect,
            futility_beta=FUTILITY_BETA if record.futility_beta is None else record.futility_beta,
            max_rounds=rounds,
        )  # fmt: skip
        cost = agent_cost(rows)
        budget = _budget_reason(record, rounds, len(rows), cost)
        reason = close_round(record, comparison, rounds, result, len(rows), cost, budget)
        if reason:
            return result, comparison, reason, rounds, rows
