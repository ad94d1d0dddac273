"""Reasons on the report pages, read in a real Chromium: every item says why.

The pages are the session's rendered reports of the committed fixture runs (their scores
included) and a report of a bare CSV import. Every expected reason is computed from the runs
with :func:`evalkit.results.item_reasons` / :func:`~evalkit.results.failure_causes`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Browser

import evalkit
from evalkit.providers import AgentResponse, Event
from evalkit.report import report
from evalkit.report._browser import REASON_CELL_CHARS
from evalkit.results import NO_REASONS, failure_causes, item_reasons, read_scores
from tests.conftest import TINY, evalkit_cli
from tests.report.conftest import AFTER, SCRIPT_PAYLOAD, Rendered
from tests.report.test_item_browser import Opened

pytestmark = pytest.mark.xdist_group("rendered-reports")


@pytest.fixture(scope="module")
def run_page(chromium: Browser, rendered: dict[str, Rendered]) -> Iterator[Opened]:
    opened = Opened(chromium, rendered["run"].html_path)
    yield opened
    opened.context.close()


def _reasons() -> pd.DataFrame:
    rows = evalkit.read_run(AFTER)
    reasons = item_reasons(rows, read_scores(AFTER))
    return rows.join(reasons.set_index(rows.index)[["cause", "reason"]])


def test_every_browsed_item_carries_its_reason(run_page: Opened) -> None:
    page = run_page.page
    rows = _reasons()
    shown = page.locator("section.ek-browser details.ek-browser-item .ek-reason")
    texts = set(shown.all_text_contents())
    assert shown.count() == len(rows)  # the fixture run is under the browser's cap
    failing = rows[~rows["passed"]]
    causes = set(failing["cause"])
    assert {"missing expected pattern", "verifier failed", "skill not loaded", "timeout"} <= causes
    for _, item in failing.drop_duplicates("cause").iterrows():
        assert f"why: {item['reason']}" in texts, item["cause"]
    # the cause drop-down narrows the table to the items of that primary cause
    page.select_option("select[aria-label='Filter by cause']", "verifier failed")
    visible = page.locator("section.ek-browser tbody tr:visible")
    assert visible.count() == int((rows["cause"] == "verifier failed").sum())
    page.select_option("select[aria-label='Filter by cause']", "")
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_the_reason_column_is_in_view_beside_long_case_ids(run_page: Opened) -> None:
    """The fixture's case ids are long unbroken markup: they wrap instead of pushing the
    reason column out of the browser's frame."""
    widths = run_page.page.locator("section.ek-browser .ek-browser-wrap").evaluate(
        "wrap => [wrap.clientWidth, wrap.querySelector('table').scrollWidth]"
    )
    assert widths[1] <= widths[0], widths
    reason = run_page.page.locator("section.ek-browser td.ek-cell-reason").first
    assert reason.is_visible()
    assert reason.bounding_box()["width"] >= 200  # type: ignore[index]


def test_the_failing_transcripts_say_why(run_page: Opened) -> None:
    excerpts = run_page.page.locator(".ek-excerpts .ek-excerpt .ek-reason")
    assert excerpts.count() >= 1
    reasons = set(_reasons()["reason"])
    for text in excerpts.all_text_contents():
        assert text.removeprefix("why: ") in reasons


def test_the_run_report_counts_its_failures_by_cause(run_page: Opened) -> None:
    page = run_page.page
    rows = evalkit.read_run(AFTER)
    expected = failure_causes(rows, read_scores(AFTER), by=["condition"])
    table = page.locator("table#failure-causes")
    assert table.count() == 1
    body = table.locator("tbody tr")
    assert body.count() == len(expected)
    first = body.nth(0).locator("td").all_inner_texts()
    assert first[:4] == [
        str(expected.iloc[0]["condition"]), expected.iloc[0]["outcome"],
        expected.iloc[0]["cause"], str(expected.iloc[0]["failures"]),
    ]
    assert page.locator("figure#fig-failure-causes img").count() == 1  # the stacked bars
    summary = page.locator("ul.ek-causes").first.inner_text()
    assert f"none: {int(expected[expected['condition'] == 'none']['failures'].sum())} failures" in (
        summary
    )


def test_the_lift_report_counts_its_failures_by_cause(
    chromium: Browser, rendered: dict[str, Rendered]
) -> None:
    rows = evalkit.read_run(AFTER)
    expected = failure_causes(rows, read_scores(AFTER), by=["condition"])
    lift = Opened(chromium, rendered["lift"].html_path)
    try:
        body = lift.page.locator("table#failure-causes tbody tr")
        shown = [body.nth(i).locator("td").all_inner_texts()[:4] for i in range(body.count())]
        assert shown == [[str(r["condition"]), r["outcome"], r["cause"], str(r["failures"])]
                         for r in expected.to_dict("records")]
        assert "skill not loaded" in lift.page.locator("ul.ek-causes").inner_text()
    finally:
        lift.context.close()


