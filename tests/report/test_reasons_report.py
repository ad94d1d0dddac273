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
