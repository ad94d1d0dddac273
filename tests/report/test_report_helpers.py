"""The building blocks of the reports, without a kernel: escaping, transcripts, plots, trend."""

from __future__ import annotations

import html
import importlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from matplotlib.figure import Figure

import evalkit
from evalkit.errors import ConfigError, InputError
from evalkit.report._compare_view import _case_pairs, _verdict_lines
from evalkit.report._html import add_toc, headings
from evalkit.report._params import parse_assignments
from evalkit.stats import pass_rates
from tests.report.conftest import AFTER, BEFORE, IMG_PAYLOAD, RUNS, SCRIPT_PAYLOAD

# The package, even if ``evalkit.report`` is also bound to the ``report`` function.
rk = importlib.import_module("evalkit.report")
results = importlib.import_module("evalkit.results")
analysis = importlib.import_module("evalkit.analysis")


@pytest.fixture(scope="module")
def after() -> pd.DataFrame:
    return evalkit.read_run(AFTER)


# -- escaping and sanitizing ----------------------------------------------------------------------


def test_sanitizer_keeps_report_markup_and_drops_active_content() -> None:
    figure = rk.figure_html(rk.rate_plot(pd.DataFrame()), "empty", "caption <b>")
    table = rk.html_table(pd.DataFrame({"a": [1]}), caption="c", table_id="t")
    kept = rk.sanitize_html(figure.html + table.html)
    assert 'id="fig-empty"' in kept and 'src="data:image/png;base64,' in kept
    assert '<table class="ek-table" id="t">' in kept
    hostile = (
        f'{SCRIPT_PAYLOAD}{IMG_PAYLOAD}<a href="javascript:alert(1)">x</a>'
        '<img src="https://example.com/t.png"><style>body{}</style><p style="x" onclick="y">p</p>'
    )
    cleaned = rk.sanitize_html(hostile)
    assert "<script" not in cleaned and "<style" not in cleaned
    assert "onerror" not in cleaned and "<img>" in cleaned, "an allowed tag loses its attributes"
    assert "javascript:" not in cleaned and "example.com" not in cleaned
    assert "onclick" not in cleaned and "style=" not in cleaned
    assert "__pwned" not in cleaned, "a script is dropped with its content"


def test_tables_and_facts_escape_everything() -> None:
    frame = pd.DataFrame({SCRIPT_PAYLOAD: [IMG_PAYLOAD], "n": [3]})
    markup = rk.html_table(frame, caption=SCRIPT_PAYLOAD, table_id='x" onmouseover="y').html
    markup += rk.key_values({IMG_PAYLOAD: SCRIPT_PAYLOAD}).html
    markup += rk.verdict_banner(SCRIPT_PAYLOAD, IMG_PAYLOAD, [SCRIPT_PAYLOAD]).html
    markup += rk.stat_cards([(SCRIPT_PAYLOAD, IMG_PAYLOAD, SCRIPT_PAYLOAD)]).html
    markup += rk.note(IMG_PAYLOAD, "warn").html
    assert "<script" not in markup and "<img" not in markup
    assert 'onmouseover="' not in markup


def test_html_table_caps_rows_and_aligns_numbers() -> None:
    frame = pd.DataFrame({"case_id": [f"c{i}" for i in range(5)], "rate": [0.1] * 5})
    markup = rk.html_table(frame, max_rows=2, formats={"rate": rk.pct}).html
    assert markup.count("<tr>") == 3 and "3 more row(s) not shown" in markup
    assert '<td class="num">10.0%</td>' in markup
    assert "nothing here" in rk.html_table(frame.head(0), empty="nothing here").html


def test_contents_nest_h3_under_h2() -> None:
    page = (
        "<nav><!--evalkit:toc--></nav>"
        '<h2 id="a">A<a class="anchor-link" href="#a">¶</a></h2><h3 id="b">B</h3>'
        '<h3 id="c">C</h3><h2 id="d">D</h2><h4 id="e">E</h4><h2>no id</h2>'
    )
    assert headings(page) == [(2, "a", "A"), (3, "b", "B"), (3, "c", "C"), (2, "d", "D")]
    toc = add_toc(page).split("</nav>")[0]
    assert toc == (
        '<nav><ol><li><a href="#a">A</a><ol><li><a href="#b">B</a></li>'
        '<li><a href="#c">C</a></li></ol></li><li><a href="#d">D</a></li></ol>'
    )


