"""The labelling page (``evalkit report RUN --kind labels``), driven in a real Chromium.

Opened from ``file://`` with every other request refused: a click marks a statement pass or
fail, the export downloads a CSV (captured), and that CSV calibrates the judge through
``evalkit judge calibrate`` — the judge's verdicts never appear on the page.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from evalkit.results import read_scores
from tests.conftest import evalkit_cli
from tests.report.test_item_browser import Opened

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "judged"


@pytest.fixture(scope="module")
def labelled_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the judged fixture run, without its stored calibration."""
    work = tmp_path_factory.mktemp("labels")
    shutil.copytree(FIXTURE / "run", work / "run", ignore=shutil.ignore_patterns("calibration"))
    return work


def test_label_in_the_browser_export_and_calibrate(chromium: Browser, labelled_run: Path,
                                                   tmp_path: Path) -> None:
    work = labelled_run
    made = evalkit_cli("report", "run", "--runs-dir", ".", "--kind", "labels", "-o", "page.html",
                    cwd=work)
    assert made.returncode == 0, made.stderr
    assert "sampled 12 of 12 judged statements" in made.stderr
    page_html = (work / "page.html").read_text()
    scores = read_scores(work / "run")
    judged = scores[scores["component"].str.startswith("expectation:")]
    for evidence in judged["detail"]:
        assert evidence not in page_html, "the judge's evidence must not be on the page"
    assert "script-src 'sha256-" in page_html and "unsafe-inline'" not in page_html.split(
        "script-src")[1].split(";")[0]

    opened = Opened(chromium, work / "page.html")
    page = opened.page
    rows = page.locator("tr.ek-label-row")
    assert rows.count() == 12
    assert page.locator(".ek-labels-status").inner_text() == "0 of 12 statements labelled"
    # label every statement as its truth would be: pass when the answer polls with `until`
    # (statement 1 of wait-server and judged-only) or names a deadline (statement 2)
    decided = {}
    for index in range(12):
        row = rows.nth(index)
        statement = row.locator("td.ek-l-expectation").inner_text()
        answer = row.locator("td.ek-l-answer").inner_text()
        holds = ("deadline" in answer) if "deadline" in statement else ("until" in answer)
        row.get_by_role("button", name=f"{'pass' if holds else 'fail'}:").click()
        decided[row.locator("td.ek-l-item_key").inner_text(), statement] = holds
    assert page.locator(".ek-labels-status").inner_text() == "12 of 12 statements labelled"
    # a second click on the pressed button takes the label back
    first = rows.nth(0)
    pressed = first.locator("button[aria-pressed='true']")
    label = pressed.inner_text()
    pressed.click()
    assert page.locator(".ek-labels-status").inner_text() == "11 of 12 statements labelled"
    first.get_by_role("button", name=f"{label}:").click()

    with page.expect_download() as caught:
        page.get_by_role("button", name="Export labels CSV").click()
    download = caught.value
    assert download.suggested_filename == "run-labels.csv"
    exported = tmp_path / "exported.csv"
    download.save_as(exported)
    assert opened.requests == [] and opened.errors == []
    opened.context.close()

    with exported.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        got = list(reader)
    assert reader.fieldnames == ["item_key", "case_id", "condition", "trial", "component",
                                 "expectation", "prompt", "answer", "label"]
    assert {(r["item_key"], r["expectation"]): r["label"] == "pass" for r in got} == decided

    calibrated = evalkit_cli("judge", "calibrate", "run", "--labels", str(exported),
                          "--runs-dir", ".", "--json", cwd=work)
    assert calibrated.returncode == 0, calibrated.stderr
    result = json.loads(calibrated.stdout)
    assert result["n"] == 12 and result["unmatched"] == 0
    # the labels are the truth, so the judge's disagreements are exactly its simulated errors
    verdicts = {(k, e): bool(p) for k, e, p in
                zip(judged["item_key"], judged["expectation"], judged["passed"], strict=True)}
    wrong = sum(verdicts[key] != holds for key, holds in decided.items())
    assert len(result["disagreements"]) == wrong > 0
    assert (work / "run" / "calibration").is_dir()


def test_a_labels_file_is_shown_with_its_labels(chromium: Browser, labelled_run: Path) -> None:
    work = labelled_run
    made = evalkit_cli("report", "run", "--runs-dir", ".", "--kind", "labels", "--labels",
                    str(FIXTURE / "labelled.csv"), "-o", "given.html", cwd=work)
    assert made.returncode == 0, made.stderr
    opened = Opened(chromium, work / "given.html")
    assert opened.page.locator(".ek-labels-status").inner_text() == "12 of 12 statements labelled"
    assert opened.page.locator("button[aria-pressed='true']").count() == 12
    opened.context.close()
    missing = evalkit_cli("report", "run", "--runs-dir", ".", "--kind", "labels", "--labels",
                       "nope.csv", "-o", "x.html", cwd=work)
    assert missing.returncode == 2 and "--labels nope.csv: file not found" in missing.stderr
    assert "Traceback" not in missing.stderr


HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>, "quoted"'


def test_hostile_text_stays_text_and_survives_the_export(
    chromium: Browser, labelled_run: Path, tmp_path: Path
) -> None:
    work = labelled_run
    template = tmp_path / "hostile.csv"
    with (FIXTURE / "labels.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:2]
    rows[0]["answer"] = HOSTILE + "\nsecond line"
    rows[1]["prompt"] = HOSTILE
    with template.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    made = evalkit_cli("report", "run", "--runs-dir", ".", "--kind", "labels", "--labels",
                    str(template), "-o", "hostile.html", cwd=work)
    assert made.returncode == 0, made.stderr
    opened = Opened(chromium, work / "hostile.html")
    page = opened.page
    assert page.evaluate("window.__pwned") is None
    assert page.locator("tr.ek-label-row img").count() == 0
    assert HOSTILE in page.locator("tr.ek-label-row").nth(0).locator("td.ek-l-answer").inner_text()
    page.locator("tr.ek-label-row").nth(0).get_by_role("button", name="fail:").click()
    with page.expect_download() as caught:
        page.get_by_role("button", name="Export labels CSV").click()
    exported = tmp_path / "out.csv"
    caught.value.save_as(exported)
    assert page.evaluate("window.__pwned") is None
    assert opened.requests == [] and opened.errors == []
    opened.context.close()
    with exported.open(newline="", encoding="utf-8") as fh:
        got = list(csv.DictReader(fh))
    assert got[0]["answer"] == HOSTILE + "\nsecond line"
    assert got[1]["prompt"] == HOSTILE
    assert [r["label"] for r in got] == ["fail", ""]
