"""Reviewer-facing reports: parameterized notebooks executed by papermill, rendered to HTML.

:func:`report` is the library function behind ``evalkit report``. The other names are the
building blocks the notebooks in ``notebooks/`` call (and that a researcher can call in any
notebook): figures with one condition palette, escaped HTML tables and transcript excerpts,
small views of a run, and the DuckDB trend across a runs directory. None of them computes a
statistic: intervals and verdicts come from :mod:`evalkit.stats` and :mod:`evalkit.analysis`.
"""

from typing import TYPE_CHECKING

from evalkit import _display, _lazy

if TYPE_CHECKING:
    from evalkit.errors import ReportError, ReportInputError
    from evalkit.report._ablation import (
        ablation_banner,
        ablation_cost_table,
        ablation_facts,
        ablation_html,
        ablation_plot,
        ablation_verdict_table,
        minimal_summary,
    )
    from evalkit.report._browser import (
        BROWSE_LIMIT as BROWSE_LIMIT,
        ItemSample,
        item_browser,
        sample_items,
    )
    from evalkit.report._bundles import evidence_bundles
    from evalkit.report._forensics_view import (
        cell_html as cell_html,
        explanation_fragment,
        explanation_html,
    )
    from evalkit.report._html import (
        sanitize_html as sanitize_html,
    )
    from evalkit.report._judge import (
        agreement_table,
        calibration_check,
        calibration_facts,
        calibration_note,
        comparison_calibration,
        comparison_statements,
        confusion_plot,
        disagreements_html,
        expectation_pass_rates,
        stored_calibrations,
    )
    from evalkit.report._labels import labelling_page, read_label_rows
    from evalkit.report._matched_view import matched_rate_section
    from evalkit.report._named_cases import (
        case_named_column,
        named_case_columns,
        named_case_table,
        named_cases_section,
        no_named_case_note,
    )
    from evalkit.report._notebooks import project_path, read_notebook
    from evalkit.report._optimize import (
        Optimization as Optimization,
        cost_plot,
        gate_plot,
        load_optimization,
        optimization_facts,
        skill_diff,
        test_summary,
        trajectory_plot,
    )
    from evalkit.report._pairwise import (
        pairs_html,
        pairwise_banner,
        pairwise_cards,
        pairwise_cases,
        pairwise_forest,
        ranking_table,
        stored_pairwise,
    )
    from evalkit.report._params import (
        declared_parameters as declared_parameters,
        parse_assignments as parse_assignments,
        validate_parameters as validate_parameters,
    )
    from evalkit.report._plots import (
        CONDITION_COLORS,
        condition_color,
        condition_palette,
        figure_html,
        forest_plot,
        heatmap,
        interval_plot,
        lift_plot,
        order_conditions as order_conditions,
        power_plot,
        rate_plot,
        trend_plot,
    )
    from evalkit.report._providers import (
        provider_comparisons,
        provider_forest_plot,
        provider_section,
    )
    from evalkit.report._reasons_view import (
        cause_changes,
        cause_plot,
        failure_changes_table,
        failure_summary,
        reason_line as reason_line,
        run_scores,
        shown_reasons as shown_reasons,
    )
    from evalkit.report._render import (
        KINDS,
        LABELS_MARKER as LABELS_MARKER,
        NOTEBOOKS as NOTEBOOKS,
        ReportResult,
        report,
    )
    from evalkit.report._rich import (
        RunOverview,
        comparison_fragment as comparison_fragment,
        comparison_html,
        flip_pairs,
        flips_html,
        gate_html,
        lift_html,
        power_html,
        register_rich_displays,
        run_overview,
        sequential_html,
        sequential_run_html,
    )
    from evalkit.report._sequential import (
        LOOK_COLUMNS,
        SequentialTrajectory,
        comparison_trajectory,
        looks_table,
        sequential_trajectory,
        trajectory_facts,
    )
    from evalkit.report._sequential_plot import sequential_plot
    from evalkit.report._tables import (
        Fragment,
        banner,
        html_table,
        interval,
        interval_table,
        key_values,
        note,
        num as num,
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
        side_by_side as side_by_side,
        skill_loaded,
        transcript_html,
    )
    from evalkit.report._trend import describe_trend, lift_trend, trend_runs_table
    from evalkit.report._views import (
        ComparisonView as ComparisonView,
        case_keys,
        case_pairs,
        compare_view,
        condition_comparisons,
        errors_by_class,
        failing_items,
        flip_overview,
        metrics_table,
        missing_cases,
        next_step_facts,
        paired_rows,
        run_facts,
        status_by,
        summary_cards,
        top_items,
        trigger_confusion,
        unstable_cases,
        verdict_lines,
        wins_by_condition,
        wins_note,
        within_flips,
    )
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)


