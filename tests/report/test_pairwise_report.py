"""``evalkit report RUN --kind pairwise``: rendered from a stored comparison, read in Chromium.

The committed fixture ``tests/fixtures/pairwise/tiny`` is ``evalkit run tests/fixtures/suites/tiny
--lane prompt --conditions none,preloaded --trials 4`` followed by ``evalkit compare tiny
--conditions none,preloaded --pairwise`` (simulated agent and judge). The hostile test edits a
copy of its stored JSON: a flipped pair whose answer and case id carry markup.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from evalkit.errors import InputError
from evalkit.report import report, stored_pairwise
from tests.report.conftest import ROOT

# the module-scoped fixtures (seconds each) are built once, by one worker, for all its tests
pytestmark = pytest.mark.xdist_group("pairwise-report")

FIXTURE = ROOT / "tests" / "fixtures" / "pairwise"
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


@pytest.fixture(scope="module")
def hostile_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("pairwise-report")
    shutil.copytree(FIXTURE / "tiny", runs / "tiny")
    path = runs / "tiny" / "pairwise" / "none--vs--preloaded.json"
    data = json.loads(path.read_text())
    last = data["pairs"][-1]
    last.update(flipped=True, outcome=0.5, baseline_answer=HOSTILE,
                reason_candidate_first=HOSTILE, verdict_candidate_first="1")
    path.write_text(json.dumps(data))
    return runs


@pytest.fixture(scope="module")
def page(hostile_runs: Path) -> Path:
    out = hostile_runs / "pairwise.html"
    return report("tiny", kind="pairwise", runs_dir=hostile_runs, output=out).html_path


def test_the_page_shows_verdict_interval_bias_forest_and_pairs(page: Path) -> None:
    data = stored_pairwise(FIXTURE / "tiny")
    markup = page.read_text()
    win = data["win_probability"]
    assert f"ek-banner-{data['verdict']}" in markup
    assert f"{win['estimate']:.1%}" in markup and f"{win['ci_low']:.1%}" in markup
    assert "UNCALIBRATED JUDGE" in markup
    assert "first-position wins" in markup and "position consistency" in markup
    assert 'id="fig-pairwise-forest"' in markup
    assert markup.count('class="ek-pair ek-pairwise') == len(data["pairs"])


def test_answers_and_reasons_are_escaped(page: Path) -> None:
    markup = page.read_text()
    assert HOSTILE not in markup
    assert "&lt;script&gt;window.__pwned=2&lt;/script&gt;" in markup


def test_in_chromium_offline_flipped_pairs_first_and_nothing_runs(
    chromium: Browser, page: Path
) -> None:
    view = chromium.new_page(viewport={"width": 1280, "height": 900})
    requests: list[str] = []
    errors: list[str] = []
    view.on("request", lambda r: requests.append(r.url))
    view.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        view.goto(page.resolve().as_uri(), wait_until="load")
        assert view.locator("#verdict, .ek-banner").first.is_visible()
        image = view.locator("#fig-pairwise-forest img")
        assert image.evaluate("img => img.complete ? img.naturalWidth : 0") > 400
        first = view.locator("#pairs section.ek-pairwise").first
        assert "ek-flipped" in (first.get_attribute("class") or "")
        assert "flipped with the order" in first.inner_text()
        # the two answers sit side by side
        boxes = [b.bounding_box() for b in first.locator(".ek-sbs > div").all()]
        assert len(boxes) == 2 and boxes[0] and boxes[1]
        assert abs(boxes[0]["y"] - boxes[1]["y"]) < 5 and boxes[1]["x"] > boxes[0]["x"]
        assert view.evaluate("window.__pwned === undefined")
        assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
        assert errors == []
    finally:
        view.close()


def test_a_run_without_a_comparison_is_a_clear_error(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE / "tiny", tmp_path / "tiny", ignore=shutil.ignore_patterns("pairwise"))
    with pytest.raises(InputError, match="no stored pairwise comparison.*--pairwise"):
        stored_pairwise(tmp_path / "tiny")


def test_the_labels_page_offers_the_pairs_side_by_side(
    chromium: Browser, tmp_path: Path
) -> None:
    from evalkit.judge import sample_pairs

    runs = tmp_path / "runs"
    shutil.copytree(FIXTURE / "tiny", runs / "tiny")
    sheet = sample_pairs("tiny", n=5, output=tmp_path / "pairs.csv", runs_dir=runs)
    page = report("tiny", kind="labels", runs_dir=runs, output=tmp_path / "labels.html",
                  parameters={"labels": sheet.path}).html_path
    view = chromium.new_page(viewport={"width": 1400, "height": 900})
    try:
        view.goto(page.resolve().as_uri(), wait_until="load")
        row = view.locator("tr.ek-label-row").first
        one = row.locator("td.ek-l-response_1").bounding_box()
        two = row.locator("td.ek-l-response_2").bounding_box()
        assert one and two and two["x"] > one["x"] and abs(one["y"] - two["y"]) < 5
        assert [b.inner_text() for b in row.locator("button").all()] == ["1", "2", "tie"]
        row.locator("button", has_text="tie").click()
        assert "1 of 5 pairs labelled" in view.locator(".ek-labels-status").inner_text()
        with view.expect_download() as download:
            view.locator("button.ek-labels-export").click()
        exported = Path(download.value.path()).read_text()
        assert exported.splitlines()[0] == "pair_id,case_id,trial,task,response_1,response_2,label"
        assert ",tie" in exported
    finally:
        view.close()
