"""The item browser of the run and compare reports, driven in a real Chromium from ``file://``.

Typing in the filter narrows the rows (counted against the result table), the drop-downs
filter by column, a click on a row opens that item's transcript, and the hostile strings of
the fixture runs stay text while the one embedded script (allowed by its CSP hash) runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd
import pytest
from playwright.sync_api import Browser, Page

import evalkit
from evalkit.report import item_browser, sample_items
from evalkit.results import read_transcript
from tests.report.conftest import AFTER, BEFORE, SCRIPT_PAYLOAD, Rendered

# the session fixture `rendered` renders six reports: one worker renders them for all (make test:
# --dist loadgroup)
pytestmark = pytest.mark.xdist_group("rendered-reports")

ROWS = "section.ek-browser tbody tr"
VISIBLE_ROWS = "section.ek-browser tbody tr:visible"


class Opened:
    """A report opened from file:// with every request that is not file:// or data: refused."""

    def __init__(self, browser: Browser, path: Path) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.context = browser.new_context(viewport={"width": 1300, "height": 900})
        self.page: Page = self.context.new_page()
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on(
            "console",
            lambda message: self.errors.append(message.text) if message.type == "error" else None,
        )
        self.page.route("**/*", self._route)
        self.page.goto(path.resolve().as_uri(), wait_until="load")

    def _route(self, route: object) -> None:
        url = route.request.url  # type: ignore[attr-defined]
        if urlparse(url).scheme in ("file", "data"):
            route.continue_()  # type: ignore[attr-defined]
        else:
            self.requests.append(url)
            route.abort()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def run_page(chromium: Browser, rendered: dict[str, Rendered]) -> Iterator[Opened]:
    opened = Opened(chromium, rendered["run"].html_path)
    yield opened
    opened.context.close()


@pytest.fixture(scope="module")
def compare_page(chromium: Browser, rendered: dict[str, Rendered]) -> Iterator[Opened]:
    opened = Opened(chromium, rendered["compare"].html_path)
    yield opened
    opened.context.close()


def _filter(page: Page, text: str) -> int:
    page.fill("section.ek-browser input.ek-browser-search", text)
    return page.locator(VISIBLE_ROWS).count()


@pytest.mark.slow
def test_the_script_runs_offline_and_lists_every_item(run_page: Opened) -> None:
    page = run_page.page
    rows = evalkit.read_run(AFTER)
    assert page.locator("section.ek-browser input.ek-browser-search").count() == 1, "no script"
    assert page.locator(ROWS).count() == len(rows)
    assert page.locator(VISIBLE_ROWS).count() == len(rows)
    assert page.locator(".ek-browser-count").inner_text() == f"{len(rows)} of {len(rows)} items"
    assert page.get_by_text(f"All {len(rows)} items").is_visible()
    assert run_page.requests == [] and run_page.errors == []


@pytest.mark.slow
def test_typing_narrows_the_rows(run_page: Opened) -> None:
    page = run_page.page
    rows = evalkit.read_run(AFTER)
    case = "exec-config-port"
    expected = int(rows["case_id"].str.contains(case, regex=False).sum())
    assert 0 < expected < len(rows)
    assert _filter(page, case) == expected
    assert page.locator(".ek-browser-count").inner_text() == f"{expected} of {len(rows)} items"
    for text in page.locator(VISIBLE_ROWS).all_inner_texts():
        assert case in text
    # Two words: both must appear in a row (a reason may say "timeout" too: use the condition)
    both = int((rows["case_id"].str.contains(case) & (rows["condition"] == "stale")).sum())
    assert _filter(page, f"{case} stale") == both
    assert _filter(page, "no such item anywhere") == 0
    assert _filter(page, "") == len(rows)


def test_drop_downs_filter_by_column(run_page: Opened) -> None:
    page = run_page.page
    rows = evalkit.read_run(AFTER)
    page.select_option("select[aria-label='Filter by status']", "timeout")
    assert page.locator(VISIBLE_ROWS).count() == int((rows["status"] == "timeout").sum())
    page.select_option("select[aria-label='Filter by condition']", "stale")
    wanted = (rows["status"] == "timeout") & (rows["condition"] == "stale")
    assert page.locator(VISIBLE_ROWS).count() == int(wanted.sum())
    page.select_option("select[aria-label='Filter by status']", "")
    page.select_option("select[aria-label='Filter by condition']", "")
    assert page.locator(VISIBLE_ROWS).count() == len(rows)