def test_the_compare_and_flips_reports_say_why(
    chromium: Browser, rendered: dict[str, Rendered]
) -> None:
    compare = Opened(chromium, rendered["compare"].html_path)
    try:
        page = compare.page
        assert page.locator("table#cause-changes tbody tr").count() > 0
        assert page.locator(".ek-pair .ek-reason").count() >= 2  # both sides of a pair
        explained = page.locator("section.ek-explain")
        assert explained.count() >= 1
        assert "quote-variables" in explained.first.inner_text()
        assert "failing" in explained.first.inner_text()
    finally:
        compare.context.close()
    flips = Opened(chromium, rendered["flips"].html_path)
    try:
        sections = flips.page.locator("section.ek-explain")
        assert 1 <= sections.count() <= 5
        assert "What separates the failing trials" in flips.page.content()
        assert flips.page.evaluate("typeof window.__pwned") == "undefined"
    finally:
        flips.context.close()


@pytest.mark.slow
def test_a_bare_import_says_no_reasons_were_recorded(chromium: Browser, tmp_path: Path) -> None:
    source = tmp_path / "bare.csv"
    pd.DataFrame({
        "case_id": ["a", "a", "b", "b"], "condition": "none", "passed": [True, False, False, False],
    }).to_csv(source, index=False)
    runs = tmp_path / "runs"
    done = evalkit_cli("import", source, "--format", "csv", "--run-id", "bare", "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    page_path = report(runs / "bare", kind="run", output=tmp_path / "bare.html").html_path
    opened = Opened(chromium, page_path)
    try:
        reasons = opened.page.locator("section.ek-browser .ek-reason").all_text_contents()
        assert reasons and set(reasons) == {f"why: {NO_REASONS}"}
        cells = opened.page.locator("section.ek-browser tbody td").all_inner_texts()
        assert NO_REASONS in cells
    finally:
        opened.context.close()


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
#: Runs whose report must show each failing item's own reason: a real demo run (every kind of
#: scoring component fails somewhere in it) and imports carrying their source's reasons.
SOURCES = {
    "demo": None,
    "inspect": ("inspect", FIXTURES / "imports" / "inspect-reasons" / "reasons.eval"),
    "harbor": ("harbor", FIXTURES / "imports" / "harbor" / "job-no-skills"),
    "skill-creator": ("skill-creator", FIXTURES / "imports" / "skill-creator-workspace"),
}


@pytest.fixture(scope="module")
def source_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """``{name: (run directory, its rendered run report)}``."""
    import shutil

    tmp = tmp_path_factory.mktemp("sources")
    runs = tmp / "runs"
    shutil.copytree(FIXTURES / "golden" / "runs" / "demo-b", runs / "demo")
    pages = {}
    for name, source in SOURCES.items():
        if source is not None:
            fmt, path = source
            done = evalkit_cli("import", path, "--format", fmt, "--run-id", name,
                               "--runs-dir", runs)
            assert done.returncode == 0, done.stderr
        result = report(runs / name, kind="run", output=tmp / f"{name}.html",
                        parameters={"n_resamples": 200})
        pages[name] = (runs / name, result.html_path)
    return pages


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SOURCES))
def test_each_failing_component_kind_shows_its_reason(
    name: str, chromium: Browser, source_pages: dict[str, tuple[Path, Path]]
) -> None:
    run_dir, page_path = source_pages[name]
    rows = evalkit.read_run(run_dir)
    reasons = item_reasons(rows, read_scores(run_dir)).set_index(rows.index)
    failing = rows.join(reasons[["cause", "reason"]])[~rows["passed"].fillna(False)]
    assert len(failing) > 0 and not (failing["reason"] == NO_REASONS).any()
    opened = Opened(chromium, page_path)
    try:
        shown = set(opened.page.locator("section.ek-browser .ek-reason").all_text_contents())
        for _, item in failing.drop_duplicates("cause").iterrows():
            assert f"why: {item['reason']}" in shown, item["cause"]
        assert opened.page.evaluate("typeof window.__pwned") == "undefined"
    finally:
        opened.context.close()
    if name == "demo":
        causes = set(failing["cause"])
        assert {"missing expected pattern", "verifier failed", "skill not loaded",
                "anti-pattern matched", "evidence missing or invalid"} <= causes
        kinds = " ".join(failing["reason"])
        for fragment in ("forbidden pattern recommended: ", "workflow step missing",
                         "judged expectation failed: '", "exit "):
            assert fragment in kinds


#: A fragment of each kind of reason the demo run holds: every scoring component that fails.
DEMO_REASON_KINDS = (
    "missing expected pattern: ",
    "forbidden pattern recommended: ",
    "anti-pattern matched: ",
    "workflow step missing or out of order: ",
    "exits 0: exit 1",  # a verifier command, with the exit it gave
    "skill not loaded: expected flaky-test-triage, inferred none",
    "evidence missing or invalid: ",
    "judged expectation failed: '",  # the statement, then the judge's evidence
    "the answer does not show what the statement asks",
)


