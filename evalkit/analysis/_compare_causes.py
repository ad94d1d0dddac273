"""What the compared failures are made of on each side (``compare``): did not finish, wrong.

A comparison's verdict says whether the candidate fails less; this table says how: failing
items by outcome ("did not finish": a timeout, a limit, a cancellation, a sandbox kill, an
error; "answered wrong": the rest) and primary cause on each side, so "timeouts avoided" and
"fewer wrong answers" read apart (:func:`evalkit.results.cause_changes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from evalkit.results import cause_changes, failure_causes


def compare_cause_changes(
    baseline: pd.DataFrame,
    baseline_scores: pd.DataFrame | None,
    candidate: pd.DataFrame,
    candidate_scores: pd.DataFrame | None,
    causes: tuple[Sequence[str] | None, Sequence[str] | None] = (None, None),
) -> tuple[dict[str, Any], ...]:
    """Failing items by outcome and primary cause on each side of a comparison.

    Args:
        baseline: The baseline side's compared rows.
        baseline_scores: Their score rows, or None.
        candidate: The candidate side's compared rows.
        candidate_scores: Their score rows, or None.
        causes: Each side's primary causes of its failing rows, when known.

    Returns:
        One ``{"outcome", "cause", "baseline", "candidate", "change"}`` per cause (counts of
        failing items), "did not finish" first, the largest change first within an outcome.
    """
    table = cause_changes(failure_causes(baseline, baseline_scores, by=(), causes=causes[0]),
                          failure_causes(candidate, candidate_scores, by=(), causes=causes[1]))
    return tuple(
        {"outcome": str(r["outcome"]), "cause": str(r["cause"]), "baseline": int(r["baseline"]),
         "candidate": int(r["candidate"]), "change": int(r["change"])}
        for r in table.to_dict("records")
    )
