"""Matplotlib figures for the reports: one palette, intervals always drawn, labels always set.

Every function takes a tidy table produced by :mod:`evalkit.stats` or :mod:`evalkit.analysis`
(columns ``estimate, ci_low, ci_high`` plus group columns) and returns a
``matplotlib.figure.Figure`` built with the object-oriented API (no pyplot state, no backend
switch), so the same call works in a notebook, a script or a test. :func:`figure_html` turns
a figure into an embedded ``<figure>`` for the HTML reports. Nothing here computes a
statistic: the intervals drawn are the ones in the table.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalkit.analysis import RunComparison
from evalkit.report._tables import Fragment
from evalkit.stats import PairedComparison

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Colours of the four standard conditions (roles A-D of ``docs/architecture.md``). Defined
#: once, used everywhere.
CONDITION_COLORS: Mapping[str, str] = MappingProxyType(
    {
        "none": "#7f7f7f",  # grey: no skill
        "self-load": "#1f77b4",  # blue: the agent decides
        "preloaded": "#2ca02c",  # green: the oracle
        "stale": "#d62728",  # red: an old or wrong skill
    }
)
#: Colours for any other condition (tab10 without the four above), assigned by a stable hash.
EXTRA_COLORS: tuple[str, ...] = (
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#bcbd22",
    "#17becf",
)
#: Colours of per-case verdicts.
VERDICT_COLORS: Mapping[str, str] = MappingProxyType(
    {"improved": "#2ca02c", "regressed": "#d62728", "inconclusive": "#7f7f7f"}
)
#: Series colours for things that are not conditions (providers, lanes, metrics).
SERIES_COLORS: tuple[str, ...] = (
    "#4c72b0",
    "#dd8452",
    "#55a868",
    "#c44e52",
    "#8172b3",
    "#937860",
    "#da8bc3",
    "#8c8c8c",
)
#: Longest label drawn on an axis (longer case ids are shortened with an ellipsis).
LABEL_CHARS = 38
_DPI = 110
#: Least room (pixels) between two labels of a time axis.
_LABEL_GAP_PX = 12.0


def condition_color(condition: str) -> str:
    """The colour of one condition: fixed for the standard four, a stable hash otherwise.

    Args:
        condition: Condition name.

    Returns:
        A hex colour.

    Examples:
        >>> condition_color("stale"), condition_color("preloaded")
        ('#d62728', '#2ca02c')
        >>> condition_color("candidate") == condition_color("candidate")
        True
    """
    name = str(condition)
    if name in CONDITION_COLORS:
        return CONDITION_COLORS[name]
    digest = int(hashlib.sha1(name.encode("utf-8")).hexdigest(), 16)
    return EXTRA_COLORS[digest % len(EXTRA_COLORS)]


def order_conditions(conditions: Iterable[str]) -> list[str]:
    """Unique condition names, the standard ones first in role order (A-D), then the others.

    Args:
        conditions: Condition names.

    Returns:
        The ordered names.

    Examples:
        >>> order_conditions(["stale", "candidate", "none", "preloaded"])
        ['none', 'preloaded', 'stale', 'candidate']
    """
    names = list(dict.fromkeys(str(c) for c in conditions))
    rank = {name: i for i, name in enumerate(CONDITION_COLORS)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), names.index(n)))


def condition_palette(conditions: Iterable[str]) -> dict[str, str]:
    """Colours for a set of conditions: the fixed ones, then distinct extra colours.

    Unknown conditions keep their hashed colour unless another condition of the same set
    already took it; then the next free extra colour is used, so one figure never shows two
    conditions in the same colour (while there are colours left).

    Args:
        conditions: Condition names (duplicates are ignored).

    Returns:
        ``{condition: colour}``, standard conditions first (see :func:`order_conditions`).

    Examples:
        >>> condition_palette(["preloaded", "none"])
        {'none': '#7f7f7f', 'preloaded': '#2ca02c'}
    """
    names = order_conditions(conditions)
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        if name in CONDITION_COLORS:
            out[name] = CONDITION_COLORS[name]
            taken.add(out[name])
    for name in names:
        if name in out:
            continue
        colour = condition_color(name)
        if colour in taken:
            free = [c for c in EXTRA_COLORS if c not in taken]
            colour = free[0] if free else colour
        out[name] = colour
        taken.add(colour)
    return out


def shorten(text: object, limit: int = LABEL_CHARS) -> str:
    """A label no longer than ``limit`` characters (middle part replaced by an ellipsis).

    Args:
        text: Any value (converted with ``str``).
        limit: Maximum length.

    Returns:
        The label.

    Examples:
        >>> shorten("a-very-long-case-identifier-that-goes-on", 20)
        'a-very-lon…t-goes-on'
    """
    value = str(text).replace("\n", " ")
    if len(value) <= limit:
        return value
    head = (limit - 1) // 2 + (limit - 1) % 2
    tail = limit - 1 - head
    return value[:head] + "…" + (value[-tail:] if tail else "")


def _new_figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig


def _style(ax: Axes) -> None:
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.grid(axis="x", color="#e5e5e5", linewidth=0.8)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=9)


def _errors(table: pd.DataFrame) -> np.ndarray:
    """``xerr`` for matplotlib: distances from the estimate to each bound (NaN-safe)."""
    est = table["estimate"].to_numpy(dtype=float)
    low = table["ci_low"].to_numpy(dtype=float)
    high = table["ci_high"].to_numpy(dtype=float)
    lower = np.where(np.isfinite(low) & np.isfinite(est), np.maximum(est - low, 0.0), 0.0)
    upper = np.where(np.isfinite(high) & np.isfinite(est), np.maximum(high - est, 0.0), 0.0)
    return np.vstack([lower, upper])


def _pct(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value * 100:.0f}%"


def _pp_tick(value: float, _position: float) -> str:
    return "0" if abs(value) < 1e-9 else f"{value * 100:+.0f} pp"


def _message_figure(message: str, title: str) -> Figure:
    fig = _new_figure(7.5, 1.6)
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set_title(title, loc="left", fontsize=11)
    ax.text(0.5, 0.4, message, ha="center", va="center", fontsize=10, color="#555555")
    return fig


def rate_plot(
    rates: pd.DataFrame,
    *,
    facet: str | Sequence[str] | None = None,
    title: str = "Pass rate by condition",
    xlabel: str = "pass rate (mean over cases; whiskers: confidence interval)",
    max_facets: int = 8,
) -> Figure:
    """Horizontal bars of per-condition rates with their intervals, one panel per facet.

    Args:
        rates: A :func:`evalkit.stats.pass_rates` table (``condition, estimate, ci_low,
            ci_high``, and the ``facet`` column when given).
        facet: Column(s) splitting the panels (``"provider"``, ``["provider", "lane"]``), or
            None.
        title: Figure title.
        xlabel: Label of the rate axis.
        max_facets: Most panels drawn (the first ones in sorted order).

    Returns:
        The figure.
    """
    if rates.empty:
        return _message_figure("no data", title)
    if facet is not None and not isinstance(facet, str):
        columns = list(facet)
        facet = " / ".join(columns)
        rates = rates.assign(**{facet: rates[columns].astype(str).agg(" / ".join, axis=1)})
    facets: list[Any] = sorted(rates[facet].astype(str).unique()) if facet else [None]
    shown = facets[: max(1, max_facets)]
    conditions = order_conditions(rates["condition"].astype(str))
    palette = condition_palette(conditions)
    ncols = min(len(shown), 2)
    nrows = math.ceil(len(shown) / ncols)
    height = 0.45 + nrows * (0.55 + 0.36 * len(conditions))
    fig = _new_figure(9.0 if ncols > 1 else 7.5, height)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True)
    for index, ax in enumerate(axes.flat):
        if index >= len(shown):
            ax.set_visible(False)
            continue
        value = shown[index]
        part = rates if value is None else rates[rates[facet].astype(str) == value]
        part = (
            part.set_index(part["condition"].astype(str)).reindex(conditions).reset_index(drop=True)
        )
        part = part.assign(condition=conditions)
        y = np.arange(len(conditions))[::-1]
        est = part["estimate"].to_numpy(dtype=float)
        ax.barh(
            y,
            np.nan_to_num(est),
            color=[palette[c] for c in conditions],
            alpha=0.85,
            height=0.62,
        )
        ax.errorbar(
            np.nan_to_num(est),
            y,
            xerr=_errors(part),
            fmt="none",
            ecolor="#222222",
            elinewidth=1.2,
            capsize=3,
        )
        for yi, (e, hi) in zip(
            y, zip(est, part["ci_high"].to_numpy(dtype=float), strict=True), strict=True
        ):
            x = hi if math.isfinite(hi) else (e if math.isfinite(e) else 0.0)
            ax.text(min(x + 0.02, 1.02), yi, _pct(e), va="center", fontsize=8.5, color="#333333")
        ax.set_yticks(y, [shorten(c, 22) for c in conditions])
        ax.set_xlim(0, 1.12)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
        if value is not None:
            ax.set_title(f"{facet}: {shorten(value or '(none)', 40)}", fontsize=10, loc="left")
        _style(ax)
    for ax in axes[-1]:
        if ax.get_visible():
            ax.set_xlabel(xlabel, fontsize=9)
    suffix = f" (first {max_facets} of {len(facets)})" if len(facets) > max_facets else ""
    fig.suptitle(title + suffix, x=0.01, ha="left", fontsize=12)
    return fig


def interval_plot(
    table: pd.DataFrame,
    *,
    label: str,
    series: str | None = None,
    title: str,
    xlabel: str,
    reference: float | None = 0.0,
    scale: str = "pp",
    max_rows: int = 40,
) -> Figure:
    """Point estimates with interval whiskers, one row per ``label`` (a forest plot).

    Args:
        table: Rows with ``estimate, ci_low, ci_high``, the ``label`` column and optionally a
            ``series`` column (several markers per row, slightly offset).
        label: Column naming each row.
        series: Column distinguishing several estimates per row (e.g. provider), or None.
        title: Figure title.
        xlabel: Label of the value axis.
        reference: Where to draw a vertical reference line (None: none).
        scale: ``"pp"`` (differences, in percentage points), ``"pct"`` (proportions, in
            percent) or ``"num"`` (plain numbers).
        max_rows: Most rows drawn (the first ones in table order).

    Returns:
        The figure.
    """
    if table.empty:
        return _message_figure("nothing to show", title)
    labels = list(dict.fromkeys(table[label].astype(str)))
    shown = labels[: max(1, max_rows)]
    groups = list(dict.fromkeys(table[series].astype(str))) if series else [""]
    colours = {g: SERIES_COLORS[i % len(SERIES_COLORS)] for i, g in enumerate(groups)}
    fig = _new_figure(8.5, 0.9 + 0.34 * len(shown) * max(1, min(len(groups), 3) * 0.6))
    ax = fig.add_subplot()
    positions = {name: len(shown) - 1 - i for i, name in enumerate(shown)}
    step = 0.7 / max(len(groups), 1)
    for gi, group in enumerate(groups):
        part = table if not series else table[table[series].astype(str) == group]
        part = part[part[label].astype(str).isin(shown)]
        if part.empty:
            continue
        offset = (gi - (len(groups) - 1) / 2) * step if len(groups) > 1 else 0.0
        y = np.array([positions[str(v)] for v in part[label]]) + offset
        est = part["estimate"].to_numpy(dtype=float)
        ax.errorbar(
            est,
            y,
            xerr=_errors(part),
            fmt="o",
            color=colours[group],
            ecolor=colours[group],
            elinewidth=1.4,
            capsize=3,
            markersize=5,
            label=shorten(group, 30) if series else None,
        )
    if reference is not None:
        ax.axvline(reference, color="#444444", linewidth=0.9, linestyle="--")
    ax.set_yticks(list(positions.values()), [shorten(n) for n in positions])
    ax.set_ylim(-0.7, len(shown) - 0.3)
    from matplotlib.ticker import FuncFormatter

    if scale == "pp":
        ax.xaxis.set_major_formatter(FuncFormatter(_pp_tick))
    elif scale == "pct":
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v * 100:.0f}%"))
    ax.set_xlabel(xlabel, fontsize=9)
    _style(ax)
    if series and len(groups) > 1:
        ax.legend(fontsize=8, loc="best", frameon=False)
    suffix = f" (first {max_rows} of {len(labels)})" if len(labels) > max_rows else ""
    ax.set_title(title + suffix, loc="left", fontsize=12)
    return fig


def lift_plot(metrics: pd.DataFrame, *, title: str = "Skill lift") -> Figure:
    """The four lift deltas (realized, oracle, routing gap, stale harm) per provider and lane.

    Args:
        metrics: :attr:`evalkit.analysis.LiftResult.metrics`.
        title: Figure title.

    Returns:
        The figure.
    """
    deltas = ["realized_lift", "oracle_lift", "routing_gap", "stale_harm"]
    part = metrics[metrics["metric"].isin(deltas)].copy()
    part["group"] = part["provider"].astype(str) + " / " + part["lane"].astype(str)
    part["metric"] = pd.Categorical(part["metric"], categories=deltas, ordered=True)
    part = part.sort_values(["metric", "group"]).assign(metric=lambda d: d["metric"].astype(str))
    return interval_plot(
        part,
        label="metric",
        series="group",
        title=title,
        xlabel="difference in pass rate (percentage points; whiskers: CI)",
    )


def forest_plot(
    cases: pd.DataFrame | PairedComparison | RunComparison,
    *,
    threshold: float | None = None,
    max_cases: int = 40,
    title: str = "Per-case change (candidate - baseline)",
) -> Figure:
    """Per-case deltas with their intervals, coloured by condition, verdicts marked.

    When there are more than ``max_cases`` rows, the cases with a verdict come first, then the
    largest absolute changes; the title says how many are shown.

    Args:
        cases: A comparison (:class:`~evalkit.analysis.RunComparison` or
            :class:`~evalkit.stats.PairedComparison`), or its ``cases`` table. When two
            conditions of one run were compared, every row takes the colour of the candidate
            condition (the comparison's ``conditions``).
        threshold: Practical threshold, drawn as dotted lines at ``+/- threshold`` (default:
            the comparison's).
        max_cases: Most rows drawn.
        title: Figure title.

    Returns:
        The figure.
    """
    colour_of: str | None = None
    if isinstance(cases, RunComparison):
        cases = cases.stats
    if isinstance(cases, PairedComparison):
        threshold = cases.threshold if threshold is None else threshold
        colour_of = cases.conditions[1] if cases.conditions is not None else None
        cases = cases.cases
    if cases.empty:
        return _message_figure("no matched case", title)
    table = cases.copy()
    table["_named"] = table["verdict"].astype(str) != "inconclusive"
    table["_size"] = table["estimate"].abs().fillna(0.0)
    table = table.sort_values(["_named", "_size"], ascending=False, kind="stable").head(
        max(1, max_cases)
    )
    table = table.sort_values("estimate", ascending=True, kind="stable", na_position="first")
    n = len(table)
    conditions = (
        table["condition"].astype(str).reset_index(drop=True)
        if "condition" in table
        else pd.Series([""] * n)
    )
    if colour_of is None:
        palette = condition_palette(conditions)
    else:
        palette = {name: condition_color(colour_of) for name in conditions.unique()}
    fig = _new_figure(9.0, 1.2 + 0.3 * n)
    ax = fig.add_subplot()
    y = np.arange(n)
    est = table["estimate"].to_numpy(dtype=float)
    errors = _errors(table)
    for name, colour in palette.items():
        mask = (conditions == name).to_numpy()
        ax.errorbar(
            est[mask],
            y[mask],
            xerr=errors[:, mask],
            fmt="o",
            color=colour,
            ecolor=colour,
            elinewidth=1.4,
            capsize=2.5,
            markersize=5,
        )
    for yi, verdict in zip(y, table["verdict"].astype(str), strict=True):
        if verdict != "inconclusive":
            ax.text(
                1.03,
                float(yi),
                verdict,
                transform=ax.get_yaxis_transform(),
                va="center",
                fontsize=8.5,
                fontweight="bold",
                color=VERDICT_COLORS.get(verdict, "#333333"),
            )
    ax.axvline(0, color="#444444", linewidth=0.9)
    if threshold:
        for x in (-threshold, threshold):
            ax.axvline(x, color="#999999", linewidth=0.8, linestyle=":")
    parts = [table["case_id"].astype(str).reset_index(drop=True)]
    if conditions.nunique() > 1:
        parts.append(conditions)
    if "provider" in table and table["provider"].nunique() > 1:
        parts.append(table["provider"].astype(str).reset_index(drop=True))
    width = {1: 44, 2: 22, 3: 16}[len(parts)]
    labels = [" · ".join(shorten(v, width) for v in values) for values in zip(*parts, strict=True)]
    ax.set_yticks(y, labels)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlim(-1.08, 1.08)
    ax.set_xticks([-1.0, -0.5, 0.0, 0.5, 1.0])
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(_pp_tick))
    ax.set_xlabel("change in pass rate (percentage points; whiskers: per-case CI)", fontsize=9)
    _style(ax)
    handles = _legend_handles(palette)
    if handles:
        ax.legend(handles=handles, fontsize=8, loc="lower right", frameon=False)
    total = len(cases)
    suffix = f"\n{n} of {total} shown: named cases, then largest changes" if total > n else ""
    # a figure title from the figure's left edge: an axes title starts right of the long
    # case labels and was cut off at the right edge
    fig.suptitle(title + suffix, x=0.01, ha="left", fontsize=12)
    return fig


def _legend_handles(palette: Mapping[str, str]) -> list[Any]:
    from matplotlib.lines import Line2D

    return [
        Line2D([0], [0], marker="o", color=colour, linestyle="", label=shorten(name, 24))
        for name, colour in palette.items()
        if name
    ]


def heatmap(
    table: pd.DataFrame,
    *,
    row: str = "case_id",
    column: str = "condition",
    value: str = "estimate",
    title: str,
    colorbar_label: str,
    max_rows: int = 40,
    vmax: float | None = None,
) -> Figure:
    """A ``row x column`` heatmap of ``value`` (e.g. flip rate per case and condition).

    Rows are ordered by their mean value, highest first, and capped at ``max_rows`` (the title
    says so). Cells are annotated when the grid is small enough to read.

    Args:
        table: Tidy rows with ``row``, ``column`` and ``value`` columns.
        row: Row column.
        column: Column column.
        value: Value column (NaN cells are left blank).
        title: Figure title.
        colorbar_label: Label of the colour bar.
        max_rows: Most rows drawn.
        vmax: Upper end of the colour scale (default: the largest value, at least 0.5).

    Returns:
        The figure.
    """
    if table.empty or table[value].notna().sum() == 0:
        return _message_figure("nothing to show (no pairs)", title)
    grid = table.pivot_table(index=row, columns=column, values=value, aggfunc="mean", sort=True)
    order = grid.mean(axis=1).sort_values(ascending=False, kind="stable").index
    total = len(order)
    grid = grid.loc[order[: max(1, max_rows)]]
    values = grid.to_numpy(dtype=float)
    top = vmax if vmax is not None else max(0.5, float(np.nanmax(values)))
    n_rows, n_cols = values.shape
    fig = _new_figure(max(5.5, 2.6 + 1.1 * n_cols), 1.3 + 0.3 * n_rows)
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(values), aspect="auto", cmap="Reds", vmin=0.0, vmax=top)
    ax.set_xticks(range(n_cols), [shorten(c, 16) for c in grid.columns])
    ax.set_yticks(range(n_rows), [shorten(r) for r in grid.index])
    ax.tick_params(labelsize=9)
    ax.set_xticks(np.arange(-0.5, n_cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, n_rows, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="minor", length=0)
    if n_rows * n_cols <= 400:
        for (i, j), v in np.ndenumerate(values):
            if math.isfinite(v):
                ax.text(
                    float(j),
                    float(i),
                    f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7.5,
                    color="white" if v > top * 0.6 else "#222222",
                )
    bar = fig.colorbar(image, ax=ax, shrink=0.8)
    bar.set_label(colorbar_label, fontsize=9)
    suffix = f" (top {max_rows} of {total})" if total > max_rows else ""
    ax.set_title(title + suffix, loc="left", fontsize=12)
    return fig


def _period_label(stamp: pd.Timestamp, period: str) -> str:
    if period == "week":
        year, week, _ = stamp.isocalendar()
        return f"{year}-W{week:02d}"
    if period == "month":
        return stamp.strftime("%Y-%m")
    if period == "day":
        return stamp.strftime("%Y-%m-%d")
    return stamp.strftime("%m-%d %H:%M")


def _distinct_labels(ticks: Sequence[pd.Timestamp], period: str) -> list[str]:
    """Tick labels at ``period``, finer where two ticks would read the same (runs in a week)."""
    for grain in (period, "day", "run"):
        labels = [_period_label(t, grain) for t in ticks]
        if len(set(labels)) == len(labels):
            return labels
    return labels


def trend_plot(
    table: pd.DataFrame,
    *,
    series: str,
    facet: str | None,
    title: str,
    ylabel: str,
    changes: Sequence[Any] = (),
    percent_points: bool = False,
    period: str = "week",
    max_facets: int = 6,
    change_label: str = "dataset version changed",
) -> Figure:
    """Estimates over time with interval bands, one line per ``series``, one panel per facet.

    Args:
        table: Rows with ``period`` (timestamps), ``estimate, ci_low, ci_high``, the
            ``series`` column and the ``facet`` column when given.
        series: Column naming the lines (``condition`` lines use the condition palette).
        facet: Column splitting panels (e.g. ``"provider"``), or None.
        title: Figure title.
        ylabel: Label of the value axis.
        changes: Periods where the dataset version changed (dashed vertical lines).
        percent_points: Values are differences (axis in percentage points, line at 0).
        period: ``week``, ``day``, ``month`` or ``run``: how the time axis is labelled.
        max_facets: Most panels drawn.
        change_label: What the dashed lines mark (the legend's words).

    Returns:
        The figure.
    """
    if table.empty:
        return _message_figure("no runs to show", title)
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    facets: list[Any] = sorted(table[facet].astype(str).unique()) if facet else [None]
    shown = facets[: max(1, max_facets)]
    names = list(dict.fromkeys(table[series].astype(str)))
    if series == "condition":
        names = order_conditions(names)
        colours = condition_palette(names)
    else:
        colours = {n: SERIES_COLORS[i % len(SERIES_COLORS)] for i, n in enumerate(names)}
    stamps = sorted(pd.to_datetime(table["period"], utc=True).unique())
    ticks = [pd.Timestamp(s).tz_convert("UTC").tz_localize(None) for s in stamps]
    marks = [
        pd.Timestamp(w).tz_convert("UTC").tz_localize(None)
        if pd.Timestamp(w).tzinfo
        else pd.Timestamp(w)
        for w in changes
    ]
    fig = _new_figure(9.0, 0.8 + 2.5 * len(shown))
    axes = fig.subplots(len(shown), 1, squeeze=False, sharex=True)[:, 0]
    for ax, value in zip(axes, shown, strict=True):
        part = table if value is None else table[table[facet].astype(str) == value]
        for name in names:
            line = part[part[series].astype(str) == name].sort_values("period")
            if line.empty:
                continue
            x = pd.to_datetime(line["period"], utc=True).dt.tz_localize(None).to_numpy()
            ax.plot(
                x,
                line["estimate"].to_numpy(dtype=float),
                marker="o",
                markersize=4,
                color=colours[name],
                label=shorten(name, 24),
            )
            ax.fill_between(
                x,
                line["ci_low"].to_numpy(dtype=float),
                line["ci_high"].to_numpy(dtype=float),
                color=colours[name],
                alpha=0.12,
                linewidth=0,
            )
        for when in marks:
            ax.axvline(when, color="#8c564b", linestyle="--", linewidth=1)
        if percent_points:
            ax.axhline(0, color="#444444", linewidth=0.8)
            ax.yaxis.set_major_formatter(FuncFormatter(_pp_tick))
        else:
            ax.set_ylim(-0.02, 1.02)
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v * 100:.0f}%"))
        ax.set_ylabel(ylabel, fontsize=9)
        if value is not None:
            ax.set_title(f"{facet}: {shorten(value or '(none)', 50)}", fontsize=10, loc="left")
        ax.grid(axis="y", color="#e5e5e5", linewidth=0.8)
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)
        ax.tick_params(labelsize=9)
    if len(ticks) == 1:
        axes[-1].set_xlim(ticks[0] - pd.Timedelta(days=3), ticks[0] + pd.Timedelta(days=3))
    handles, labels = axes[0].get_legend_handles_labels()
    if marks:
        handles.append(Line2D([0], [0], color="#8c564b", linestyle="--", linewidth=1))
        labels.append(change_label)
    axes[0].legend(
        handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False
    )
    suffix = f" (first {max_facets} of {len(facets)})" if len(facets) > max_facets else ""
    fig.suptitle(title + suffix, x=0.01, ha="left", fontsize=12)
    _fit_time_labels(fig, axes[-1], ticks, _distinct_labels(ticks, period))
    return fig


def _fit_time_labels(
    fig: Figure, ax: Axes, ticks: Sequence[pd.Timestamp], labels: Sequence[str]
) -> None:
    """A tick at every point, labelled where its label fits beside the last one labelled.

    The figure is laid out once with every label; then, left to right, a label is kept when
    it starts at least :data:`_LABEL_GAP_PX` after the end of the last label kept. Points
    whose label was left out keep a short tick, so 52 weekly points read as 52 points with
    every fourth or so named, and no two labels overlap.
    """
    from matplotlib.dates import date2num

    if not ticks:
        return
    positions = [float(date2num(t.to_pydatetime())) for t in ticks]  # type: ignore[no-untyped-call]
    ax.set_xticks(positions, list(labels))
    fig.draw_without_rendering()
    boxes = [label.get_window_extent() for label in ax.get_xticklabels()]
    centres = ax.transData.transform([(x, 0.0) for x in positions])[:, 0]
    kept: list[int] = []
    for index, (centre, box) in enumerate(zip(centres, boxes, strict=True)):
        if kept:
            last = kept[-1]
            end = centres[last] + boxes[last].width / 2
            if centre - box.width / 2 < end + _LABEL_GAP_PX:
                continue
        kept.append(index)
    if len(kept) < len(ticks):
        ax.set_xticks([positions[i] for i in kept], [labels[i] for i in kept])
        ax.set_xticks(positions, minor=True)
        ax.tick_params(axis="x", which="minor", length=2.5)


def figure_html(fig: Figure, name: str, caption: str, *, alt: str | None = None) -> Fragment:
    """Embed a figure as ``<figure id="fig-NAME">`` with a PNG data URI and a caption.

    Args:
        fig: The figure.
        name: Identifier (``fig-`` is prefixed; letters, digits and dashes only).
        caption: Caption text (escaped).
        alt: Alternative text (escaped; default: the caption).

    Returns:
        An HTML fragment (``_repr_html_``) that notebooks display.

    Raises:
        ValueError: ``name`` holds characters other than letters, digits and dashes.
    """
    if not name or not all(ch.isalnum() or ch == "-" for ch in name):
        raise ValueError(f"figure name must use letters, digits and dashes, not {name!r}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI, facecolor="white")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    width = int(round(fig.get_figwidth() * _DPI))
    text = html.escape(caption, quote=True)
    alt_text = html.escape(alt if alt is not None else caption, quote=True)
    return Fragment(
        f'<figure class="ek-figure" id="fig-{name}">'
        f'<img src="data:image/png;base64,{data}" alt="{alt_text}" width="{width}">'
        f"<figcaption>{text}</figcaption></figure>"
    )


def power_plot(
    curve: pd.DataFrame,
    *,
    n_cases: int | None = None,
    effect: float | None = None,
    title: str = "Minimum detectable effect by number of cases",
) -> Figure:
    """The smallest effect a design detects, against its number of cases, the plan marked.

    Args:
        curve: ``n_cases, effect`` rows (from :func:`evalkit.stats.minimum_detectable_effect`).
        n_cases: Cases of the plan (marked with a point when given with ``effect``).
        effect: Its effect.
        title: Figure title.

    Returns:
        The figure.
    """
    from matplotlib.ticker import FuncFormatter

    if curve.empty:
        return _message_figure("nothing to show", title)
    fig = _new_figure(6.4, 3.4)
    ax = fig.add_subplot()
    ax.plot(
        curve["n_cases"].to_numpy(dtype=float),
        curve["effect"].to_numpy(dtype=float),
        color=SERIES_COLORS[0],
        linewidth=2,
    )
    if n_cases is not None and effect is not None and math.isfinite(effect):
        ax.plot([n_cases], [effect], marker="o", color=SERIES_COLORS[3], markersize=7)
        ax.annotate(
            f"{n_cases} cases: {effect * 100:.1f} pp",
            (n_cases, effect),
            textcoords="offset points",
            xytext=(8, 8),
            fontsize=9,
        )
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v * 100:.0f} pp"))
    ax.set_xlabel("cases", fontsize=9)
    ax.set_ylabel("minimum detectable effect", fontsize=9)
    ax.set_title(title, fontsize=11, loc="left")
    _style(ax)
    return fig
