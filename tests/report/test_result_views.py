"""The views and figures of the result objects the report notebooks show.

Each is checked against the rows it reads, counted here with pandas, or against the
statistics function it stands for; the figures against the panels and titles they must have.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
from matplotlib.figure import Figure

import evalkit
from evalkit._display import draw
from evalkit.report import run_overview, stored_pairwise
from evalkit.stats import pass_rates
from tests.report.conftest import AFTER, ROOT

PAIRWISE = ROOT / "tests" / "fixtures" / "pairwise" / "tiny"


def _panels(figure: Figure) -> list[str]:
    return [ax.get_title(loc="left") for ax in figure.axes if ax.get_visible()]


def test_a_run_overview_counts_what_its_rows_hold() -> None:
    overview = run_overview(AFTER, confidence=0.9)
    rows = evalkit.read_run(AFTER)
    pd.testing.assert_frame_equal(
        overview.pass_rates(["provider", "condition"]),
        pass_rates(rows, by=["provider", "condition"], confidence=0.9),
    )
    assert overview.pass_rates(["condition"]) is overview.pass_rates(("condition",))
    outcomes = overview.outcomes("condition").set_index("condition")
    counted = rows.groupby("condition")["status"].value_counts().unstack(fill_value=0)
    for condition, statuses in counted.iterrows():
        for status, n in statuses.items():
            assert outcomes.loc[condition, status] == n
        assert outcomes.loc[condition, "total"] == (rows["condition"] == condition).sum()
    slowest = overview.top_items("latency_s", 3)
    assert list(slowest["latency_s"]) == sorted(rows["latency_s"], reverse=True)[:3]
    failed = rows[~rows["passed"].fillna(False).astype(bool)]
    failing = overview.failing_items(len(rows))
    assert sorted(failing["item_key"]) == sorted(failed["item_key"])
    first = overview.failing_items(3)  # one per case first
    assert first["case_id"].nunique() == min(3, failed["case_id"].nunique())
    errors = overview.errors
    assert errors["n"].sum() == int((rows["status"].astype(str) != "ok").sum())


def test_a_run_overview_summary_shows_the_overall_rate() -> None:
    overview = run_overview(AFTER)
    overall = pass_rates(overview.rows, by=[]).iloc[0]
    text = overview.summary().html
    assert f"{overall['estimate']:.1%}" in text
    assert f"{len(overview.rows):,}" in text


def test_the_pass_rate_figure_has_a_panel_per_group_before_the_condition() -> None:
    overview = run_overview(AFTER)
    providers = sorted(overview.rows["provider"].astype(str).unique())
    by_provider = overview.plot_pass_rates(["provider", "condition"], title="by provider")
    assert _panels(by_provider) == [f"provider: {p}" for p in providers]
    assert by_provider.texts[0].get_text() == "by provider"
    assert _panels(overview.plot_pass_rates()) == [""]


def test_lift_plots_draw_its_metrics_and_success_rates() -> None:
    lifted = evalkit.lift(AFTER, n_resamples=200)
    figure = lifted.plot(title="my lift")
    assert isinstance(figure, Figure)
    assert figure.axes[0].get_title(loc="left") == "my lift"
    labels = {t.get_text() for t in figure.axes[0].get_yticklabels()}
    assert labels == {"realized_lift", "oracle_lift", "routing_gap", "stale_harm"} & set(
        lifted.metrics.dropna(subset=["estimate"])["metric"]
    )
    groups = lifted.success[["provider", "lane"]].astype(str).drop_duplicates()
    success = lifted.plot_success(max_facets=1)
    assert len(_panels(success)) == 1
    assert success.texts[0].get_text().endswith(f"(first 1 of {len(groups)})") == (
        len(groups) > 1
    )


def test_a_figure_nobody_registered_is_a_lookup_error() -> None:
    with pytest.raises(LookupError, match="no figure 'plot_nothing'"):
        draw(evalkit.lift(AFTER, n_resamples=100), "plot_nothing")


@pytest.mark.slow
def test_a_result_plots_without_importing_the_report_or_matplotlib_first() -> None:
    code = (
        "import sys\n"
        "from evalkit.analysis import lift\n"
        f"result = lift({str(AFTER)!r}, n_resamples=100)\n"
        "assert 'matplotlib' not in sys.modules and 'evalkit.report' not in sys.modules\n"
        "figure = result.plot()\n"
        "print(type(figure).__module__, 'evalkit.report' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["matplotlib.figure", "True"]


def test_a_flip_rate_lists_its_unstable_cases_and_draws_them() -> None:
    result = evalkit.flips(AFTER)
    flipped = result.by_case[result.by_case["flips"] > 0]
    unstable = result.unstable_cases(3)
    assert len(unstable) == min(3, len(flipped))
    assert list(unstable["estimate"]) == sorted(flipped["estimate"], reverse=True)[:3]
    assert len(result.unstable_cases(10_000)) == len(flipped)
    figure = result.plot_heatmap(title="flips", max_rows=2)
    cases = result.by_case["case_id"].nunique()
    assert len(figure.axes[0].get_yticklabels()) == min(2, cases)
    assert figure.axes[0].get_title(loc="left").startswith("flips")


def test_a_stored_pairwise_comparison_is_its_json_with_its_views() -> None:
    stored = stored_pairwise(PAIRWISE)
    raw = json.loads(next((PAIRWISE / "pairwise").glob("*.json")).read_text(encoding="utf-8"))
    assert stored["verdict"] == raw["verdict"] and stored["pairs"] == raw["pairs"]
    assert list(stored.cases["case_id"]) == [case["case_id"] for case in raw["cases"]]
    figure = stored.plot_forest(max_cases=1)
    n = len(raw["cases"])
    title = figure.axes[0].get_title()
    assert title.startswith(f"Per-case win share of {raw['candidate']}")
    assert title.endswith(f"(1 of {n} cases)") == (n > 1)
    assert stored.pairs(max_pairs=1).html.count('class="ek-pair ek-pairwise') == 1
    assert stored.ranking().html == ""  # two variants: no Bradley-Terry ranking


@pytest.mark.slow
def test_a_trend_draws_each_suite_and_marks_its_changes() -> None:
    from evalkit.analysis import trend

    history = trend(ROOT / "tests" / "fixtures" / "runs", period="week", n_resamples=100)
    assert history.suites == sorted(history.runs["suite"].astype(str).unique())
    providers = sorted(history.pass_rates["provider"].astype(str).unique())
    for suite in history.suites:
        rates = history.plot_pass_rates(suite)
        assert rates.get_suptitle() == f"Pass rate per week by condition — suite {suite}"
        assert [ax.get_title(loc="left") for ax in rates.axes] == [
            f"provider: {p}" for p in providers
        ]
        assert history.plot_lift(suite).get_suptitle() == f"Lift per week — suite {suite}"
    overall = history.plot_overall()
    assert overall.get_suptitle() == "Pass rate per week, all conditions"
    dashed = {
        pd.Timestamp(line.get_xdata()[0]).tz_localize(None)
        for line in overall.axes[0].get_lines() if line.get_linestyle() == "--"
    }
    assert dashed == {change.tz_localize(None) for change in history.changes()}


def test_an_optimization_shows_its_test_verdict_facts_and_figures() -> None:
    from evalkit.report import load_optimization

    opt = load_optimization(ROOT / "tests" / "fixtures" / "optimize" / "opt")
    test = opt.state.test
    assert test is not None
    assert f"ek-banner-{test.verdict}" in opt.banner().html
    accepted = int(opt.history["accepted"].fillna(False).astype(bool).sum())
    assert f"<dt>accepted</dt><dd>{accepted}</dd>" in opt.facts().html.replace("\n", "")
    evaluated = opt.history.dropna(subset=["delta"])
    labels = [t.get_text() for t in opt.plot_gate().axes[0].get_yticklabels()]
    assert sorted(labels) == sorted(str(c) for c in evaluated["candidate"])
    assert len(opt.plot_trajectory().axes[0].collections) == 2  # rejected and accepted points
    assert opt.plot_cost().axes[0].get_title() == "Budget spent"
    assert ("+" in opt.skill_diff().html) == (opt.seed_text != opt.champion_text)


def test_an_ablation_draws_every_component_coloured_by_its_verdict() -> None:
    from evalkit.ablation import read_ablation

    result = read_ablation(ROOT / "tests" / "fixtures" / "ablation" / "study")
    ax = result.plot().axes[0]
    assert len(ax.get_yticklabels()) == len(result.components)
    assert ax.get_title(loc="left") == f"What each component of '{result.skill}' contributes"
    colours = {tuple(round(c, 3) for c in rgba[:3]) for rgba in ax.collections[-1].get_facecolors()}
    assert len(colours) == result.components["verdict"].nunique()
