"""``evalkit view``'s comparison page counts unfinished items apart from wrong answers.

A real server on 127.0.0.1 over the Inspect plugin A/B (tests/fixtures/imports/inspect-timeouts/,
imported with the real CLI), read by a real Chromium.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from evalkit.viewer import ViewServer
from tests.conftest import ROOT, evalkit_cli

LOGS = ROOT / "tests" / "fixtures" / "imports" / "inspect-timeouts"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ViewServer]:
    runs = tmp_path / "runs"
    done = evalkit_cli("import", LOGS, "--format", "inspect", "--run-id", "ab", "--runs-dir",
                       runs, "--condition-from", "task_arg:plugin_url", "--condition-map",
                       "http://localhost:9101=plugin,false=baseline")
    assert done.returncode == 0, done.stderr
    started = ViewServer(runs).start()
    try:
        yield started
    finally:
        started.stop()


@pytest.mark.slow
def test_the_comparison_page_says_the_failures_did_not_finish(
    chromium: Browser, server: ViewServer
) -> None:
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"http://127.0.0.1:{server.port}/compare?run=ab&a=baseline&b=plugin"
                  f"&token={server.token}")
        heads = page.locator("table#failure-changes thead th").all_inner_texts()
        assert heads == ["outcome", "cause", "baseline", "plugin", "change"]
        body = page.locator("table#failure-changes tbody tr")
        assert [body.nth(i).locator("td").all_inner_texts() for i in range(body.count())] == [
            ["did not finish", "timeout", "20", "8", "-12"]]
        text = page.locator("body").inner_text()
        assert "agent_scorer failed 20" not in text and "timeout (2)" in text  # case lines too
        assert not errors
    finally:
        page.close()
