"""The numbers every command that writes a run reports about it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from evalkit._plain import plain_fields


@dataclass(frozen=True)
class RunSummary:
    """A written run in numbers: the keys ``evalkit run --json`` and ``import --json`` share.

    Attributes:
        run_id: Run id.
        run_dir: Run directory.
        items: Work items in the run.
        ok: Items with status ``ok``.
        errors: Items with status ``error`` or ``timeout``.
        pass_rate: Share of items that passed (errors and timeouts count as failures;
            ungraded items, which have no outcome yet, are left out).
    """

    run_id: str
    run_dir: Path
    items: int
    ok: int
    errors: int
    pass_rate: float

    @classmethod
    def from_counts(
        cls, run_id: str, run_dir: Path, counts: Mapping[str, int], **more: Any
    ) -> Self:
        """Build a summary from a run's status counts.

        Args:
            run_id: Run id.
            run_dir: Run directory.
            counts: ``items``, ``passed`` and the items of each status (``ok``, ``error``,
                ``timeout``), as the manifest's ``counts`` holds them.
            **more: The fields a subclass adds.

        Returns:
            The summary (the pass rate of a run without items is 0).

        Examples:
            >>> counts = {"items": 4, "ok": 3, "error": 1, "timeout": 0, "passed": 2}
            >>> RunSummary.from_counts("r1", Path("runs/r1"), counts).to_dict()["pass_rate"]
            0.5
        """
        items = counts["items"]
        graded = items - counts.get("ungraded", 0)
        return cls(
            run_id=run_id,
            run_dir=run_dir,
            items=items,
            ok=counts["ok"],
            errors=counts["error"] + counts["timeout"],
            pass_rate=counts["passed"] / graded if graded else 0.0,
            **more,
        )

    def to_dict(self) -> dict[str, Any]:
        """The shared ``--json`` keys (``run_dir`` as a string)."""
        return plain_fields(self, RunSummary)
