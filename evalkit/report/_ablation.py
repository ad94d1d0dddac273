"""Views of an ablation study: contributions (forest plot), verdicts, costs, the minimal skill."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalkit._settings import CONFIDENCE
from evalkit.ablation import AblationResult
from evalkit.report._plots import _errors, _new_figure, _pp_tick, _style, figure_html, shorten
from evalkit.report._style import styled
from evalkit.report._tables import Fragment, banner, html_table, interval, key_values, note, num, pp

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_VERDICT_COLOURS = {"necessary": "#1b7837", "harmful": "#b2182b", "no detectable effect": "#777777"}


def ablation_plot(result: AblationResult) -> Figure:
    """Each component's contribution (full minus ablated) with its interval, by effect.

    Green: necessary; red: harmful; grey: no detectable effect. Dotted lines mark
    ``+/- threshold``.
    """
    from matplotlib.ticker import FuncFormatter

    table = result.components.sort_values("estimate", ascending=True, na_position="first")
    fig = _new_figure(7.5, 1.2 + 0.38 * len(table))
    ax = fig.add_subplot()
    y = np.arange(len(table))
    colours = [_VERDICT_COLOURS.get(v, "#777777") for v in table["verdict"]]
    errors = _errors(table)
    for i, colour in enumerate(colours):
        ax.errorbar(
            float(table["estimate"].iloc[i]), y[i], xerr=errors[:, i : i + 1], fmt="none",
            ecolor=colour, elinewidth=2, capsize=3,
        )
    ax.scatter(table["estimate"].to_numpy(dtype=float), y, c=colours, zorder=3, s=30)
    ax.axvline(0, color="#333333", linewidth=0.8)
    for x in (-result.threshold, result.threshold):
        ax.axvline(x, color="#999999", linewidth=0.8, linestyle=":")
    ax.set_yticks(y, [shorten(c) for c in table["component"]])
    ax.xaxis.set_major_formatter(FuncFormatter(_pp_tick))
    confidence = float(table["confidence"].iloc[0]) if len(table) else CONFIDENCE.default
    ax.set_xlabel(
        f"contribution: full skill - skill without the component ({confidence:.1%} "
        "simultaneous intervals)"
    )
    ax.set_title(f"What each component of '{result.skill}' contributes", loc="left", fontsize=11)
    _style(ax)
    return fig


def ablation_facts(result: AblationResult) -> Fragment:
    """The study's design, size and the full skill's effect."""
    effect = result.skill_effect
    saved = 1 - result.items / result.fixed_items if result.fixed_items else float("nan")
    return key_values(
        {
            "skill": result.skill,
            "mode": result.mode,
            "design": result.design,
            "family-wise alpha": f"{result.alpha:g} over {len(result.components)} components",
            "threshold": pp(result.threshold),
            "full skill vs none": interval(
                effect["estimate"], effect["ci_low"], effect["ci_high"], "pp"
            ),
            "overhead per call": f"{result.overhead_tokens:.0f} tokens",
            "work items": f"{result.items} (a fixed design of these cases: "
            f"{result.fixed_items}; saved {saved:.0%})",
        }
    )


def ablation_banner(result: AblationResult) -> Fragment:
    """Which components are necessary and harmful, in one line."""
    necessary, harmful = result.necessary, result.harmful
    rest = len(result.components) - len(necessary) - len(harmful)
    headline = (
        f"necessary: {', '.join(necessary) or 'none shown'}; harmful: "
        f"{', '.join(harmful) or 'none shown'}; no detectable effect: {rest}"
    )
    tone = "regressed" if harmful else ("improved" if necessary else "inconclusive")
    return banner(tone, "ablation", headline, list(result.notes))


def ablation_verdict_table(result: AblationResult) -> Fragment:
    """Components ranked by contribution, with verdict, interval and MDE."""
    table = result.components.sort_values("estimate", ascending=False)
    table = table.assign(
        contribution=[
            interval(e, lo, hi, "pp")
            for e, lo, hi in zip(table["estimate"], table["ci_low"], table["ci_high"], strict=True)
        ]
    )
    return html_table(
        table,
        columns={
            "component": "component",
            "verdict": "verdict",
            "contribution": "full - ablated",
            "p_holm": "p (Holm)",
            "mde": "MDE",
            "n_cases": "cases",
            "hurt_cases": "cases hurt by removal",
            "helped_cases": "cases helped by removal",
        },
        formats={"p_holm": num, "mde": pp},
        table_id="ablation-verdicts",
        caption="Ranked by effect. MDE: the smallest contribution the study detects with "
        "power 0.8 (fixed design), or beyond which the confidence sequence excludes it "
        "(sequential); 'no detectable effect' says nothing about smaller effects.",
        numeric=("p_holm", "mde", "n_cases"),
    )


def ablation_cost_table(result: AblationResult) -> Fragment:
    """Components ranked by cost: tokens, where the count comes from, lift per 1,000 tokens."""
    table = result.components.sort_values("tokens", ascending=False)
    return html_table(
        table,
        columns={
            "component": "component",
            "tokens": "tokens per call",
            "tokens_source": "counted by",
            "estimate": "contribution",
            "lift_per_1k_tokens": "lift per 1k tokens",
            "rank_effect": "rank by effect",
            "rank_cost": "rank by cost",
            "verdict": "verdict",
        },
        formats={
            "tokens": lambda v: num(v, 0),
            "estimate": pp,
            "lift_per_1k_tokens": lambda v: pp(v),
        },
        table_id="ablation-cost",
        caption="Ranked by cost. 'provider': difference of the provider-reported input tokens "
        "per call (full minus ablated); 'estimate': characters / 4.",
        numeric=("tokens", "estimate", "lift_per_1k_tokens", "rank_effect", "rank_cost"),
    )


def minimal_summary(result: AblationResult) -> Fragment:
    """The ``--minimal`` skill and its check on the holdout split (or why there is none)."""
    m = result.minimal
    if m is None:
        return note("no minimal skill was proposed (run with --minimal).")
    tone = "improved" if m.verified else "regressed"
    facts = key_values(
        {
            "removed": ", ".join(m.removed),
            "tokens saved": f"{m.tokens_saved} (estimate)",
            "verified on": f"{m.split}, {m.n_cases} cases",
            "minimal - full": interval(m.estimate, m.ci_low, m.ci_high, "pp"),
            "tree hash": m.tree_hash,
        }
    )
    return banner(tone, "verified" if m.verified else "not verified", m.note) + facts


def ablation_html(result: AblationResult) -> str:
    """The rich display of an :class:`~evalkit.ablation.AblationResult` in Jupyter."""
    parts = [
        ablation_banner(result),
        ablation_facts(result),
        figure_html(ablation_plot(result), "ablation", "Contribution of each component."),
        ablation_verdict_table(result),
        ablation_cost_table(result),
    ]
    if result.minimal is not None:
        parts.append(minimal_summary(result))
    return styled("".join(p.html for p in parts))

