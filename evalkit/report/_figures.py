"""The figures behind the ``plot...`` methods of evalkit's result objects.

The result types live below the report (:mod:`evalkit.analysis`, :mod:`evalkit.stats`) and
cannot import its plots; their ``plot...`` methods ask :func:`evalkit._display.draw`, and
:func:`register_figures` (run with the rich displays, at the first display or figure) names
the drawing of each. Each drawing is one call of :mod:`evalkit.report._plots`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._display import register_figure
from evalkit.ablation import AblationResult
from evalkit.analysis import LiftResult, RunComparison, Trend
from evalkit.report._ablation import ablation_plot
from evalkit.report._plots import forest_plot, heatmap, lift_plot, rate_plot, trend_plot
from evalkit.report._trend import lift_trend
from evalkit.stats import FlipRate

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _lift(result: LiftResult, *, title: str) -> Figure:
    return lift_plot(result.metrics, title=title)


def _success(result: LiftResult, *, max_facets: int) -> Figure:
    return rate_plot(
        result.success,
        facet=["provider", "lane"],
        max_facets=max_facets,
        title="Success by condition",
        xlabel="success (mean over cases; bars: CI)",
    )


def _flip_heatmap(result: FlipRate, *, title: str, colorbar_label: str, max_rows: int) -> Figure:
    return heatmap(
        result.by_case, title=title, colorbar_label=colorbar_label, max_rows=max_rows
    )


def _trend_overall(result: Trend) -> Figure:
    return trend_plot(
        result.overall, series="provider", facet="suite",
        title=f"Pass rate per {result.period}, all conditions", ylabel="pass rate",
        changes=result.changes(), period=result.period, change_label=result.change_label(),
    )


def _trend_pass_rates(result: Trend, *, suite: str) -> Figure:
    return trend_plot(
        result.pass_rates[result.pass_rates["suite"] == suite], series="condition",
        facet="provider", title=f"Pass rate per {result.period} by condition — suite {suite}",
        ylabel="pass rate", changes=result.changes(suite), period=result.period,
        change_label=result.change_label(suite),
    )


def _trend_lift(result: Trend, *, suite: str) -> Figure:
    return trend_plot(
        lift_trend(result.lift[result.lift["suite"] == suite]), series="metric",
        facet="provider", percent_points=True, title=f"Lift per {result.period} — suite {suite}",
        ylabel="difference", changes=result.changes(suite), period=result.period,
        change_label=result.change_label(suite),
    )


def register_figures() -> None:
    """Make the drawings above the figures of the result types' ``plot...`` methods."""
    register_figure(AblationResult, "plot", ablation_plot)
    register_figure(LiftResult, "plot", _lift)
    register_figure(RunComparison, "plot_forest", forest_plot)
    register_figure(LiftResult, "plot_success", _success)
    register_figure(FlipRate, "plot_heatmap", _flip_heatmap)
    register_figure(Trend, "plot_overall", _trend_overall)
    register_figure(Trend, "plot_pass_rates", _trend_pass_rates)
    register_figure(Trend, "plot_lift", _trend_lift)
