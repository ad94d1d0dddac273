"""The rendered reports in a real headless Chromium: offline, inert, complete, screenshotted.

Needs Debian's ``chromium`` at /usr/bin/chromium (``scripts/install-chromium.sh``); the test
fails, never skips, when it is missing. Screenshots go to ``test-artifacts/`` (git-ignored).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Browser, Page, Route

from tests.report.conftest import (
    ARTIFACTS,
    BROWSER_PAGES,
    EXPECTED_FIGURES,
    EXPECTED_TITLES,
    IMG_PAYLOAD,
    SCRIPT_PAYLOAD,
    SHOWS_CASE_IDS,
    Rendered,
)

# the session fixture `rendered` renders six reports: one worker renders them for all (make test:
# --dist loadgroup)
pytestmark = pytest.mark.xdist_group("rendered-reports")

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


@pytest.fixture(scope="session")
def browser(chromium: Browser) -> Browser:
    """The session's Chromium (tests/report/conftest.py); each visit opens its own context."""
    return chromium


class Visit:
    """A page opened with every non-local request aborted and every console error kept."""

    def __init__(self, browser: Browser, page_file: Path) -> None:
        self.console: list[str] = []
        self.external: list[str] = []
        self.context = browser.new_context(viewport={"width": 1400, "height": 900})
        self.page: Page = self.context.new_page()
        self.page.on("console", self._on_console)
        self.page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))
        self.page.route("**/*", self._route)
        self.page.goto(page_file.resolve().as_uri(), wait_until="load")

    def _on_console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.console.append(f"{message.type}: {message.text}")

    def _route(self, route: Route) -> None:
        url = route.request.url
        parsed = urlparse(url)
        if parsed.scheme in ("file", "data") or parsed.hostname in LOOPBACK:
            route.continue_()
        else:
            self.external.append(url)
            route.abort()

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module")
def visits(browser: Browser, rendered: dict[str, Rendered]) -> Iterator[dict[str, Visit]]:
    ARTIFACTS.mkdir(exist_ok=True)
    opened = {name: Visit(browser, page.html_path) for name, page in rendered.items()}
    for name, visit in opened.items():
        visit.page.screenshot(path=str(ARTIFACTS / f"report-{name}.png"), full_page=True)
    yield opened
    for visit in opened.values():
        visit.close()


PAGES = list(EXPECTED_FIGURES)


@pytest.mark.slow
@pytest.mark.parametrize("name", PAGES)
def test_title_and_every_figure(visits: dict[str, Visit], name: str) -> None:
    page = visits[name].page
    assert page.title() == EXPECTED_TITLES[name]
    assert page.locator("h1").first.is_visible()
    for figure in EXPECTED_FIGURES[name]:
        image = page.locator(f"#fig-{figure} img")
        assert image.count() == 1, f"figure {figure} missing"
        assert image.is_visible(), f"figure {figure} hidden"
        width = image.evaluate("img => img.complete ? img.naturalWidth : 0")
        assert width > 300, f"figure {figure} did not load"


@pytest.mark.slow
@pytest.mark.parametrize("name", PAGES)
def test_offline_and_quiet(visits: dict[str, Visit], name: str) -> None:
    visit = visits[name]
    assert visit.external == [], f"requests outside loopback: {visit.external}"
    assert visit.console == [], f"console errors: {visit.console}"
    # Only the item browser's own script, and only on the pages that show a browser.
    expected = 1 if name in BROWSER_PAGES else 0
    assert visit.page.locator("script").count() == expected


@pytest.mark.parametrize("name", PAGES)
def test_hostile_strings_are_inert_text(visits: dict[str, Visit], name: str) -> None:
    page = visits[name].page
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("img[onerror]").count() == 0
    assert page.locator("img:not([src^='data:image/'])").count() == 0
    if name in SHOWS_CASE_IDS:
        for payload in (SCRIPT_PAYLOAD, IMG_PAYLOAD):
            shown = page.get_by_text(payload, exact=False).first
            assert shown.is_visible(), f"{payload!r} is not shown as text"


@pytest.mark.parametrize("name", PAGES)
def test_contents_links_reach_their_sections(visits: dict[str, Visit], name: str) -> None:
    page = visits[name].page
    links = page.locator("nav.ek-toc a")
    assert links.count() >= 3
    targets = links.evaluate_all("links => links.map(a => a.getAttribute('href'))")
    for href in targets:
        assert page.locator(f"[id='{href[1:]}']").count() == 1, href
    last = links.nth(links.count() - 1)
    last.click()
    assert page.evaluate("location.hash") == targets[-1]
    heading = page.locator(f"[id='{targets[-1][1:]}']")
    assert heading.is_visible()
    box = heading.bounding_box()
    assert box is not None and box["y"] < 900, "the section was scrolled into view"


def test_screenshots_were_saved(visits: dict[str, Visit]) -> None:
    for name in visits:
        shot = ARTIFACTS / f"report-{name}.png"
        assert shot.exists() and shot.stat().st_size > 10_000, shot
