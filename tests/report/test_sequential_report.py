"""The compare report and the rich displays show the trajectory of a real sequential run.

The run is ``evalkit run cases/demo --until-verdict --round-cases 5`` with the simulated agent,
in a real subprocess; every number the tests look for is read back from its manifest.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from evalkit.analysis import sequential_compare as sequential_compare_runs
from evalkit.report import interval, report, usd
from evalkit.results import SequentialRecord, load_manifest, read_run
from evalkit.runner import RunConfig
from evalkit.sequential import SequentialConfig, run_until_verdict
from tests.conftest import DEMO, until_verdict_argv
from tests.report.conftest import AFTER, ROOT, RUNS

# the module-scoped fixtures (seconds each) are built once, by one worker, for all its tests
pytestmark = pytest.mark.xdist_group("sequential-report")


@pytest.fixture(scope="module")
def sequential_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    done = subprocess.run(
        until_verdict_argv(runs, "seq"),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return runs / "seq"


@pytest.fixture(scope="module")
def record(sequential_run: Path) -> SequentialRecord:
    manifest = load_manifest(sequential_run)
    assert manifest is not None and manifest.sequential is not None
    assert len(manifest.sequential.looks) >= 2, "a few rounds"
    return manifest.sequential


@pytest.fixture(scope="module")
def page(sequential_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pages") / "seq-compare.html"
    # No --conditions: the report compares the conditions the sequential run compared.
    return report(sequential_run, kind="compare", output=out).html_path


def _looks(markup: str) -> list[list[str]]:
    """The cells of each row of the table of looks (captioned "Every look")."""
    table = re.search(r"<caption>Every look</caption>(.*?)</table>", markup, re.S)
    assert table is not None, "no table of looks"
    body = table.group(1).split("<tbody>", 1)[1]
    return [
        [html.unescape(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


@pytest.mark.slow
def test_the_compare_report_shows_the_runs_trajectory(
    page: Path, record: SequentialRecord, sequential_run: Path
) -> None:
    text = page.read_text(encoding="utf-8")
    assert '<h2 id="Sequential-trajectory">' in text
    assert '<a href="#Sequential-trajectory">Sequential trajectory</a>' in text, "in the contents"
    figure = re.search(r'<figure class="ek-figure" id="fig-sequential"><img ([^>]*)>', text)
    assert figure is not None and 'src="data:image/png;base64,' in figure.group(1)
    assert '<table class="ek-table" id="looks"><caption>Every look</caption>' in text
    rows = _looks(text)
    assert rows == [
        [
            str(look.round),
            str(look.n_cases),
            interval(look.estimate, look.ci_low, look.ci_high, "pp"),
            f"{look.items:,}",
            usd(look.cost_usd),
            look.verdict,
            look.reason,
        ]
        for look in record.looks
    ]
    last = record.looks[-1]
    assert last.reason == record.stop_reason and last.reason in {"improved", "regressed", "futile"}
    manifest = load_manifest(sequential_run)
    assert manifest is not None and manifest.trials is not None
    fixed_items = len(record.order) * 2 * manifest.trials  # every case, both conditions
    assert last.items == len(read_run(sequential_run)) < fixed_items
    facts = html.unescape(text)
    assert f"{len(record.order)} cases, {fixed_items:,} items" in facts
    assert f"{last.reason} at look {last.round} ({last.n_cases} cases)" in facts
    banner = re.search(r'<section class="ek-banner[^"]*"[^>]*>(.*?)</section>', text, re.S)
    assert banner is not None
    assert f"sequential verdict: {last.reason} at look {last.round}" in html.unescape(
        banner.group(1)
    ), "the verdict banner says the sequential verdict too"
    assert f"({last.items / fixed_items:.0%} of the fixed design)" in facts
    # The section sits between the verdict and the per-condition table.
    assert text.index('id="Verdict"') < text.index('id="Sequential-trajectory"')
    assert text.index('id="Sequential-trajectory"') < text.index('id="By-condition"')


@pytest.mark.slow
def test_the_trajectory_in_chromium(chromium: Browser, page: Path) -> None:
    view = chromium.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    view.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        view.goto(page.resolve().as_uri(), wait_until="load")
        view.locator('nav a[href="#Sequential-trajectory"]').click()
        heading = view.locator("#Sequential-trajectory")
        assert heading.is_visible()
        box = heading.bounding_box()
        assert box is not None and 0 <= box["y"] < 900, "the contents link reaches the section"
        image = view.locator("#fig-sequential img")
        assert image.evaluate("img => img.complete ? img.naturalWidth : 0") > 600
        assert view.locator("#looks tbody tr").count() >= 2
        assert errors == []
    finally:
        view.close()


def _compare_page(output: Path, **parameters: object) -> str:
    """The compare report of two conditions of the committed example run ``after``."""
    result = report(
        "after",
        kind="compare",
        runs_dir=RUNS,
        output=output,
        parameters={"conditions": "none,preloaded", **parameters},
    )
    return result.html_path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_compare_report_of_a_plain_run_has_no_trajectory(tmp_path: Path) -> None:
    text = _compare_page(tmp_path / "plain.html")
    assert "Sequential-trajectory" not in text and "Sequential trajectory" not in text
    assert 'id="fig-sequential"' not in text and 'id="looks"' not in text
    assert 'id="fig-forest"' in text  # the rest of the report is there
    assert "sequential verdict" not in text


@pytest.mark.slow
def test_a_plain_run_looked_at_sequentially(tmp_path: Path) -> None:
    text = _compare_page(tmp_path / "asked.html", sequential=True, round_cases=2)
    assert '<h2 id="Sequential-trajectory">' in text and 'id="fig-sequential"' in text
    expected = sequential_compare_runs(AFTER, conditions=("none", "preloaded"), round_cases=2)
    run_rows = read_run(AFTER)
    pair = run_rows[run_rows["condition"].isin(["none", "preloaded"])]
    rows = _looks(text)
    assert [row[1] for row in rows] == [str(look.n_cases) for look in expected.looks]
    assert [row[2] for row in rows] == [
        interval(look.estimate, look.ci_low, look.ci_high, "pp") for look in expected.looks
    ]
    for row, look in zip(rows, expected.looks, strict=True):
        cases = set(list(expected.order)[: look.n_cases])
        assert row[3] == f"{int(pair['case_id'].isin(cases).sum()):,}"


@pytest.mark.slow
def test_a_sequential_run_displays_its_trajectory(tmp_path: Path) -> None:
    config = RunConfig(
        conditions=("none", "preloaded"),
        runs_dir=tmp_path,
        run_id="rich",
        progress=False,
        use_cache=False,
    )
    result = run_until_verdict(DEMO, config, SequentialConfig(round_cases=5, max_rounds=2))
    markup = result._repr_html_()
    assert markup is not None and 'id="fig-sequential"' in markup
    assert f"stopped: {result.stop_reason} after {result.rounds} round(s)" in html.unescape(markup)
    looks = _looks(markup)
    assert [row[1] for row in looks] == [str(look.n_cases) for look in result.record.looks]
    assert [row[3] for row in looks] == [f"{look.items:,}" for look in result.record.looks]
    comparison = result.comparison._repr_html_()
    assert comparison is not None and 'id="fig-sequential"' in comparison