# -- transcripts ----------------------------------------------------------------------------------


def test_read_transcripts_finds_hostile_keys(after: pd.DataFrame) -> None:
    keys = after.loc[after["case_id"] == IMG_PAYLOAD, "item_key"].head(3).tolist()
    found = results.read_transcripts(AFTER, [*keys, "prompt:nope:none:simulated:0"], rows=after)
    assert sorted(found) == sorted(keys)
    assert all(record["item_key"] in keys for record in found.values())
    single = results.read_transcript(AFTER, keys[0])
    assert single is not None and single["response"]["events"][0]["kind"] == "user"


def test_runs_without_transcripts_show_none() -> None:
    rows = evalkit.read_run(RUNS / "w41")
    assert results.read_transcript(RUNS / "w41", rows["item_key"].iloc[0]) is None
    assert "no transcript" in rk.transcript_html(None, title="t").html


def test_transcript_path_outside_the_run_is_ignored(tmp_path: Path, after: pd.DataFrame) -> None:
    run = tmp_path / "run"
    shutil.copytree(AFTER, run)
    secret = tmp_path / "secret.jsonl"
    key = after["item_key"].iloc[0]
    secret.write_text(json.dumps({"item_key": key, "response": {"events": []}}) + "\n")
    rows = after.assign(transcript_path="../secret.jsonl")
    assert results.read_transcripts(run, [key], rows=rows) == {}


def test_transcript_excerpt_escapes_and_clips() -> None:
    events = [{"kind": "user", "content": "prompt"}]
    events += [{"kind": "tool_call", "name": "bash", "content": f"step {i}"} for i in range(10)]
    events += [{"kind": "assistant", "content": SCRIPT_PAYLOAD + "x" * 5000}]
    markup = rk.transcript_html({"response": {"events": events}}, max_chars=600).html
    assert "&lt;script&gt;" in markup and "<script" not in markup
    assert "event(s) not shown" in markup and "more characters]" in markup
    assert markup.count('class="ek-event ') == 6


def test_case_pairs_show_the_change(after: pd.DataFrame) -> None:
    view = rk.compare_view(AFTER, BEFORE, n_resamples=500)
    pairs = _case_pairs(view, "regressed")
    assert len(pairs) == 1
    caption, base, cand = pairs[0]
    assert "quote-variables" in caption and base is not None and cand is not None
    assert base["passed"] and not cand["passed"] and base["trial"] == cand["trial"]
    markup = rk.paired_excerpts(
        pairs,
        baseline_run=view.baseline_run,
        candidate_run=view.candidate_run,
        baseline_rows=view.baseline_rows,
        candidate_rows=view.candidate_rows,
    ).html
    assert markup.count('class="ek-excerpt"') == 2
    section = view.regressed().html  # the named regressed case's row, then that pair
    assert section.count('class="ek-excerpt"') == 2 and 'id="regressed"' in section
    assert section.index("quote-variables") < section.index('class="ek-excerpt"')


# -- views ----------------------------------------------------------------------------------------


def test_views_count_what_the_run_holds(after: pd.DataFrame) -> None:
    overview = rk.run_overview(AFTER)
    errors = overview.errors
    assert errors["n"].sum() == (after["status"] != "ok").sum()
    assert set(errors["status"]) <= {"error", "timeout"}
    confusion = overview.trigger_confusion
    assert confusion["total"].sum() == (after["condition"] == "self-load").sum()
    slowest = overview.top_items("latency_s", 5)
    assert slowest["latency_s"].is_monotonic_decreasing and len(slowest) == 5
    failing = overview.failing_items(4)
    assert not failing["passed"].any() and failing["case_id"].is_unique
    assert (failing["status"] == "ok").all(), "wrong answers come before errors"
    with pytest.raises(InputError):
        overview.top_items("no_such_column")
    shown = overview.slowest(5).html
    assert 'id="slowest"' in shown and shown.count("<tr>") == 6  # header and five items


def test_the_run_sections_carry_their_figures_and_tables() -> None:
    overview = rk.run_overview(AFTER)
    by_condition = overview.rates(["condition"]).html
    assert 'id="fig-pass-rate-condition"' in by_condition and 'id="rates-condition"' in by_condition
    by_lane = overview.rates(["lane", "condition"]).html
    assert "Pass rate per lane (prompt, execution, evidence) and condition" in by_lane
    lifted = evalkit.lift(overview.rows, n_resamples=200)
    lift = overview.lift_metrics(lifted).html
    assert 'id="fig-lift"' in lift and 'id="lift-metrics"' in lift
    assert "Trigger metrics" in overview.routing(lifted).html
    assert "Trigger metrics" not in overview.routing().html


