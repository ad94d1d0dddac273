"""Scalar result types shared by the statistics modules."""

from __future__ import annotations

import math
from typing import Any, NamedTuple


def json_float(value: Any) -> float | None:
    """Return ``value`` as a plain float, or None when it is NaN, infinite or None.

    Args:
        value: A number (Python or numpy) or None.

    Returns:
        A JSON-serializable float, or None where the value is undefined.
    """
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


class Interval(NamedTuple):
    """A point estimate with a confidence interval.

    Attributes:
        estimate: The point estimate (NaN when undefined, e.g. no data).
        ci_low: Lower confidence bound.
        ci_high: Upper confidence bound.
        confidence: Confidence level of the interval, e.g. 0.95.
        method: How the interval was computed (``"wilson"``, ``"t"``, ...).
    """

    estimate: float
    ci_low: float
    ci_high: float
    confidence: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict; undefined values become None.

        Returns:
            Keys ``estimate, ci_low, ci_high, confidence, method``.
        """
        return {
            "estimate": json_float(self.estimate),
            "ci_low": json_float(self.ci_low),
            "ci_high": json_float(self.ci_high),
            "confidence": float(self.confidence),
            "method": self.method,
        }