def test_clicking_a_row_opens_its_transcript(run_page: Opened, tmp_path: Path) -> None:
    page = run_page.page
    rows = evalkit.read_run(AFTER)
    _filter(page, "exec-config-port")
    row = page.locator(VISIBLE_ROWS).nth(2)
    target = row.locator("a").get_attribute("href")
    assert target is not None
    panel = page.locator(f"[id='{target[1:]}']")
    assert not panel.is_visible(), "transcripts stay closed until a row is clicked"
    row.locator("td").nth(2).click()
    assert panel.is_visible()
    # The item shown is the one in the row, and its transcript text is visible.
    cells = row.locator("td").all_inner_texts()
    chosen = rows[
        (rows["case_id"] == cells[0])
        & (rows["condition"] == cells[1])
        & (rows["trial"].astype(str) == cells[2])
    ]
    assert len(chosen) == 1
    record = read_transcript(AFTER, str(chosen["item_key"].iloc[0]), rows=rows)
    assert record is not None
    command = record["response"]["events"][1]["content"]
    assert panel.get_by_text(command, exact=False).first.is_visible()
    assert panel.locator(".ek-event-tool-call").count() >= 1, "tool calls are marked"
    assert page.locator(".ek-browser-item.ek-open").count() == 1
    page.screenshot(path=str(tmp_path / "item-browser.png"))
    assert (tmp_path / "item-browser.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Another row closes the first transcript.
    other = page.locator(VISIBLE_ROWS).nth(0)
    other.click()
    assert not panel.is_visible()
    assert page.locator(".ek-browser-item.ek-open").count() == 1
    _filter(page, "")


def test_hostile_text_is_found_but_never_run(run_page: Opened) -> None:
    page = run_page.page
    rows = evalkit.read_run(AFTER)
    expected = int(rows["case_id"].str.contains(SCRIPT_PAYLOAD, regex=False).sum())
    assert expected > 0
    assert _filter(page, SCRIPT_PAYLOAD) == expected
    page.locator(VISIBLE_ROWS).first.click()
    opened = page.locator(".ek-browser-item.ek-open")
    assert opened.get_by_text(SCRIPT_PAYLOAD, exact=False).first.is_visible()
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("script").count() == 1
    assert run_page.errors == [], "no CSP violation, no script error"
    _filter(page, "")


def test_compare_browser_holds_both_runs(compare_page: Opened) -> None:
    page = compare_page.page
    before, after = evalkit.read_run(BEFORE), evalkit.read_run(AFTER)
    total = len(before) + len(after)
    assert page.locator(ROWS).count() == total
    page.select_option("select[aria-label='Filter by run']", "before")
    assert page.locator(VISIBLE_ROWS).count() == len(before)
    assert _filter(page, "quote-variables") == int((before["case_id"] == "quote-variables").sum())
    page.locator(VISIBLE_ROWS).first.click()
    assert page.locator(".ek-browser-item.ek-open summary").inner_text().startswith("before")
    assert compare_page.requests == [] and compare_page.errors == []


def _big_run(n_cases: int, trials: int) -> pd.DataFrame:
    rows = []
    for case in range(n_cases):
        for trial in range(trials):
            passed = case % 5 != 0 or (case % 10 == 0 and trial == 0)
            rows.append(
                {
                    "case_id": f"case-{case:04d}",
                    "condition": "none",
                    "trial": trial,
                    "passed": passed,
                    "status": "ok",
                    "item_key": f"k{case}-{trial}",
                }
            )
    return pd.DataFrame(rows)


def test_large_runs_keep_failing_and_flipped_cases_whole() -> None:
    rows = _big_run(400, 5)  # 2000 items; every 5th case fails, every 10th of them flips
    sample = sample_items(rows, max_items=600, seed=3)
    assert len(sample.rows) == 600 and sample.total == 2000 and not sample.complete
    kept = set(sample.rows["case_id"])
    failing = {f"case-{c:04d}" for c in range(400) if c % 5 == 0}
    assert failing <= kept, "every failing or flipped case is kept"
    assert sample.cases == {"flipped": 40, "failing": 40, "passing": 40}
    assert (sample.rows.groupby("case_id").size() == 5).all(), "cases are whole"
    assert sample.describe().startswith("showing 600 of 2,000 items")
    again = sample_items(rows, max_items=600, seed=3)
    assert again.rows["case_id"].tolist() == sample.rows["case_id"].tolist(), "seeded"
    assert set(sample_items(rows, max_items=600, seed=4).rows["case_id"]) != kept
    assert sample_items(rows, max_items=5000).complete


def test_flipped_cases_come_first_when_failures_overflow() -> None:
    rows = _big_run(400, 5)
    sample = sample_items(rows, max_items=300, seed=0)
    flipped = {f"case-{c:04d}" for c in range(400) if c % 10 == 0}
    assert flipped <= set(sample.rows["case_id"])
    assert sample.cases == {"flipped": 40, "failing": 20, "passing": 0}


def test_a_case_larger_than_the_limit_is_cut() -> None:
    rows = _big_run(3, 50)
    sample = sample_items(rows, max_items=20)
    assert len(sample.rows) == 20 and sample.rows["case_id"].nunique() == 1
    assert sample.describe().startswith("showing 20 of 150 items")


def test_the_note_says_what_is_shown(tmp_path: Path) -> None:
    rows = evalkit.read_run(AFTER)
    markup = item_browser(AFTER, rows, max_items=40).html
    assert "Showing " in markup and f" of {len(rows)} items" in markup
    assert markup.count('class="ek-browser-row') <= 40


def test_the_csp_blocks_a_script_that_got_past_the_sanitizer(
    chromium: Browser, rendered: dict[str, Rendered], tmp_path: Path
) -> None:
    # Simulate a sanitizer failure: raw hostile markup spliced into the page's body. The page's
    # CSP allows the browser script by its hash only, so the injected script and handler stay
    # dead while the browser still works.
    page_html = rendered["run"].html
    injected = (
        "<script>window.__pwned=1</script>"
        '<img src="data:image/png;base64,x" onerror="window.__pwned=2">'
        '<div id="probe" onclick="window.__pwned=3">probe</div>'
    )
    tampered = tmp_path / "tampered.html"
    tampered.write_text(
        page_html.replace(
            '<main class="ek-main" id="ek-main">',
            '<main class="ek-main" id="ek-main">' + injected,
            1,
        )
    )
    assert injected in tampered.read_text()
    opened = Opened(chromium, tampered)
    try:
        page = opened.page
        page.locator("#probe").click()
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert any("Content Security Policy" in error for error in opened.errors)
        assert page.locator("input.ek-browser-search").count() == 1, "the browser still runs"
    finally:
        opened.context.close()
