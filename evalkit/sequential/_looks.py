"""A sequential run's record of its looks: one per round, written from the comparison's last."""

from __future__ import annotations

from evalkit.results import LookRecord, SequentialRecord
from evalkit.stats import SequentialComparison


def record_look(
    record: SequentialRecord,
    comparison: SequentialComparison,
    rounds: int,
    items: int,
    cost: float | None,
) -> None:
    """Replace round ``rounds``'s look (and any later one) with the comparison's last look.

    Args:
        record: The run's sequential record (its ``looks`` are rewritten in place).
        comparison: The sequential comparison of every round so far.
        rounds: The round just looked at.
        items: The items run so far.
        cost: Their agent cost.
    """
    last = comparison.looks[-1] if comparison.looks else None
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