def test_flip_overview_calls_the_stats_per_scope(after: pd.DataFrame) -> None:
    before = evalkit.read_run(BEFORE)
    table = rk.flip_overview(after, before, run_label="after", baseline_label="before")
    assert set(table["scope"]) == {"within after", "within before", "between before and after"}
    pooled = table[(table["scope"] == "between before and after") & (table["condition"] == "all")]
    assert pooled["flip_rate"].iloc[0] == pytest.approx(evalkit.flips(before, after).flip_rate)
    assert (table["reused_items"] == 0).all()  # two independently drawn fixture runs
    copy = before.assign(run_id="copy", cache_hit=True, origin_run_id="before")
    reused = rk.flip_overview(copy, before, run_label="copy", baseline_label="before")
    between = reused[reused["scope"] == "between before and copy"]
    assert between["flip_rate"].isna().all()
    assert between.set_index("condition")["reused_items"]["all"] == len(before)


def test_condition_comparisons_have_one_row_per_condition() -> None:
    view = rk.compare_view(AFTER, BEFORE, n_resamples=500)
    table = view.comparison.condition_table()
    assert table["condition"].tolist() == ["none", "preloaded", "self-load", "stale"]
    for row in table.itertuples():
        alone = evalkit.compare(BEFORE, AFTER, conditions=[row.condition], n_resamples=500)
        assert (row.verdict, row.n_cases) == (alone.verdict, alone.n_cases)
        assert row.estimate == pytest.approx(alone.delta.estimate)
    headline, details = _verdict_lines(view)
    assert "stratified by case" in headline
    # where the change is comes first, then the verdict by condition
    assert details[0] == view.comparison.case_summary != ""
    assert details[1].startswith("by condition: none ")
    within = rk.compare_view(AFTER, None, "none,preloaded", n_resamples=500)
    assert within.comparison.condition_table().empty
    assert "Two conditions of one run are compared" in within.by_condition().html


# -- plots ----------------------------------------------------------------------------------------


def test_palette_is_fixed_for_the_standard_conditions() -> None:
    assert rk.CONDITION_COLORS == {
        "none": "#7f7f7f",
        "self-load": "#1f77b4",
        "preloaded": "#2ca02c",
        "stale": "#d62728",
    }
    extra = rk.condition_palette(["none", "cand-a", "cand-b", "cand-c"])
    assert len(set(extra.values())) == 4
    assert rk.condition_color("candidate") == rk.condition_color("candidate")


def test_forest_plot_colours_a_condition_comparison_by_its_candidate(
    after: pd.DataFrame,
) -> None:
    from matplotlib.colors import to_hex

    def marker_colours(figure: Figure) -> set[str]:
        lines = figure.axes[0].lines
        return {to_hex(line.get_color()) for line in lines if line.get_marker() == "o"}

    within = evalkit.compare(after, conditions=("none", "preloaded"), n_resamples=200)
    assert within.conditions == ("none", "preloaded")
    assert marker_colours(rk.forest_plot(within, max_cases=8)) == {"#2ca02c"}
    reverse = evalkit.compare(after, conditions=("preloaded", "stale"), n_resamples=200)
    assert marker_colours(rk.forest_plot(reverse, max_cases=8)) == {"#d62728"}
    between = evalkit.compare(BEFORE, AFTER, n_resamples=200)
    assert between.conditions is None
    assert (between.baseline_label, between.candidate_label) == (BEFORE.name, AFTER.name)
    named = {rk.condition_color(c) for c in between.cases.head(8)["condition"]}
    assert marker_colours(rk.forest_plot(between, max_cases=len(between.cases))) >= named


