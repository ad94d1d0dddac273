"""The per-provider verdicts of a comparison, with Holm's correction across providers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import pandas as pd

from evalkit.stats._interval import Interval
from evalkit.stats._row_family import family_adjusted


class Compared(Protocol):
    """What these functions read of a :class:`~evalkit.stats.PairedComparison`."""

    @property
    def delta(self) -> Interval:
        """The overall interval (its confidence level sets Holm's alpha)."""

    @property
    def by_provider(self) -> Sequence[tuple[str, Any]]:
        """``(provider, PairedComparison)`` pairs."""

#: Columns of :func:`provider_table`.
PROVIDER_COLUMNS = (
    "provider", "verdict", "estimate", "ci_low", "ci_high", "n_cases", "wins", "losses",
    "ties", "p_value", "p_adjusted", "regressed",
)


def provider_table(comparison: Compared) -> pd.DataFrame:
    """One row per provider: its verdict and figures, with Holm's correction across them.

    The verdict follows the printed adjusted p (:mod:`evalkit.stats._row_family`): a provider
    is ``"improved"`` or ``"regressed"`` only when its own interval, threshold and sign-flip
    rule say so and its Holm-adjusted p is below ``1 - confidence``.

    Args:
        comparison: A comparison with several providers (``by_provider``).

    Returns:
        Columns ``provider, verdict, estimate, ci_low, ci_high, n_cases, wins, losses, ties,
        p_value, p_adjusted, regressed``: ``p_value`` is the provider's sign-flip test over its
        cases, ``p_adjusted`` Holm's adjustment across the providers, and ``regressed`` is
        True when the verdict is ``"regressed"`` (so the practical threshold binds it as it
        binds ``"improved"``; the "no provider regressed" rule of ``gate``). Empty with one
        provider.
    """
    rows = [
        {
            "provider": name,
            "verdict": part.verdict,
            "estimate": part.delta.estimate,
            "ci_low": part.delta.ci_low,
            "ci_high": part.delta.ci_high,
            "n_cases": part.n_cases,
            "wins": part.wins,
            "losses": part.losses,
            "ties": part.ties,
            "p_value": float("nan") if part.sign_flip is None else part.sign_flip.pvalue,
        }
        for name, part in comparison.by_provider
    ]
    table = pd.DataFrame(rows, columns=list(PROVIDER_COLUMNS[:-2]))
    table["p_adjusted"] = family_adjusted([part for _, part in comparison.by_provider])
    table["regressed"] = table["verdict"] == "regressed"
    return table


def provider_summary(comparison: Compared) -> dict[str, dict[str, Any]]:
    """``by_provider`` of the ``compare`` JSON: provider -> its verdict and figures.

    Args:
        comparison: A comparison (empty result with one provider).

    Returns:
        ``{provider: {"verdict", "delta", "ci_low", "ci_high", "n_cases", "wins", "losses",
        "ties", "p_value", "p_adjusted", "regressed", "verdict_note"}}`` (Holm across
        providers; see :func:`provider_table`); a provider that contributed no case says why
        in ``verdict_note`` (e.g. "ran only model-a").
    """
    left_out: dict[str, str] = getattr(comparison, "left_out_reasons", {})
    return {
        str(row["provider"]): {
            ("delta" if key == "estimate" else str(key)): row[key]
            for key in row
            if key != "provider"
        }
        | {"verdict_note": left_out.get(str(row["provider"]), part.verdict_note)}
        for row, (_, part) in zip(
            provider_table(comparison).to_dict("records"), comparison.by_provider, strict=True
        )
    }