def _register_rich_displays() -> None:
    """Register the rich displays of the result types (at their first display)."""
    from evalkit.report._rich import register_rich_displays

    register_rich_displays()


_display.add_renderer_loader(_register_rich_displays)

__all__ = [
    "CONDITION_COLORS",
    "KINDS",
    "LOOK_COLUMNS",
    "Fragment",
    "ItemSample",
    "ReportError",
    "ReportInputError",
    "ReportResult",
    "RunOverview",
    "SequentialTrajectory",
    "agreement_table",
    "banner",
    "calibration_check",
    "calibration_facts",
    "calibration_note",
    "case_keys",
    "case_named_column",
    "case_pairs",
    "comparison_calibration",
    "comparison_statements",
    "compare_view",
    "comparison_html",
    "comparison_trajectory",
    "condition_color",
    "condition_comparisons",
    "condition_palette",
    "confusion_plot",
    "cost_plot",
    "describe_trend",
    "disagreements_html",
    "errors_by_class",
    "event_html",
    "excerpts",
    "expectation_pass_rates",
    "failing_items",
    "figure_html",
    "flip_overview",
    "flip_pairs",
    "cause_changes",
    "cause_plot",
    "failure_changes_table",
    "failure_summary",
    "run_scores",
    "explanation_fragment",
    "explanation_html",
    "flips_html",
    "forest_plot",
    "gate_html",
    "gate_plot",
    "heatmap",
    "html_table",
    "interval",
    "interval_plot",
    "interval_table",
    "evidence_bundles",
    "item_browser",
    "key_values",
    "labelling_page",
    "lift_html",
    "lift_plot",
    "lift_trend",
    "load_optimization",
    "ablation_banner",
    "ablation_facts",
    "ablation_html",
    "ablation_plot",
    "ablation_cost_table",
    "minimal_summary",
    "ablation_verdict_table",
    "looks_table",
    "matched_rate_section",
    "metrics_table",
    "missing_cases",
    "named_case_columns",
    "named_case_table",
    "named_cases_section",
    "no_named_case_note",
    "next_step_facts",
    "note",
    "optimization_facts",
    "paired_excerpts",
    "paired_rows",
    "pairs_html",
    "pairwise_banner",
    "pairwise_cards",
    "pairwise_cases",
    "pairwise_forest",
    "pct",
    "power_html",
    "power_plot",
    "pp",
    "project_path",
    "provider_comparisons",
    "provider_forest_plot",
    "provider_section",
    "ranking_table",
    "rate_plot",
    "read_label_rows",
    "read_notebook",
    "register_rich_displays",
    "report",
    "run_facts",
    "run_overview",
    "sample_items",
    "seconds",
    "sequential_html",
    "sequential_plot",
    "sequential_run_html",
    "sequential_trajectory",
    "skill_diff",
    "skill_loaded",
    "stat_cards",
    "status_by",
    "stored_calibrations",
    "stored_pairwise",
    "summary_cards",
    "test_summary",
    "top_items",
    "trajectory_facts",
    "trajectory_plot",
    "transcript_html",
    "trend_plot",
    "trend_runs_table",
    "trigger_confusion",
    "unstable_cases",
    "usd",
    "verdict_banner",
    "verdict_lines",
    "wins_by_condition",
    "wins_note",
    "within_flips",
]
