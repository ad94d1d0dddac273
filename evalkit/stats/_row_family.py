"""One verdict per row: per-provider and per-condition rows corrected across their family.

A comparison with several providers (or, between two runs, several conditions) prints one row
per provider (condition), each with its own interval, verdict and the p-value of its sign-flip
test over cases. Those rows are a family of tests: read one at a time at alpha each, a
comparison of five providers that changed nothing names some provider "regressed" far more
often than alpha. The p a row prints is therefore Holm-adjusted across the rows of its family,
and the row's verdict follows that same corrected inference:

- a row says ``"improved"`` (``"regressed"``) only when its own verdict does (its interval
  excludes 0, its estimate reaches the practical threshold in that direction, and below 20
  cases its sign-flip test agrees; :func:`~evalkit.stats.overall_verdict`) **and** its
  Holm-adjusted p is below ``alpha``;
- a row whose own verdict has a direction but whose adjusted p is not below ``alpha`` is
  ``"inconclusive"``, and its ``verdict_note`` says why (the interval alone, or the raw p,
  would have named it).

So a printed direction always stands beside an adjusted p below alpha, and beside an interval
that excludes 0 beyond the threshold; the converse holds too (both signals agree, the row has
the direction). A family of one row is the comparison itself and is left as it is.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

import numpy as np

from evalkit.stats._verdicts import holm


class _SignFlip(Protocol):
    @property
    def pvalue(self) -> float:
        """Two-sided p-value."""


class Row(Protocol):
    """What this module reads of a per-provider or per-condition comparison."""

    @property
    def verdict(self) -> str:
        """The row's verdict."""

    @property
    def verdict_note(self) -> str:
        """Why the verdict is what it is."""

    @property
    def n_cases(self) -> int:
        """Cases the row compared."""

    @property
    def sign_flip(self) -> _SignFlip | None:
        """The row's sign-flip test over its cases."""


RowT = TypeVar("RowT", bound=Row)


def row_pvalue(part: Row) -> float:
    """The raw p-value of a row: its sign-flip test over cases (NaN without cases)."""
    if part.sign_flip is None or part.n_cases == 0:
        return float("nan")
    return float(part.sign_flip.pvalue)


def family_adjusted(parts: Sequence[Row]) -> np.ndarray:
    """Holm-adjusted p-values across the rows with a p-value (NaN for the others).

    Args:
        parts: The rows of one family (the providers of a comparison, or its conditions).

    Returns:
        One adjusted p per row; a family of one row gets its raw p.
    """
    raw = np.array([row_pvalue(part) for part in parts], dtype=float)
    adjusted = np.full(len(raw), np.nan)
    finite = np.isfinite(raw)
    if finite.any():
        adjusted[finite] = holm(raw[finite])
    return adjusted


def correct_family(
    parts: Sequence[tuple[str, RowT]], alpha: float, family: str
) -> tuple[tuple[str, RowT], ...]:
    """The rows with each verdict following its Holm-adjusted p (see the module docstring).

    Args:
        parts: ``(name, comparison)`` per row of the family.
        alpha: Significance level (``1 - confidence``).
        family: What the rows are, plural (``"providers"``, ``"conditions"``), for the note.

    Returns:
        The rows, a direction whose adjusted p is not below ``alpha`` turned
        ``"inconclusive"`` with a note; unchanged when there are fewer than two rows.
    """
    if len(parts) < 2:
        return tuple(parts)
    adjusted = family_adjusted([part for _, part in parts])
    counted = int(np.isfinite(adjusted).sum())
    out = []
    for (name, part), p in zip(parts, adjusted, strict=True):
        if part.verdict in ("improved", "regressed") and not (math.isfinite(p) and p < alpha):
            note = (
                f"on its own this {family[:-1]} would be {part.verdict} (raw p "
                f"{row_pvalue(part):.3g}), but its p Holm-adjusted across {counted} {family} "
                f"is {p:.3g}, not below {alpha:g}"
            )
            part = dataclasses.replace(part, verdict="inconclusive", verdict_note=note)  # type: ignore[type-var]
        out.append((name, part))
    return tuple(out)


def family_columns(parts: Sequence[tuple[str, Row]]) -> list[dict[str, Any]]:
    """``{"p_value", "p_adjusted"}`` per row, as the rows print them.

    Args:
        parts: ``(name, comparison)`` per row.

    Returns:
        One dict per row; ``p_adjusted`` is None for a family of one row (it is the
        comparison itself, whose verdict its own rule decides).
    """
    adjusted = family_adjusted([part for _, part in parts])
    return [
        {
            "p_value": _number(row_pvalue(part)),
            "p_adjusted": _number(float(p)) if len(parts) > 1 else None,
        }
        for (_, part), p in zip(parts, adjusted, strict=True)
    ]


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None
