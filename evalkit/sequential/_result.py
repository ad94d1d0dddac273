"""What ``evalkit run --until-verdict`` returns: :class:`SequentialRun`.

Kept apart from the loop (:mod:`evalkit.sequential._loop`, which imports the runner and the
suite models) so the report can name the type, to show one, without loading either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalkit._display import RichDisplay

if TYPE_CHECKING:
    from evalkit.results import SequentialRecord
    from evalkit.runner import RunResult
    from evalkit.stats import SequentialComparison


@dataclass(frozen=True)
class SequentialRun(RichDisplay):
    """A run that stopped when its verdict was settled or its budget spent.

    Attributes:
        run: The last round's run summary.
        comparison: The sequential comparison at the last look.
        stop_reason: ``improved``, ``regressed``, ``futile``, ``futile-planned``,
            ``max-items``, ``max-usd``, ``max-rounds``, ``cases-exhausted`` or ``run-failed``
            (every item of the run or of a condition errored: nothing was measured; the CLI
            exits 3).
        rounds: Rounds run.
        items: Items of the run.
        cost_usd: Agent cost of the run (None when the provider reports none).
        record: The manifest's ``sequential`` record.
    """

    run: RunResult
    comparison: SequentialComparison
    stop_reason: str
    rounds: int
    items: int
    cost_usd: float | None
    record: SequentialRecord = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The ``compare`` JSON of the last look, plus the run's facts.

        ``looks``, ``stopped_at`` and ``method`` come with the comparison; extended with
        ``run_id``, ``stop_reason``, ``rounds``, ``items``, ``cost_usd`` and ``run`` (the
        ``evalkit run --json`` object of the last round).
        """
        out = self.comparison.to_dict()
        out.update(
            run_id=self.run.run_id,
            stop_reason=self.stop_reason,
            rounds=self.rounds,
            items=self.items,
            cost_usd=self.cost_usd,
            run=self.run.to_dict(),
        )
        return out
