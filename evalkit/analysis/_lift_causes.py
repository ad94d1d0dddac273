"""What the failures of each condition are made of, against the baseline condition (``lift``).

``lift`` counts each condition's failing items by primary cause
(:func:`evalkit.results.failure_causes`); this module sets each condition's counts beside those
of the baseline role (A), unfinished items apart from wrong answers
(:func:`evalkit.results.cause_changes`), so an edit that avoids timeouts does not read as one
that answers better.
"""

from __future__ import annotations

import pandas as pd

from evalkit.results import cause_changes

#: Columns of ``LiftResult.failure_changes``.
FAILURE_CHANGE_COLUMNS = (
    "provider", "baseline_condition", "condition", "outcome", "cause", "baseline", "candidate",
    "change",
)


def lift_cause_changes(causes: pd.DataFrame, baseline_condition: str) -> pd.DataFrame:
    """Each condition's failures by cause against the baseline condition's, per provider.

    Args:
        causes: ``LiftResult.failure_causes`` (``provider, condition, outcome, cause,
            failures, share``).
        baseline_condition: The condition of role A.

    Returns:
        Columns :data:`FAILURE_CHANGE_COLUMNS`: one row per provider, other condition and
        cause (:func:`evalkit.results.cause_changes`); empty when the baseline condition has
        no row or no other condition failed.
    """
    if causes.empty or "provider" not in causes:
        return pd.DataFrame(columns=list(FAILURE_CHANGE_COLUMNS))
    parts = []
    for provider, group in causes.groupby("provider", sort=False, dropna=False):
        conditions = group["condition"].astype(str)
        if baseline_condition not in set(conditions):
            continue
        base = group[conditions == baseline_condition]
        for condition in dict.fromkeys(conditions):
            if condition == baseline_condition:
                continue
            changes = cause_changes(base, group[conditions == condition])
            parts.append(changes.assign(provider=provider, baseline_condition=baseline_condition,
                                        condition=condition))
    if not parts:
        return pd.DataFrame(columns=list(FAILURE_CHANGE_COLUMNS))
    return pd.concat(parts, ignore_index=True)[list(FAILURE_CHANGE_COLUMNS)]
