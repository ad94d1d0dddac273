"""The Simpson's-paradox guard of the run report: pooled rates beside matched ones."""

from __future__ import annotations

import pandas as pd

from evalkit._settings import CONFIDENCE
from evalkit.report._tables import Fragment, interval_table, note
from evalkit.stats import matched_rates


def matched_rate_section(rows: pd.DataFrame, confidence: float = CONFIDENCE.default) -> Fragment:
    """The Simpson's-paradox guard under a pass-rate-by-condition table.

    Empty when every condition ran the same (provider, case) cells; otherwise a warning
    naming how the cells differ and the two gaps (pooled, matched), and a table of each
    condition's rate over its own cells beside its rate over the cells every condition ran.

    Args:
        rows: Result rows.
        confidence: Level of the intervals.

    Returns:
        The warning and the table, or an empty fragment.
    """
    guard = matched_rates(rows, confidence=confidence)
    if guard.balanced:
        return Fragment("")
    table = guard.table
    matched = table.assign(
        estimate=table["matched_estimate"], ci_low=table["matched_ci_low"],
        ci_high=table["matched_ci_high"], confidence=confidence,
        pooled_rate=table["estimate"], own_cells=table["cells"],
        shared_cells=table["matched_cells"],
    )
    return note(guard.warning, "warn") + interval_table(
        matched, ["condition"], header="rate over the shared cells",
        extra=["shared_cells", "pooled_rate", "own_cells"], table_id="rates-matched",
        caption="Each condition over the (provider, case) cells every condition ran, beside "
        "its pooled rate over its own cells (a case's providers weighed alike, as compare "
        "weighs them)",
    )
