"""A sequential run's record of its looks: one per round, written from the comparison's last."""

from __future__ import annotations

from pathlib import Path

from evalkit.results import (
    PARTS_DIR,
    RESULTS_FILE,
    LookRecord,
    SequentialRecord,
    append_event,
    load_manifest,
    write_manifest,
)
from evalkit.runner import RunResult
from evalkit.stats import SequentialComparison


def has_results(run_dir: Path) -> bool:
    """Whether a run directory holds any finished item (compacted or in parts)."""
    return (run_dir / RESULTS_FILE).exists() or any((run_dir / PARTS_DIR).glob("*.parquet"))


def close_round(
    record: SequentialRecord,
    comparison: SequentialComparison,
    rounds: int,
    result: RunResult,
    items: int,
    cost: float | None,
    budget_reason: str | None,
) -> str:
    """Record round ``rounds``'s look and say whether the run stops there.

    The comparison's last look goes into ``record`` (``items`` run so far, their agent
    ``cost``), the run's events and its manifest. The run stops at a
    settled look, at a spent budget (``budget_reason``, None: another round fits), or when the
    round's run failed (its pass rates measure nothing: no further round).

    Returns:
        The stop reason ("": go on).
    """
    last = comparison.looks[-1] if comparison.looks else None
    # this round's look replaces any of it or a later round (a resumed run looks again)
    record.looks = [look for look in record.looks if look.round < rounds]
    record.looks.append(
        LookRecord(
            round=rounds,
            n_cases=last.n_cases if last else 0,
            items=items,
            cost_usd=cost,
            estimate=last.estimate if last else None,
            ci_low=last.ci_low if last else None,
            ci_high=last.ci_high if last else None,
            verdict=last.verdict if last else "inconclusive",
            reason=last.reason if last else "",
            futility_wealth=last.futility_wealth if last else None,
        )
    )
    reason = (last.reason if last else "") or budget_reason or ""
    if result.failure is not None:
        reason = "run-failed"
    record.stop_reason = reason or None
    append_event(result.run_dir, "sequential_look", **record.looks[-1].model_dump())
    manifest = load_manifest(result.run_dir)
    if manifest is not None:
        write_manifest(result.run_dir, manifest.model_copy(update={"sequential": record}))
    return reason