@pytest.mark.slow
def test_each_kind_of_reason_reads_whole_in_its_panel_and_clipped_in_its_row(
    chromium: Browser, source_pages: dict[str, tuple[Path, Path]]
) -> None:
    run_dir, page_path = source_pages["demo"]
    rows = evalkit.read_run(run_dir)
    reasons = item_reasons(rows, read_scores(run_dir)).set_index(rows.index)
    opened = Opened(chromium, page_path)
    try:
        page = opened.page
        panels = page.locator("section.ek-browser details.ek-browser-item")
        assert panels.count() == len(rows)  # the demo run is under the browser's cap
        for fragment in DEMO_REASON_KINDS:
            found = reasons[reasons["reason"].str.contains(fragment, regex=False)]
            assert len(found), fragment
            whole, cause = found.iloc[0]["reason"], found.iloc[0]["cause"]
            panel = panels.filter(has=page.locator(".ek-reason", has_text=f"why: {whole}"))
            assert panel.count() >= 1, fragment  # the whole line, in the item's panel
            anchor = panel.first.get_attribute("id")
            row = page.locator(f"section.ek-browser tbody tr:has(a[href='#{anchor}'])")
            clipped = whole if len(whole) <= REASON_CELL_CHARS else (
                whole[: REASON_CELL_CHARS - 1] + "…")
            assert row.locator("td.ek-cell-reason").inner_text() == clipped
            assert row.locator("td.ek-cell-cause").inner_text() == cause
            row.click()
            assert panel.first.is_visible()
    finally:
        opened.context.close()


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A real run whose answer carries a script that a forbidden pattern matches.

    ``(run directory, its rendered run report)``: a copy of the ``tiny`` suite whose
    ``wait-server`` forbids ``<script>...</script>``, answered by the replay provider.
    """
    import json
    import shutil

    tmp = tmp_path_factory.mktemp("hostile")
    suite = tmp / "tiny"
    shutil.copytree(TINY, suite)
    cases = suite / "cases" / "prompt.yaml"
    text = cases.read_text(encoding="utf-8")
    forbidden = "    forbidden_patterns: ['\\bsleep\\s+\\d+']\n"
    assert forbidden in text
    cases.write_text(text.replace(
        forbidden, "    forbidden_patterns: ['<script>[^<]*</script>']\n    pass_threshold: 0.95\n"
    ), encoding="utf-8")
    answer = f"Poll the health endpoint in a loop under timeout 30, then paste {SCRIPT_PAYLOAD}."
    response = AgentResponse(
        events=(Event("user", "How should a CI script wait?"), Event("assistant", answer)),
        model="recorded", input_tokens=10, output_tokens=5,
    )
    recording = tmp / "recording.jsonl"
    recording.write_text(json.dumps({
        "item_key": "prompt:wait-server:none:recording:0", "provider": "recording",
        "model": "recorded", "response": response.to_json(),
    }) + "\n", encoding="utf-8")
    runs = tmp / "runs"
    done = evalkit_cli(
        "run", suite, "--provider", "replay", "--provider-opt", f"path={recording}",
        "--conditions", "none", "--case", "wait-server", "--trials", "1",
        "--runs-dir", runs, "--run-id", "hostile", "--no-cache",
    )
    assert done.returncode == 0, done.stderr
    result = report(runs / "hostile", kind="run", output=tmp / "hostile.html",
                    parameters={"n_resamples": 200})
    return runs / "hostile", result.html_path


@pytest.mark.slow
def test_hostile_text_in_a_reason_renders_as_text(
    chromium: Browser, hostile_page: tuple[Path, Path]
) -> None:
    run_dir, page_path = hostile_page
    rows = evalkit.read_run(run_dir)
    reason = item_reasons(rows, read_scores(run_dir))["reason"].iloc[0]
    assert reason.startswith("forbidden pattern recommended: ") and SCRIPT_PAYLOAD in reason
    opened = Opened(chromium, page_path)
    try:
        page = opened.page
        shown = page.locator("section.ek-browser .ek-reason").all_text_contents()
        assert shown == [f"why: {reason}"]  # the script is on the page as its text
        excerpt = page.locator(".ek-excerpts .ek-reason").all_text_contents()
        assert excerpt == [f"why: {reason}"]
        assert page.locator("table#failure-causes tbody td").all_inner_texts()[1:3] == [
            "answered wrong", "forbidden pattern recommended"]
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert not opened.errors
    finally:
        opened.context.close()


def test_counts_of_several_providers_sum_into_the_groups_asked_for() -> None:
    """``failure_summary`` given lift's per-provider counts shows what counting anew shows."""
    from evalkit.report import failure_summary

    demo = FIXTURES / "golden" / "runs" / "demo-b"
    rows, scores = evalkit.read_run(demo), read_scores(demo)
    rows = pd.concat([rows, rows.assign(provider="other", item_key=rows["item_key"] + "-2")],
                     ignore_index=True)
    scores = pd.concat([scores, scores.assign(item_key=scores["item_key"] + "-2")],
                       ignore_index=True)
    per_provider = failure_causes(rows, scores, by=["provider", "condition"])
    given = failure_summary(rows, scores, by=["condition"], causes=per_provider)._repr_html_()
    counted = failure_summary(rows, scores, by=["condition"])._repr_html_()
    assert given == counted
    assert "none: 140 failures" in given  # each condition's failures of both providers
