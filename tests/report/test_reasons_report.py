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
from evalkit.report import report
from evalkit.results import NO_REASONS, failure_causes, item_reasons, read_scores
from tests.conftest import evalkit_cli
from tests.report.conftest import AFTER, Rendered
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
    assert first[:3] == [
        str(expected.iloc[0]["condition"]), expected.iloc[0]["cause"],
        str(expected.iloc[0]["failures"]),
    ]
    summary = page.locator("ul.ek-causes").first.inner_text()
    assert f"none: {int(expected[expected['condition'] == 'none']['failures'].sum())} failures" in (
        summary
    )


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