def test_every_plot_handles_data_and_empty_tables(after: pd.DataFrame) -> None:
    rates = pass_rates(after, by=["provider", "condition"])
    lifted = evalkit.lift(after, n_resamples=200)
    result = evalkit.compare(BEFORE, AFTER, n_resamples=200)
    figures = [
        rk.rate_plot(rates, facet="provider"),
        rk.rate_plot(lifted.success, facet=["provider", "lane"], max_facets=0),
        rk.lift_plot(lifted.metrics),
        rk.forest_plot(result.cases, threshold=0.05, max_cases=5),
        rk.heatmap(evalkit.flips(after).by_case, title="t", colorbar_label="c", max_rows=3),
        rk.interval_plot(rates, label="condition", title="t", xlabel="x", scale="pct"),
    ]
    empty = pd.DataFrame(columns=["condition", "estimate", "ci_low", "ci_high", "period"])
    figures += [
        rk.rate_plot(empty),
        rk.forest_plot(empty.assign(case_id=[], verdict=[])),
        rk.trend_plot(empty, series="condition", facet=None, title="t", ylabel="y"),
    ]
    for figure in figures:
        assert isinstance(figure, Figure)
        assert rk.figure_html(figure, "f", "caption").html.startswith('<figure class="ek-figure"')
    with pytest.raises(ValueError, match="letters, digits and dashes"):
        rk.figure_html(figures[0], 'x" onload="y', "caption")


# -- trend ----------------------------------------------------------------------------------------


def test_trend_reads_runs_with_an_older_schema() -> None:
    assert "cache_hit" not in pq.read_schema(RUNS / "w41" / "results.parquet").names
    items = analysis.load_items(RUNS)
    assert set(items["run_dir"]) == {"w41", "w42", "before", "after"}
    assert not items.duplicated(["case_id", "condition", "provider", "trial"]).any()
    history = analysis.trend(RUNS, period="run", n_resamples=200)
    assert history.pass_rates["period"].nunique() == 4
    assert set(history.lift["metric"]) >= {"realized_lift", "oracle_lift"}
    assert list(history.versions["changed"]) == [False, False, False, True]


def test_trend_rejects_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no run"):
        analysis.trend(tmp_path)
    with pytest.raises(InputError, match="period"):
        analysis.trend(RUNS, period="fortnight")
    with pytest.raises(InputError, match="no run of suite"):
        analysis.trend(RUNS, suite="other")


# -- parameters -----------------------------------------------------------------------------------


def test_parameter_values_are_checked() -> None:
    notebook = Path(__file__).resolve().parents[2] / "notebooks" / "tutorial.py"
    assert rk.validate_parameters(notebook, {"live": "yes"}) == {"live": True}
    assert rk.validate_parameters(notebook, {"run": Path("x")}) == {"run": "x"}
    with pytest.raises(ConfigError, match="type bool"):
        rk.validate_parameters(notebook, {"live": "maybe"})
    with pytest.raises(ConfigError, match="NAME=VALUE"):
        parse_assignments(["=3"])


def test_numeric_parameters_take_numbers_and_numeric_text_but_not_bools() -> None:
    notebook = Path(__file__).resolve().parents[2] / "notebooks" / "run_report.py"
    checked = rk.validate_parameters(notebook, {"top_n": 7, "confidence": 1})
    assert checked == {"top_n": 7, "confidence": 1.0}
    assert isinstance(checked["confidence"], float)
    assert rk.validate_parameters(notebook, {"top_n": " 4 ", "confidence": "5e-1"}) == {
        "top_n": 4,
        "confidence": 0.5,
    }
    for bad in ({"top_n": "3.5"}, {"top_n": 2.0}, {"confidence": False}, {"confidence": "x"}):
        with pytest.raises(ConfigError, match="must be of type"):
            rk.validate_parameters(notebook, bad)
def test_the_reports_page_documents_every_kind() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "reports.md").read_text()
    usage = next(line for line in page.splitlines() if "--kind " in line and "[" in line)
    for kind in rk.KINDS:
        assert f"| `{kind}`" in page, f"docs/reports.md has no row for --kind {kind}"
        assert kind in usage


def test_the_view_shows_a_trajectory_in_its_verdict_and_its_section() -> None:
    view = rk.compare_view(AFTER, None, "none,preloaded", n_resamples=500)
    trajectory = rk.comparison_trajectory(view, sequential=True, round_cases=2)
    assert trajectory is not None
    said = html.escape(f"sequential verdict: {trajectory.facts()['sequential verdict']};")
    assert said in view.verdict(trajectory).html and said not in view.verdict().html
    section = view.sequential(trajectory).html
    assert section.index("sequential verdict") < section.index('id="fig-sequential"')
    assert section.index('id="fig-sequential"') < section.index('id="looks"')
