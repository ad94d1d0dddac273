"""Why items of a comparison found no partner: the unmatched groups summarised with reasons.

A comparison pairs each unit (case, condition, provider, ...) of the baseline with the same
unit of the candidate; a unit present on one side only is *unmatched* and reported, never
silently dropped. A bare count ("320 unmatched item group(s)") leaves the reader to guess
whether the runs are broken; most of the time the reason is plain from the data: a provider
ran only one side, or one run has cases the other never ran.
"""

from __future__ import annotations

from typing import Any, Protocol

import pandas as pd


class Unmatched(Protocol):
    """What :func:`unmatched_summary` reads of a :class:`~evalkit.stats.PairedComparison`."""

    @property
    def unmatched(self) -> pd.DataFrame:
        """Units present on one side only (unit columns, ``side``, ``n``)."""

    @property
    def baseline_label(self) -> str:
        """What the baseline is."""

    @property
    def candidate_label(self) -> str:
        """What the candidate is."""

    @property
    def left_out_reasons(self) -> dict[str, str]:
        """Providers that contributed no case -> why, in words."""


class LeftOut(Protocol):
    """What :func:`left_out_reasons` reads of a comparison."""

    @property
    def left_out_providers(self) -> tuple[tuple[str, str], ...]:
        """``(provider, side)`` of the providers that contributed no case."""

    @property
    def baseline_label(self) -> str:
        """What the baseline is."""

    @property
    def candidate_label(self) -> str:
        """What the candidate is."""


def left_out_reasons(comparison: LeftOut) -> dict[str, str]:
    """Why each provider that contributed no case did not, in words ("ran only model-a")."""
    said = {
        "baseline": f"ran only {comparison.baseline_label}",
        "candidate": f"ran only {comparison.candidate_label}",
        "reused": "every pair was one sample (reused), so no case",
        "both": "ran both sides but no case on both",
    }
    return {name: said[side] for name, side in comparison.left_out_providers}


def left_out_text(reasons: dict[str, str]) -> str:
    """Providers grouped by reason: ``"a, b (ran only X); c (...)"``."""
    groups: dict[str, list[str]] = {}
    for name, reason in reasons.items():
        groups.setdefault(reason, []).append(name)
    return "; ".join(f"{', '.join(names)} ({reason})" for reason, names in groups.items())


#: Case ids named per entry of the summary.
EXAMPLES = 3


def unmatched_summary(comparison: Unmatched) -> list[dict[str, Any]]:
    """The unmatched groups of a comparison, one entry per side and reason.

    Args:
        comparison: A comparison (its ``unmatched`` table has the unit columns, ``side`` and
            ``n``).

    Returns:
        ``[{"side", "groups", "items", "providers", "reason", "examples"}]``: ``side`` is
        where the items are (``baseline`` or ``candidate``), ``groups`` the unmatched units
        and ``items`` their items; ``providers`` the providers they belong to when the
        reason is a provider's (else empty); ``examples`` up to three case ids.
    """
    table = comparison.unmatched
    if table.empty:
        return []
    labels = {"baseline": comparison.baseline_label, "candidate": comparison.candidate_label}
    other = {"baseline": comparison.candidate_label, "candidate": comparison.baseline_label}
    left_out = comparison.left_out_reasons
    by_provider = (
        table["provider"].astype(str).map(left_out)
        if "provider" in table and left_out
        else pd.Series(None, index=table.index, dtype=object)
    )
    entries = []
    for side in ("baseline", "candidate"):
        rows = table[table["side"] == side]
        if rows.empty:
            continue
        reasons = by_provider.loc[rows.index]
        for reason, group in rows.groupby(reasons, sort=False, dropna=True):
            entries.append(_entry(side, group, sorted(set(group["provider"].astype(str))),
                                  f"their providers {reason}"))
        rest = rows[reasons.isna()]
        if not rest.empty:
            entries.append(_entry(
                side, rest, [],
                f"units {labels[side]} ran that {other[side]} did not (a case, condition or "
                "provider missing on the other side: a changed suite, a filter, or an "
                "unfinished run)",
            ))
    return entries


def _entry(side: str, rows: pd.DataFrame, providers: list[str], reason: str) -> dict[str, Any]:
    """One entry of :func:`unmatched_summary`."""
    examples = list(dict.fromkeys(rows["case_id"].astype(str))) if "case_id" in rows else []
    return {
        "side": side,
        "groups": len(rows),
        "items": int(rows["n"].sum()) if "n" in rows else len(rows),
        "providers": providers,
        "reason": reason,
        "examples": examples[:EXAMPLES],
    }


def unmatched_lines(comparison: Unmatched, listed: str = " (see --json)") -> list[str]:
    """The unmatched groups in words, one line per side and reason (empty when none).

    Args:
        comparison: The comparison.
        listed: Where the groups are listed, appended to the head line (``" (listed
            below)"`` in a report, ``""`` where they are not listed).
    """
    summary = unmatched_summary(comparison)
    if not summary:
        return []
    labels = {"baseline": comparison.baseline_label, "candidate": comparison.candidate_label}
    total = sum(entry["groups"] for entry in summary)
    lines = [f"{total} unmatched item group(s), left out of every figure above{listed}:"]
    for entry in summary:
        who = f" of {', '.join(entry['providers'])}" if entry["providers"] else ""
        examples = (
            f" (e.g. {', '.join(entry['examples'])})"
            if entry["examples"] and not entry["providers"]
            else ""
        )
        lines.append(
            f"  {entry['groups']} {labels[entry['side']]}-only group(s), {entry['items']} "
            f"item(s){who}: {entry['reason']}{examples}"
        )
    return lines
