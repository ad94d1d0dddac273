"""The figure of a sequential trajectory: the sequence at every look and what it spent.

Two panels over the cases observed: above, the estimate and the confidence-sequence band after
each look with the stopping boundaries (0 for *regressed*, the practical threshold for
*improved*, the futility band ``(-threshold, threshold)``) and the settling look marked with
its verdict; below, the items (left axis) and the agent cost (right axis, scaled so that one
item of the left axis costs the observed cost per item) spent at each look, with horizontal
lines for what the fixed design (and the planned fixed design) would have spent. Every
artist that carries data has a ``gid`` (``sequence-band``, ``estimate``, ``boundary-regressed``,
``boundary-improved``, ``futility-band``, ``stop``, ``spent-items``, ``spent-cost``,
``fixed-design``, ``planned-design``), so a test or a script can find it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from evalkit.report._plots import (
    SERIES_COLORS,
    VERDICT_COLORS,
    _message_figure,
    _new_figure,
    _pp_tick,
    _style,
)

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from evalkit.report._sequential import SequentialTrajectory

#: Colours of the fixed design's and the planned design's lines.
_FIXED_COLOR = "#444444"
_PLANNED_COLOR = SERIES_COLORS[4]


def sequential_plot(
    trajectory: SequentialTrajectory, *, title: str = "Sequential trajectory"
) -> Figure:
    """The estimate and confidence sequence after each look, the boundaries, what was spent.

    Args:
        trajectory: The looks (:func:`~evalkit.report.sequential_trajectory`).
        title: Figure title.

    Returns:
        The figure (two panels sharing the x axis: cases observed).
    """
    looks = trajectory.looks
    if looks.empty:
        return _message_figure("no look taken yet", title)
    fig = _new_figure(8.0, 6.0)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    _draw_sequence(top, trajectory)
    _draw_spending(bottom, trajectory)
    right = max(
        float(looks["n_cases"].max()),
        float(trajectory.fixed_cases),
        float(trajectory.plan_cases or 0),
    )
    bottom.set_xlim(0, right * 1.04 + 0.5)
    bottom.set_xlabel("cases observed (both conditions, every trial)", fontsize=9)
    top.set_title(
        f"{title}: {trajectory.candidate} vs {trajectory.baseline}", loc="left", fontsize=12
    )
    handles: list[Any] = []
    labels: list[str] = []
    for ax in fig.axes:  # both panels and the cost axis, in one legend below the figure
        more, more_labels = ax.get_legend_handles_labels()
        handles += more
        labels += more_labels
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=7.5, frameon=False)
    return fig


def _plot_per_look(
    ax: Axes, x: np.ndarray, values: np.ndarray, color: str, *, gid: str, label: str
) -> None:
    """A line through the value after each look, a dot at every look (both panels' series)."""
    ax.plot(x, values, marker="o", markersize=4, color=color, linewidth=1.6, gid=gid, label=label)


def _draw_sequence(ax: Axes, trajectory: SequentialTrajectory) -> None:
    from matplotlib.ticker import FuncFormatter

    looks = trajectory.looks
    threshold = trajectory.threshold
    x = looks["n_cases"].to_numpy(dtype=float)
    estimate = looks["estimate"].to_numpy(dtype=float)
    ax.axhspan(
        -threshold,
        threshold,
        color="#bbbbbb",
        alpha=0.25,
        linewidth=0,
        gid="futility-band",
        label=f"futility band ±{threshold * 100:g} pp: futile once the sequence is inside",
    )
    ax.axhline(
        0,
        color=VERDICT_COLORS["regressed"],
        linewidth=1.2,
        gid="boundary-regressed",
        label="0: regressed once the upper bound is below",
    )
    ax.axhline(
        threshold,
        color=VERDICT_COLORS["improved"],
        linewidth=1.2,
        linestyle="--",
        gid="boundary-improved",
        label=f"+{threshold * 100:g} pp: improved once the estimate reaches it, lower bound > 0",
    )
    ax.fill_between(
        x,
        looks["ci_low"].to_numpy(dtype=float),
        looks["ci_high"].to_numpy(dtype=float),
        color=SERIES_COLORS[0],
        alpha=0.22,
        linewidth=0,
        gid="sequence-band",
        label=f"{trajectory.confidence:.0%} confidence sequence",
    )
    _plot_per_look(
        ax, x, estimate, SERIES_COLORS[0], gid="estimate", label="estimate (mean per-case change)"
    )
    stop = trajectory.stop
    if stop is not None:
        reason = str(looks["reason"].iloc[stop])
        colour = VERDICT_COLORS.get(str(looks["verdict"].iloc[stop]), "#333333")
        ax.plot(
            [x[stop]],
            [estimate[stop]],
            marker="*",
            markersize=15,
            color=colour,
            linestyle="none",
            gid="stop",
            zorder=5,
        )
        label = f"{reason} at {int(x[stop])} cases"
    else:
        reason = f" ({trajectory.stop_reason})" if trajectory.stop_reason else ""
        label = f"not settled{reason}"
    ax.annotate(
        label,
        (x[-1] if stop is None else x[stop], estimate[-1] if stop is None else estimate[stop]),
        textcoords="offset points",
        xytext=(6, -22),
        ha="right",
        fontsize=9,
        fontweight="bold",
    )
    ax.set_ylim(-1.05, 1.05)
    ax.yaxis.set_major_formatter(FuncFormatter(_pp_tick))
    ax.set_ylabel("change (candidate − baseline)", fontsize=9)
    _style(ax)
    ax.grid(axis="y", color="#e5e5e5", linewidth=0.8)


def _draw_spending(ax: Axes, trajectory: SequentialTrajectory) -> None:
    looks = trajectory.looks
    x = looks["n_cases"].to_numpy(dtype=float)
    items = looks["items"].to_numpy(dtype=float)
    known = bool(len(items)) and all(math.isfinite(v) for v in items)
    spent = items if known else x
    unit = "items" if known else "cases"
    fixed = trajectory.fixed_items if known else float(trajectory.fixed_cases)
    planned = trajectory.planned_items if known else trajectory.plan_cases
    _plot_per_look(ax, x, spent, SERIES_COLORS[1], gid="spent-items", label=f"{unit} spent")
    designs = (
        ("fixed design", "fixed-design", _FIXED_COLOR, "--", trajectory.fixed_cases, fixed,
         trajectory.fixed_cost_usd),
        ("planned fixed design", "planned-design", _PLANNED_COLOR, ":", trajectory.plan_cases,
         planned, trajectory.planned_cost_usd),
    )
    for name, gid, colour, style, cases, level, design_cost in designs:
        if level is not None:
            ax.axhline(
                level,
                color=colour,
                linewidth=1.2,
                linestyle=style,
                gid=gid,
                label=f"{name}: {cases} cases"
                + (f", {level:,.0f} items" if known else "")
                + _cost_text(design_cost if known else None),
            )
    top = max([float(spent.max()), fixed or 0.0, float(planned or 0.0)]) * 1.12
    ax.set_ylim(0, top)
    ax.set_ylabel(f"{unit} spent", fontsize=9)
    _style(ax)
    ax.grid(axis="y", color="#e5e5e5", linewidth=0.8)
    rate = trajectory.cost_per_item
    if known and rate is not None and rate > 0:
        cost = ax.twinx()
        cost.plot(
            x,
            looks["cost_usd"].to_numpy(dtype=float),
            marker="s",
            markersize=4,
            linestyle="none",
            color=SERIES_COLORS[2],
            gid="spent-cost",
            label="agent cost spent (right axis)",
        )
        cost.set_ylim(0, top * rate)
        cost.set_ylabel("agent cost spent (USD)", fontsize=9)
        cost.spines["top"].set_visible(False)
        cost.tick_params(labelsize=9)


def _cost_text(cost: float | None) -> str:
    return f", ${cost:,.2f}" if cost is not None and math.isfinite(cost) else ""
