"""Reviewer-facing reports: parameterized notebooks executed by papermill, rendered to HTML.

:func:`report` is the library function behind ``evalkit report``. The other public names are
what a researcher calls in a notebook: the result objects of a run and of a comparison
(:func:`run_overview`, :func:`compare_view`) whose displays and methods are the report's
sections, the rich displays of the analyses' results, figures with one condition palette,
escaped HTML tables and transcript excerpts, and the item browser. None of them computes a
statistic: intervals and verdicts come from :mod:`evalkit.stats` and :mod:`evalkit.analysis`.

The names of the ``TYPE_CHECKING`` block beyond ``__all__`` are the notebooks' own helpers
and what the viewer draws with: importable, but not part of the API.
"""

__all__ = [
    "CONDITION_COLORS",
    "ComparisonView",
    "Fragment",
    "ItemSample",
    "KINDS",
    "ReportResult",
    "RunOverview",
    "SequentialTrajectory",
    "ablation_html",
    "banner",
    "calibration_check",
    "cause_plot",
    "compare_view",
    "comparison_html",
    "condition_color",
    "condition_palette",
    "evidence_bundles",
    "excerpts",
    "expectation_pass_rates",
    "explanation_html",
    "figure_html",
    "flip_pairs",
    "flips_html",
    "forest_plot",
    "gate_html",
    "heatmap",
    "html_table",
    "interval_plot",
    "interval_table",
    "item_browser",
    "key_values",
    "labelling_page",
    "lift_html",
    "lift_plot",
    "load_optimization",
    "note",
    "paired_excerpts",
    "power_html",
    "power_plot",
    "project_path",
    "rate_plot",
    "read_label_rows",
    "read_notebook",
    "report",
    "run_overview",
    "sample_items",
    "sequential_html",
    "sequential_plot",
    "sequential_run_html",
    "sequential_trajectory",
    "stat_cards",
    "transcript_html",
    "trend_plot",
    "verdict_banner",
]

from typing import TYPE_CHECKING

from evalkit import _display, _lazy

if TYPE_CHECKING:
    from evalkit.errors import ReportError as ReportError, ReportInputError as ReportInputError
    from evalkit.report._ablation import (
        ablation_banner as ablation_banner,
        ablation_cost_table as ablation_cost_table,
        ablation_facts as ablation_facts,
        ablation_html,
        ablation_verdict_table as ablation_verdict_table,
        minimal_summary as minimal_summary,
    )
    from evalkit.report._browser import (
        BROWSE_LIMIT as BROWSE_LIMIT,
        ItemSample,
        item_browser,
        sample_items,
    )
    from evalkit.report._bundles import evidence_bundles
    from evalkit.report._compare_view import (
        ComparisonView,
        compare_view,
        compared_conditions as compared_conditions,
        comparison_trajectory as comparison_trajectory,
    )
    from evalkit.report._forensics_view import (
        cell_html as cell_html,
        explanation_fragment as explanation_fragment,
        explanation_html,
    )
    from evalkit.report._html import sanitize_html as sanitize_html
    from evalkit.report._judge import (
        agreement_table as agreement_table,
        calibration_check,
        calibration_facts as calibration_facts,
        calibration_note as calibration_note,
        confusion_plot as confusion_plot,
        disagreements_html as disagreements_html,
        expectation_pass_rates,
        stored_calibrations as stored_calibrations,
    )
    from evalkit.report._labels import labelling_page, read_label_rows
    from evalkit.report._matched_view import matched_rate_section as matched_rate_section
    from evalkit.report._named_cases import case_named_column as case_named_column
    from evalkit.report._notebooks import project_path, read_notebook
    from evalkit.report._optimize import (
        Optimization as Optimization,
        load_optimization,
        test_summary as test_summary,
    )
    from evalkit.report._pairwise import (
        StoredPairwise as StoredPairwise,
        pairwise_banner as pairwise_banner,
        stored_pairwise as stored_pairwise,
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
        provider_comparisons as provider_comparisons,
        provider_forest_plot as provider_forest_plot,
    )
    from evalkit.report._reasons_view import (
        cause_plot,
        failure_changes_table as failure_changes_table,
        failure_summary as failure_summary,
        reason_line as reason_line,
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
        comparison_fragment as comparison_fragment,
        comparison_html,
        flip_pairs,
        flips_html,
        gate_html,
        lift_html,
        power_html,
        register_rich_displays as register_rich_displays,
        sequential_html,
        sequential_run_html,
    )
    from evalkit.report._run import RunOverview, run_overview
    from evalkit.report._sequential import (
        LOOK_COLUMNS as LOOK_COLUMNS,
        SequentialTrajectory,
        sequential_trajectory,
    )
    from evalkit.report._sequential_plot import sequential_plot
    from evalkit.report._tables import (
        Fragment,
        banner,
        html_table,
        interval as interval,
        interval_table,
        key_values,
        note,
        num as num,
        pct as pct,
        pp as pp,
        seconds as seconds,
        stat_cards,
        usd as usd,
        verdict_banner,
    )
    from evalkit.report._transcripts import (
        event_html as event_html,
        excerpts,
        paired_excerpts,
        side_by_side as side_by_side,
        skill_loaded as skill_loaded,
        transcript_html,
    )
    from evalkit.report._trend import (
        describe_trend as describe_trend,
        lift_trend as lift_trend,
        trend_runs_table as trend_runs_table,
    )
    from evalkit.report._views import (
        flip_overview as flip_overview,
        metrics_table as metrics_table,
        missing_cases as missing_cases,
        run_facts as run_facts,
        within_flips as within_flips,
    )
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)


def _register_rich_displays() -> None:
    """Register the rich displays and figures of the result types (at their first use)."""
    from evalkit.report._figures import register_figures
    from evalkit.report._rich import register_rich_displays

    register_rich_displays()
    register_figures()


_display.add_renderer_loader(_register_rich_displays)
