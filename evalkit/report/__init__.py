"""Reviewer-facing reports: parameterized notebooks executed by papermill, rendered to HTML.

:func:`report` is the library function behind ``evalkit report``. The other names are the
building blocks the notebooks in ``notebooks/`` call (and that a researcher can call in any
notebook): figures with one condition palette, escaped HTML tables and transcript excerpts,
small views of a run, and the DuckDB trend across a runs directory. None of them computes a
statistic: intervals and verdicts come from :mod:`evalkit.stats` and :mod:`evalkit.analysis`.
"""

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.report._browser import BROWSE_LIMIT, ItemSample, item_browser, sample_items
    from evalkit.report._html import sanitize_html
    from evalkit.report._notebooks import project_path, read_notebook
    from evalkit.report._optimize import (
        Optimization,
        cost_plot,
        gate_plot,
        load_optimization,
        optimization_facts,
        skill_diff,
        test_summary,
        trajectory_plot,
    )
    from evalkit.report._params import declared_parameters, parse_assignments, validate_parameters
    from evalkit.report._plots import (
        CONDITION_COLORS,
        condition_color,
        condition_palette,
        figure_html,
        forest_plot,
        heatmap,
        interval_plot,
        lift_plot,
        order_conditions,
        power_plot,
        rate_plot,
        trend_plot,
    )
    from evalkit.report._render import (
        KINDS,
        NOTEBOOKS,
        ReportError,
        ReportInputError,
        ReportResult,
        report,
    )
    from evalkit.report._rich import (
        RunOverview,
        banner,
        comparison_html,
        flip_pairs,
        flips_html,
        gate_html,
        lift_html,
        power_html,
        register_rich_displays,
        run_overview,
    )
    from evalkit.report._tables import (
        Fragment,
        html_table,
        interval,
        interval_table,
        key_values,
        note,
        num,
        pct,
        pp,
        seconds,
        stat_cards,
        usd,
        verdict_banner,
    )
    from evalkit.report._transcripts import (
        event_html,
        excerpts,
        paired_excerpts,
        side_by_side,
        skill_loaded,
        transcript_html,
    )
    from evalkit.report._trend import Trend, describe_trend, lift_trend, load_items, trend
    from evalkit.report._views import (
        ComparisonView,
        case_pairs,
        compare_view,
        condition_comparisons,
        errors_by_class,
        failing_items,
        flip_overview,
        metrics_table,
        missing_cases,
        run_facts,
        status_by,
        summary_cards,
        top_items,
        trigger_confusion,
        unstable_cases,
        verdict_lines,
        wins_by_condition,
        within_flips,
    )
    from evalkit.results import read_transcript, read_transcripts
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
    # Rich displays of the result objects in Jupyter: registered when the package is imported
    # (evalkit._display imports it at the first display).
    from evalkit.report._rich import register_rich_displays as _register_rich_displays

    _register_rich_displays()

__all__ = [
    "BROWSE_LIMIT",
    "CONDITION_COLORS",
    "KINDS",
    "NOTEBOOKS",
    "ComparisonView",
    "Fragment",
    "ItemSample",
    "Optimization",
    "ReportError",
    "ReportInputError",
    "ReportResult",
    "RunOverview",
    "Trend",
    "banner",
    "case_pairs",
    "compare_view",
    "comparison_html",
    "condition_color",
    "condition_palette",
    "cost_plot",
    "declared_parameters",
    "describe_trend",
    "errors_by_class",
    "event_html",
    "excerpts",
    "failing_items",
    "figure_html",
    "flip_overview",
    "flip_pairs",
    "flips_html",
    "forest_plot",
    "gate_html",
    "gate_plot",
    "heatmap",
    "html_table",
    "interval",
    "interval_plot",
    "interval_table",
    "item_browser",
    "key_values",
    "lift_html",
    "lift_plot",
    "lift_trend",
    "load_items",
    "load_optimization",
    "metrics_table",
    "missing_cases",
    "note",
    "num",
    "optimization_facts",
    "order_conditions",
    "paired_excerpts",
    "parse_assignments",
    "pct",
    "power_html",
    "power_plot",
    "pp",
    "project_path",
    "rate_plot",
    "read_notebook",
    "read_transcript",
    "read_transcripts",
    "register_rich_displays",
    "report",
    "run_facts",
    "run_overview",
    "sample_items",
    "sanitize_html",
    "seconds",
    "side_by_side",
    "skill_diff",
    "skill_loaded",
    "stat_cards",
    "status_by",
    "summary_cards",
    "test_summary",
    "top_items",
    "trajectory_plot",
    "transcript_html",
    "trend",
    "trend_plot",
    "trigger_confusion",
    "unstable_cases",
    "usd",
    "validate_parameters",
    "verdict_banner",
    "verdict_lines",
    "condition_comparisons",
    "wins_by_condition",
    "within_flips",
]
