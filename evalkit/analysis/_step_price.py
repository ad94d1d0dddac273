"""What a next step costs: items, money and wall time, from the compared runs' own records.

A plan that says "run 212,000 items" without a price is advice nobody should follow. The
price is read from the runs themselves: the mean agent cost per item (``cost_usd``; a
simulated provider's costs are marked as simulated, since nothing is billed), and the mean
latency per item divided by the concurrency the command would run at (the run's own, from its
command line; ``evalkit run``'s default otherwise). A plan is *out of
proportion* when it would run more than :data:`OUT_OF_PROPORTION` times the items compared
so far; the next step then says so and recommends the alternative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from evalkit._settings import CONCURRENCY

#: A plan running more than this many times the items compared so far is out of proportion.
OUT_OF_PROPORTION = 10.0
#: Concurrency assumed for the wall time (``evalkit run``'s default).
DEFAULT_CONCURRENCY = CONCURRENCY.default


@dataclass(frozen=True)
class Price:
    """The price of running ``items`` more items.

    Attributes:
        items: Items the command runs.
        cost_usd: Estimated agent cost (None: the runs record no cost).
        simulated: The runs' provider is the simulated one (its cost is not billed).
        wall_s: Estimated wall time at ``concurrency`` (None: no latency).
        ratio: ``items`` over the items compared so far.
        concurrency: Items in flight the wall time assumes (the run's own).
    """

    items: int
    cost_usd: float | None
    simulated: bool
    wall_s: float | None
    ratio: float
    concurrency: int = DEFAULT_CONCURRENCY

    @property
    def out_of_proportion(self) -> bool:
        """Whether the plan runs more than :data:`OUT_OF_PROPORTION` times the items so far."""
        return self.ratio > OUT_OF_PROPORTION

    def text(self) -> str:
        """The price in words: items, cost, wall time and the ratio to the items so far."""
        parts = [f"about {self.items:,} items"]
        if self.cost_usd is not None:
            cost = f"${self.cost_usd:,.2f}"
            parts.append(f"{cost} if billed (simulated provider)" if self.simulated else cost)
        if self.wall_s is not None:
            parts.append(f"{_duration(self.wall_s)} at concurrency {self.concurrency}")
        return ", ".join(parts) + f"; {self.ratio:.1f}x the items compared so far"


def price(items: int, rows: pd.DataFrame, concurrency: int = DEFAULT_CONCURRENCY) -> Price:
    """The price of ``items`` more items like ``rows`` (the compared runs' rows).

    Examples:
        >>> rows = pd.DataFrame({"cost_usd": [0.01, 0.03], "latency_s": [10.0, 30.0],
        ...                      "provider": ["simulated"] * 2})
        >>> p = price(100, rows)
        >>> round(p.cost_usd, 2), p.simulated, p.wall_s, p.ratio
        (2.0, True, 1000.0, 50.0)
    """
    cost = _mean(rows, "cost_usd")
    latency = _mean(rows, "latency_s")
    simulated = "provider" in rows and len(rows) > 0 and bool(
        (rows["provider"].astype(str) == "simulated").all()
    )
    return Price(
        items=int(items),
        cost_usd=None if cost is None else cost * items,
        simulated=simulated,
        wall_s=None if latency is None else latency * items / max(concurrency, 1),
        ratio=items / max(len(rows), 1),
        concurrency=max(concurrency, 1),
    )


def _mean(rows: pd.DataFrame, column: str) -> float | None:
    if column not in rows:
        return None
    values = pd.to_numeric(rows[column], errors="coerce").dropna()
    mean = float(values.mean()) if len(values) else float("nan")
    return mean if math.isfinite(mean) else None


def _duration(seconds: float) -> str:
    """``"40 s"``, ``"25 min"``, ``"3.2 h"``, ``"4.1 days"``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
