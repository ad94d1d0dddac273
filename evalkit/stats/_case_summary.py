"""Where the change is, in one sentence: concentrated in a few named cases, or uniform.

A comparison's mean can sit inside the practical threshold while two cases dropped by 40 pp.
When any case is named (the pooled case rows, :mod:`evalkit.stats._case_screen`) or the change
differs between cases (:mod:`evalkit.stats._case_interaction`), the text says so before
anything else: ``"-0.7 pp on average, concentrated: 2 cases dropped 32-49 pp"``.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import pandas as pd

from evalkit.stats._case_interaction import CaseInteraction
from evalkit.stats._frame import plain
from evalkit.stats._interval import Interval, json_float

#: The corrections of the case rows, in words.
_CORRECTION_WORDS = {
    "fdr_bh": "false discovery rate (Benjamini-Hochberg)",
    "fdr_by": "false discovery rate (Benjamini-Yekutieli)",
    "holm": "family-wise error (Holm)",
    "bonferroni": "family-wise error (Bonferroni)",
    "none": "level per case (uncorrected)",
}


class Screened(Protocol):
    """What :func:`case_summary` reads of a :class:`~evalkit.stats.PairedComparison`."""

    @property
    def delta(self) -> Interval:
        """The overall interval."""

    @property
    def alpha(self) -> float:
        """The level of the case rows."""

    @property
    def case_correction(self) -> str:
        """Their correction."""

    @property
    def case_rows(self) -> pd.DataFrame:
        """The rows that name cases."""

    @property
    def case_interaction(self) -> CaseInteraction | None:
        """The case x condition interaction test."""


def correction_words(correction: str, alpha: float) -> str:
    """``"a 5 % false discovery rate (Benjamini-Hochberg)"`` and the like."""
    return f"a {alpha * 100:g} % {_CORRECTION_WORDS.get(correction, correction)}"


def named_case_rows(rows: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """Each named case of a comparison's case rows with its estimate, interval and p.

    Args:
        rows: The pooled case rows (or per-unit rows) with ``verdict``.

    Returns:
        ``{"regressed": [...], "improved": [...]}``, each entry ``case_id`` (and ``lane``
        when present), ``estimate``, ``ci_low``, ``ci_high``, ``p_value``, ``p_adjusted``,
        ``n_baseline``, ``n_candidate``; the most moved case first.
    """
    out: dict[str, list[dict[str, Any]]] = {"regressed": [], "improved": []}
    if rows.empty:
        return out
    ids = [c for c in ("lane", "case_id") if c in rows.columns]
    for verdict, entries in out.items():
        chosen = rows[rows["verdict"] == verdict]
        chosen = chosen.iloc[chosen["estimate"].abs().to_numpy().argsort(kind="stable")[::-1]]
        seen: set[tuple[Any, ...]] = set()
        for row in chosen.to_dict("records"):
            key = tuple(row[c] for c in ids)
            if key in seen:
                continue
            seen.add(key)
            entry = {c: plain(row[c]) for c in ids}
            for column in ("estimate", "ci_low", "ci_high", "p_value", "p_adjusted"):
                entry[column] = json_float(row[column])
            entry["n_baseline"] = int(row["n_baseline"])
            entry["n_candidate"] = int(row["n_candidate"])
            entries.append(entry)
    return out


def _span(entries: list[dict[str, Any]]) -> str:
    sizes = sorted(abs(float(e["estimate"])) * 100 for e in entries)
    low, high = round(sizes[0]), round(sizes[-1])
    return f"{low} pp" if low == high else f"{low}–{high} pp"


def case_summary(comparison: Screened) -> str:
    """The sentence said first when cases are named or the change differs between cases.

    Args:
        comparison: A comparison (its overall interval, case rows and interaction test).

    Returns:
        E.g. ``"-0.7 pp on average, concentrated: 2 cases dropped 32–49 pp (named at a 5 %
        false discovery rate (Benjamini-Hochberg))"``; "" when no case is named and the
        interaction test does not reject.
    """
    named = named_case_rows(comparison.case_rows)
    interaction = comparison.case_interaction
    differs = interaction is not None and interaction.differs
    if not (named["regressed"] or named["improved"] or differs):
        return ""
    estimate = float(comparison.delta.estimate)
    average = (
        f"{estimate * 100:+.1f} pp on average" if math.isfinite(estimate) else "on average"
    )
    moved = []
    for verdict, verb in (("regressed", "dropped"), ("improved", "rose")):
        entries = named[verdict]
        if entries:
            count = f"{len(entries)} case{'s' if len(entries) > 1 else ''}"
            moved.append(f"{count} {verb} {_span(entries)}")
    level = correction_words(comparison.case_correction, comparison.alpha)
    if moved:
        lead = f"{average}, concentrated: " if differs else f"{average}; "
        return f"{lead}{' and '.join(moved)} (named at {level})"
    assert interaction is not None
    return (
        f"{average}, concentrated: the change differs between cases (interaction "
        f"{interaction.text()}), but no single case can be named at {level}; the average "
        "hides cases that moved"
    )
