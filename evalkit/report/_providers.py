"""The provider dimension of a comparison: per-provider table, forest plot, heterogeneity."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from evalkit.report._plots import (
    VERDICT_COLORS,
    _message_figure,
    _new_figure,
    _style,
    figure_html,
)
from evalkit.report._tables import Fragment, interval_table
from evalkit.stats import PairedComparison


def provider_comparisons(comparison: PairedComparison) -> pd.DataFrame:
    """One row per provider of a comparison, each over its own cases.

    Args:
        comparison: A comparison with several providers
            (:attr:`~evalkit.stats.PairedComparison.by_provider`).

    Returns:
        ``provider, verdict, estimate, ci_low, ci_high, confidence, n_cases, wins, losses,
        ties, p_value, p_adjusted, regressed`` (Holm across providers); empty with one
        provider. Providers that contributed no case are left out (the section names them).
    """
    table = _compared(comparison)
    table.insert(5, "confidence", comparison.delta.confidence)
    return table


def _compared(comparison: PairedComparison) -> pd.DataFrame:
    """:meth:`~evalkit.stats.PairedComparison.provider_table` without the providers left out."""
    table = comparison.provider_table()
    left_out = comparison.left_out_reasons
    return table[~table["provider"].astype(str).isin(left_out)].reset_index(drop=True)


def provider_forest_plot(
    comparison: PairedComparison, title: str = "Change by provider (candidate - baseline)"
) -> Figure:
    """Each provider's delta with its interval, the pooled delta and the prediction interval.

    Args:
        comparison: A comparison with several providers.
        title: Figure title.

    Returns:
        The figure (a message figure with one provider).
    """
    table = _compared(comparison)
    if table.empty:
        return _message_figure("one provider: see the verdict", title)
    table = table.sort_values("estimate", kind="stable", na_position="first")
    n = len(table)
    fig = _new_figure(9.0, 1.6 + 0.3 * (n + 1))
    ax = fig.add_subplot()
    y = np.arange(n) + 1
    est = table["estimate"].to_numpy(dtype=float)
    low = np.nan_to_num(est - table["ci_low"].to_numpy(dtype=float))
    high = np.nan_to_num(table["ci_high"].to_numpy(dtype=float) - est)
    colours = [VERDICT_COLORS.get(str(v), "#555555") for v in table["verdict"]]
    for yi, x, lo, hi, colour in zip(y, est, low, high, colours, strict=True):
        ax.errorbar([x], [yi], xerr=[[max(lo, 0.0)], [max(hi, 0.0)]], fmt="o", color=colour,
                    ecolor=colour, elinewidth=1.4, capsize=2.5, markersize=5)
    pooled = comparison.delta
    ax.errorbar([pooled.estimate], [0], xerr=[[pooled.estimate - pooled.ci_low],
                                             [pooled.ci_high - pooled.estimate]],
                fmt="D", color="#222222", ecolor="#222222", elinewidth=2.0, capsize=3,
                markersize=6)
    spread = comparison.heterogeneity
    band = spread is not None and spread.prediction_shown
    if spread is not None and band:
        ax.axvspan(spread.pi_low, spread.pi_high, color="#cccccc", alpha=0.35, linewidth=0)
    ax.axvline(0, color="#444444", linewidth=0.9)
    for x in (-comparison.threshold, comparison.threshold):
        ax.axvline(x, color="#999999", linewidth=0.8, linestyle=":")
    ax.set_yticks([0, *y], ["pooled (each case once)", *table["provider"].astype(str)])
    ax.set_ylim(-0.8, n + 0.7)
    ax.set_xlabel(
        "change in pass rate (whiskers: interval"
        + ("; grey band: prediction interval for a new provider)" if band else ")"),
        fontsize=9,
    )
    _style(ax)
    ax.set_title(title, loc="left", fontsize=12)
    return fig


def provider_section(comparison: PairedComparison) -> Fragment:
    """The per-provider table, the forest plot and the heterogeneity line, or a note."""
    if not comparison.by_provider:
        return Fragment("<p>One provider: the verdict above is its verdict.</p>")
    table = interval_table(
        provider_comparisons(comparison), ["provider"], kind="pp", header="change",
        extra=["verdict", "n_cases", "wins", "losses", "ties", "p_adjusted", "regressed"],
        table_id="by-provider",
    )
    figure = figure_html(
        provider_forest_plot(comparison), "provider-forest",
        "Each provider's change with its interval; the pooled change counts each case once.",
    )
    line = comparison.heterogeneity.line() if comparison.heterogeneity is not None else ""
    if comparison.left_out_providers:
        line = f"Not compared: {comparison.left_out_text()}. {line}"
    return table + figure + Fragment(f"<p>{html.escape(line)}</p>")
