"""Labels CSVs never carry a live spreadsheet formula, and read back unchanged.

The attack: a case's prompt or expectation starts with ``=``, ``+``, ``-`` or ``@``
(``=HYPERLINK("http://127.0.0.1:9/?x="&A1,"click")``). ``evalkit judge sample`` writes it to a
CSV that people fill "in any spreadsheet", and the labelling page exports one too. Each writer
must put a ``'`` before such a cell; evalkit's readers (``judge calibrate``, the labels page)
must take it off again.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from evalkit.judge import write_label_template
from evalkit.report._labels import read_label_rows
from evalkit.results import LABEL_COLUMNS, read_labels_csv
from tests.conftest import evalkit_cli
from tests.report.test_item_browser import Opened

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "judged"

FORMULAS = [
    '=HYPERLINK("http://127.0.0.1:9/?x="&A1,"click")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
    "'=already quoted once",
]


def _rows() -> list[dict[str, str]]:
    with (FIXTURE / "labels.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[: len(FORMULAS)]
    for row, formula in zip(rows, FORMULAS, strict=True):
        row["prompt"] = formula
        row["expectation"] = formula + " (expectation)"
        row["answer"] = formula
    return rows


def _raw_cells(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _live(cell: str) -> bool:
    return cell[:1] in ("=", "+", "-", "@", "\t", "\r")


def test_the_template_neutralises_formulas_and_reads_back_unchanged(tmp_path: Path) -> None:
    rows = _rows()
    path = write_label_template(rows, tmp_path / "labels.csv")
    raw = _raw_cells(path)
    for cell in (row[c] for row in raw for c in LABEL_COLUMNS):
        assert not _live(cell), repr(cell)
    assert raw[0]["prompt"] == "'" + FORMULAS[0]
    assert raw[-1]["prompt"] == "''=already quoted once"  # one more ', so reading is exact
    back = read_labels_csv(path)
    for column in ("prompt", "expectation", "answer", "item_key", "case_id"):
        assert list(back[column]) == [row[column] for row in rows]
    assert list(read_label_rows(path)["prompt"]) == FORMULAS


def test_the_labels_page_shows_and_exports_them_safely(
    chromium: Browser,
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    shutil.copytree(FIXTURE / "run", work / "run", ignore=shutil.ignore_patterns("calibration"))
    rows = _rows()
    template = write_label_template(rows, work / "hostile.csv")
    made = evalkit_cli(
        "report", "run", "--runs-dir", ".", "--kind", "labels", "--labels", str(template),
        "-o", "page.html", cwd=work,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    opened = Opened(chromium, work / "page.html")
    page = opened.page
    shown = page.locator("tr.ek-label-row")
    assert shown.nth(0).locator("td.ek-l-prompt").inner_text() == FORMULAS[0]
    shown.nth(0).get_by_role("button", name="pass:").click()
    with page.expect_download() as caught:
        page.get_by_role("button", name="Export labels CSV").click()
    exported = tmp_path / "exported.csv"
    caught.value.save_as(exported)
    assert opened.requests == [] and opened.errors == []
    opened.context.close()
    raw = _raw_cells(exported)
    for cell in (row[c] for row in raw for c in ("prompt", "expectation", "answer")):
        assert not _live(cell), repr(cell)
    back = read_labels_csv(exported)
    # (HTML drops a newline that opens a <pre>, so the page cannot keep a leading "\r")
    kept = [i for i, r in enumerate(rows) if not r["prompt"].startswith("\r")]
    assert [back["prompt"][i] for i in kept] == [rows[i]["prompt"] for i in kept]
    assert [back["expectation"][i] for i in kept] == [rows[i]["expectation"] for i in kept]
    assert list(back["label"]) == ["pass"] + [""] * (len(rows) - 1)


@pytest.mark.parametrize("value", ["plain", "'quoted", "", "a=b", "-"])
def test_harmless_cells_are_left_alone(tmp_path: Path, value: str) -> None:
    rows = _rows()[:1]
    rows[0]["prompt"] = value
    path = write_label_template(rows, tmp_path / "l.csv")
    expected = "'-" if value == "-" else value
    assert _raw_cells(path)[0]["prompt"] == expected
    assert read_labels_csv(path)["prompt"][0] == value
