"""Every surface names the same cases: compare's text and JSON, report, rich display, viewer.

The runs are imported with the real ``evalkit import`` from a table with a concentrated effect:
40 cases, two providers, 10 trials a side each. Three cases drop (two by 80-85 pp, one by
60 pp) and one rises by 80 pp; the other 36 do not move. Pooled over its providers each moved
case is named at the default 5 % false discovery rate, while the per-provider rows (Holm across
80 rows) name only three single rows; so a surface that read the per-provider rows would name
other cases than ``compare`` does. The report is rendered by ``evalkit report`` (papermill) and
read, like the rich display and the viewer's page, in a real Chromium.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest

import evalkit
from evalkit.viewer import ViewServer
from tests.conftest import evalkit_cli
from tests.report.conftest import ARTIFACTS

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

TRIALS = 10
PROVIDERS = ("agent-a", "agent-b")
#: Passes out of TRIALS per provider: (baseline, candidate).
MOVED = {
    "drop-rm-rf": ((10, 10), (1, 2)),
    "drop-curl-sudo": ((9, 10), (2, 1)),
    "drop-chmod": ((9, 9), (3, 3)),
    "rise-quote-vars": ((2, 1), (9, 10)),
}
REGRESSED = {"drop-rm-rf", "drop-curl-sudo", "drop-chmod"}
IMPROVED = {"rise-quote-vars"}


def _passes() -> dict[str, tuple[tuple[int, int], tuple[int, int]]]:
    same = {f"same-{i:02d}": ((5 + i % 6, 6 + i % 5),) * 2 for i in range(36)}
    return MOVED | same


def _side(which: int) -> pd.DataFrame:
    rows = [
        {"case_id": case, "condition": "none", "provider": provider, "trial": trial,
         "passed": trial < passes}
        for case, sides in _passes().items()
        for provider, passes in zip(PROVIDERS, sides[which], strict=True)
        for trial in range(TRIALS)
    ]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("concentrated")
    runs = root / "runs"
    for which, run_id in enumerate(("before", "after")):
        source = root / f"{run_id}.csv"
        _side(which).to_csv(source, index=False)
        done = evalkit_cli("import", source, "--format", "csv", "--run-id", run_id,
                           "--runs-dir", runs)
        assert done.returncode == 0, done.stderr
    return runs


@pytest.fixture(scope="module")
def server(runs: Path) -> Iterator[ViewServer]:
    started = ViewServer(runs).start()
    try:
        yield started
    finally:
        started.stop()


def _text_names(stdout: str) -> dict[str, set[str]]:
    named = {}
    for line in stdout.splitlines():
        for verdict in ("regressed", "improved"):
            if line.startswith(f"{verdict} cases: "):
                listed = line.removeprefix(f"{verdict} cases: ")
                named[verdict] = set() if listed == "none" else set(listed.split(", "))
    return named


def _table_names(page: Page, table: str) -> dict[str, set[str]]:
    """The case ids of a named-cases table, by its verdict column."""
    heads = [h.strip() for h in page.locator(f"{table} thead th").all_inner_texts()]
    case, verdict = heads.index("case_id"), heads.index("verdict")
    named: dict[str, set[str]] = {"regressed": set(), "improved": set()}
    for row in page.locator(f"{table} tbody tr").all():
        cells = [c.strip() for c in row.locator("td").all_inner_texts()]
        named[cells[verdict]].add(cells[case])
    return named


def _first_detail(page: Page) -> str:
    return page.locator("section.ek-banner li").first.inner_text().strip()


@pytest.mark.slow
def test_text_json_report_rich_display_and_viewer_name_the_same_cases(
    runs: Path, server: ViewServer, chromium: Browser, tmp_path: Path
) -> None:
    expected = {"regressed": REGRESSED, "improved": IMPROVED}
    text = evalkit_cli("compare", "before", "after", "--runs-dir", runs)
    assert text.returncode == 0, text.stderr
    assert _text_names(text.stdout) == expected
    data = json.loads(evalkit_cli("compare", "before", "after", "--runs-dir", runs,
                                  "--json").stdout)
    assert {v: set(data[f"{v}_cases"]) for v in expected} == expected
    assert {v: {e["case_id"] for e in data["named_cases"][v]} for v in expected} == expected
    summary = data["case_summary"]
    assert summary.startswith("-3.6 pp on average, concentrated: 3 cases dropped 60–85 pp")
    # the text says where the change is right after the verdict
    lines = text.stdout.splitlines()
    assert lines[lines.index(next(x for x in lines if x.startswith("verdict: "))) + 1] == summary
    # the per-provider rows alone would name other cases (the trap a surface could fall into)
    result = evalkit.compare(runs / "before", runs / "after", runs_dir=runs)
    unit_named = set(result.cases.loc[result.cases["verdict"] != "inconclusive", "case_id"])
    assert unit_named != REGRESSED | IMPROVED

    ARTIFACTS.mkdir(exist_ok=True)
    report = tmp_path / "compare.html"
    rendered = evalkit_cli("report", "after", "--baseline", "before", "--kind", "compare",
                           "--runs-dir", runs, "-o", report)
    assert rendered.returncode == 0, rendered.stderr
    page = chromium.new_page()
    try:
        page.goto(report.as_uri())
        assert _table_names(page, "#named-cases") == expected
        assert _first_detail(page) == summary
        # the sections of regressed and improved cases list the same cases
        for table, cases in (("#regressed", REGRESSED), ("#improved", IMPROVED)):
            heads = [h.strip() for h in page.locator(f"{table} thead th").all_inner_texts()]
            column = heads.index("case_id") + 1
            shown = page.locator(f"{table} tbody td:nth-child({column})").all_inner_texts()
            assert {c.strip() for c in shown} == cases, table
        caption = page.locator("#named-cases caption").inner_text()
        assert "false discovery rate (Benjamini-Hochberg)" in caption
        page.screenshot(path=str(ARTIFACTS / "named-cases-report.png"))  # its first screen
        page.locator("#regressed").screenshot(
            path=str(ARTIFACTS / "named-cases-report-regressed.png"))

        page.set_content(result._repr_html_() or "")
        assert _table_names(page, "#named-cases") == expected
        assert _first_detail(page) == summary
        page.screenshot(path=str(ARTIFACTS / "named-cases-rich.png"), full_page=True)

        page.goto(f"http://127.0.0.1:{server.port}/compare?baseline=before&candidate=after"
                  f"&token={server.token}")
        assert _table_names(page, "#named-cases") == expected
        assert _first_detail(page) == summary
        links = page.locator(".ek-view-named a").all_inner_texts()
        assert set(links) == REGRESSED | IMPROVED
        # every per-provider row of a named case says so; no other row does
        heads = page.locator("#ek-view-cases thead th").all_inner_texts()
        case, named = heads.index("case"), heads.index("case named")
        for row in page.locator("#ek-view-cases tbody tr").all():
            cells = [c.strip() for c in row.locator("td").all_inner_texts()]
            want = ("regressed" if cells[case] in REGRESSED
                    else "improved" if cells[case] in IMPROVED else "")
            assert cells[named] == want, cells
        page.screenshot(path=str(ARTIFACTS / "named-cases-viewer.png"), full_page=True)
    finally:
        page.close()


@pytest.mark.slow
def test_when_no_case_is_named_the_display_says_why(runs: Path, chromium: Browser) -> None:
    """At a 90 pp threshold no case's change is large enough to be named, and it says so."""
    result = evalkit.compare(runs / "before", runs / "after", runs_dir=runs, threshold=0.9)
    assert not result.regressed_cases and not result.improved_cases
    assert result.case_verdict_note == ""  # the trials could name a case: the rule did not
    page = chromium.new_page()
    try:
        page.set_content(result._repr_html_() or "")
        said = page.locator("#no-named-cases").inner_text()
        assert said == (
            "no case is named regressed or improved: none changed by at least 90.0 pp with an "
            "adjusted p below 0.05 (a 5 % false discovery rate (Benjamini-Hochberg) across 40 "
            "case rows); no case moved past the threshold in this sample"
        )
        assert page.locator("#named-cases").count() == 0
    finally:
        page.close()
