"""The lift and compare reports of an A/B whose failures are timeouts say so, in Chromium.

The Inspect plugin A/B (tests/fixtures/imports/inspect-timeouts/, every failure an HTTP
timeout) is imported with the real CLI and rendered with ``evalkit report``; the pages'
failure-cause tables must read "did not finish / timeout 20 -> 8", not a scorer that failed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.conftest import ROOT, evalkit_cli
from tests.report.test_item_browser import Opened

LOGS = ROOT / "tests" / "fixtures" / "imports" / "inspect-timeouts"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The lift and compare reports of the imported A/B."""
    out = tmp_path_factory.mktemp("unfinished")
    runs = out / "runs"
    done = evalkit_cli("import", LOGS, "--format", "inspect", "--run-id", "ab", "--runs-dir",
                       runs, "--condition-from", "task_arg:plugin_url", "--condition-map",
                       "http://localhost:9101=plugin,false=baseline")
    assert done.returncode == 0, done.stderr
    made = {}
    for kind, extra in (("lift", ("-p", "roles=baseline=A,plugin=B")),
                        ("compare", ("-p", "conditions=baseline,plugin"))):
        html = out / f"{kind}.html"
        done = evalkit_cli("report", "ab", "--runs-dir", runs, "--kind", kind, "-o", html,
                           *extra)
        assert done.returncode == 0, done.stderr
        made[kind] = html
    return made


def _rows(opened: Opened, table: str) -> list[list[str]]:
    body = opened.page.locator(f"table#{table} tbody tr")
    return [body.nth(i).locator("td").all_inner_texts() for i in range(body.count())]


@pytest.fixture
def lift_page(chromium: Browser, pages: dict[str, Path]) -> Iterator[Opened]:
    opened = Opened(chromium, pages["lift"])
    yield opened
    opened.context.close()


@pytest.fixture
def compare_page(chromium: Browser, pages: dict[str, Path]) -> Iterator[Opened]:
    opened = Opened(chromium, pages["compare"])
    yield opened
    opened.context.close()


def test_the_lift_report_counts_timeouts_as_unfinished(lift_page: Opened) -> None:
    causes = _rows(lift_page, "failure-causes")
    assert [row[:4] for row in causes] == [["baseline", "did not finish", "timeout", "20"],
                                           ["plugin", "did not finish", "timeout", "8"]]
    changes = _rows(lift_page, "failure-changes")
    assert changes == [["plugin", "did not finish", "timeout", "20", "8", "-12"]]
    headers = lift_page.page.locator("table#failure-changes thead th").all_inner_texts()
    assert "baseline (A)" in headers
    text = lift_page.page.locator("body").inner_text()
    assert "agent_scorer failed" not in text
    assert not lift_page.errors and not lift_page.requests


def test_the_compare_report_counts_timeouts_as_unfinished(compare_page: Opened) -> None:
    changes = _rows(compare_page, "cause-changes")
    assert changes == [["did not finish", "timeout", "20", "8", "-12"]]
    text = compare_page.page.locator("body").inner_text()
    assert "agent_scorer failed 20" not in text
    assert not compare_page.errors and not compare_page.requests
