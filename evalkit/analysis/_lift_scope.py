"""What lift's pool over providers can count, and whether the data records skill loading.

* **The pool's cells.** ``lift`` pools the providers of a lane, each case once. When the
  providers did not run the same conditions (on a leaderboard, four harnesses ran only model A
  and two ran both models), a pool of every row would set model A's rate over six harnesses
  against model B's over two: Simpson's paradox (-0.7 pp where the paired figure is +3.7).
  The pool therefore keeps only the (provider, case) cells that ran every role condition the
  lane has, and says which providers and cells it left out and why.
* **Trigger metrics.** Precision, recall and over/under-triggering read which skill the agent
  loaded under B. An import that records no loading (``inferred_skill`` and
  ``skill_loaded`` empty) would otherwise read as "never loaded a skill" and print an
  over-trigger rate of 0.000; they are left out with one line saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from evalkit.stats import left_out_text


@dataclass(frozen=True)
class PoolScope:
    """The cells a lane's pool over providers counts.

    Attributes:
        lane: The lane.
        providers: Providers with at least one cell in the pool.
        cells: (provider, case) cells pooled.
        left_out: ``{provider: reason}`` for providers with no cell in the pool.
        dropped_cells: Cells of pooled providers left out (a condition missing there).
    """

    lane: str
    providers: tuple[str, ...]
    cells: int
    left_out: Mapping[str, str] = field(default_factory=dict)
    dropped_cells: int = 0

    def note(self) -> str:
        """One sentence on what the pool left out ("" when it kept everything)."""
        if not self.left_out and not self.dropped_cells:
            return ""
        parts = [left_out_text(dict(self.left_out))] if self.left_out else []
        if self.dropped_cells:
            parts.append(f"{self.dropped_cells} other (provider, case) cell(s) missing a condition")
        return (
            f"{self.lane}: pooled over the {self.cells} (provider, case) cells that ran every "
            f"condition ({', '.join(self.providers) or 'none'}); left out: {'; '.join(parts)} "
            "(pooling them would set one condition's providers against another's)"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON object of ``lift --json``'s ``pooled_scope``."""
        return {
            "lane": self.lane,
            "providers": list(self.providers),
            "cells": int(self.cells),
            "left_out": [{"provider": p, "reason": r} for p, r in self.left_out.items()],
            "dropped_cells": int(self.dropped_cells),
            "note": self.note(),
        }


def pool_cells(
    group: pd.DataFrame, roles: Mapping[str, str], lane: str
) -> tuple[pd.DataFrame, PoolScope]:
    """A lane's rows cut to the (provider, case) cells that ran every role condition there.

    Args:
        group: The lane's rows (``provider, case_id, condition``).
        roles: Role -> condition.
        lane: The lane's name (for the note).

    Returns:
        ``(rows of the kept cells, scope)``.
    """
    wanted = [c for c in dict.fromkeys(roles.values()) if c in set(group["condition"])]
    present = pd.crosstab(
        [group["provider"], group["case_id"]], group["condition"]
    ).reindex(columns=wanted, fill_value=0) > 0
    full = present.all(axis=1)
    kept = full[full].index
    index = pd.MultiIndex.from_frame(group[["provider", "case_id"]])
    rows = group[index.isin(kept)]
    providers = tuple(sorted(set(rows["provider"].astype(str))))
    ran = group.groupby("provider", sort=True)["condition"].agg(lambda s: sorted(set(s)))
    left_out = {
        str(p): f"ran only {', '.join(map(str, conditions))}"
        if set(conditions) != set(wanted) else "no case ran every condition"
        for p, conditions in ran.items() if str(p) not in providers
    }
    dropped = int((~full).groupby(level=0).sum().reindex(list(providers)).fillna(0).sum())
    return rows, PoolScope(lane, providers, int(full.sum()), left_out, dropped)


def records_loading(items: pd.DataFrame) -> bool:
    """Whether these items record which skill the agent loaded (any value of either column)."""
    for column in ("inferred_skill", "skill_loaded"):
        if column in items and items[column].notna().any():
            return True
    return False


def trigger_absence(frame: pd.DataFrame, roles: Mapping[str, str]) -> str:
    """Why the trigger metrics are absent ("" when they are computed or B is not in the data)."""
    items = frame[frame["condition"] == roles["B"]]
    if items.empty or records_loading(items):
        return ""
    return (
        f"no trigger metrics: the items under {roles['B']} record no skill loading "
        "(inferred_skill and skill_loaded are empty, as in imports that do not observe it), "
        "so precision, recall and over/under-triggering cannot be read"
    )


def case_rates(group: pd.DataFrame, *, providers_alike: bool = False) -> pd.DataFrame:
    """Each case's rate per condition (cases x conditions), the figure every lift metric uses.

    Args:
        group: Rows of one (provider, lane) group, or of a lane's pool over providers.
        providers_alike: Weigh a case's providers alike (the pool): a (provider, case) cell's
            rate is the mean of its trials and the case's the mean of its cells, as
            ``compare`` and the matched rates weigh them; otherwise the mean of the case's
            trials.

    Returns:
        Rates indexed by ``case_id``, one column per condition (NaN where a case lacks it).

    Examples:
        >>> rows = pd.DataFrame({"case_id": ["a"] * 4, "condition": "x",
        ...                      "provider": ["p", "p", "p", "q"],
        ...                      "passed": [True, True, True, False]})
        >>> float(case_rates(rows).loc["a", "x"]), float(
        ...     case_rates(rows, providers_alike=True).loc["a", "x"])
        (0.75, 0.5)
    """
    values = group.assign(passed=group["passed"].astype(float))
    if not providers_alike:
        return values.pivot_table(
            index="case_id", columns="condition", values="passed", aggfunc="mean", observed=True
        ).astype(float)
    cells = values.groupby(["case_id", "condition", "provider"], observed=True)["passed"].mean()
    rates = cells.groupby(level=["case_id", "condition"], observed=True).mean().unstack()
    rates.columns.name = "condition"
    return rates.astype(float)
