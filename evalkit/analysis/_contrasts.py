"""The lifts as contrasts of condition roles (A none, B self-load, C preloaded, D stale)."""

from __future__ import annotations

from typing import Final, Literal

#: The lift metrics that are contrasts of two roles.
LiftContrast = Literal["realized_lift", "oracle_lift", "routing_gap", "stale_harm"]

#: Each lift metric as (higher role, lower role): the metric is the first minus the second.
LIFT_CONTRASTS: Final[dict[LiftContrast, tuple[str, str]]] = {
    "realized_lift": ("B", "A"),
    "oracle_lift": ("C", "A"),
    "routing_gap": ("C", "B"),
    "stale_harm": ("D", "C"),
}
