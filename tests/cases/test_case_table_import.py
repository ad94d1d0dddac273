"""``evalkit cases import TABLE``: prompt-lane cases from CSV/JSONL, validated like suite files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from evalkit.cases import TableColumns, import_case_table, load_suite
from evalkit.errors import InputError, SuiteError
from evalkit.results import read_run
from tests.conftest import ROOT, evalkit_cli

CSV_TEXT = """id,question,skill,must,split
tidy-loop,"Fix this loop: for f in $(ls *.txt); do rm $f; done",safe-shell,"""\
+ '''"rm
""\\$f""",dev
monad,What is a monad in one paragraph?,,,holdout
flake,A test fails one run in ten on CI. What now?,flaky-test-triage,"[""rerun"", ""seed""]",dev
'''


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    target = tmp_path / "demo"
    shutil.copytree(ROOT / "cases" / "demo", target)
    return target


def test_csv_rows_become_cases_in_a_suite_that_validates_and_runs(
    suite: Path, tmp_path: Path
) -> None:
    table = tmp_path / "questions.csv"
    table.write_text(CSV_TEXT)
    proc = evalkit_cli(
        "cases", "import", str(table), "-o", str(suite), "--prompt-col", "question",
        "--id-col", "id", "--expected-skill-col", "skill", "--pattern-col", "must",
        "--split-col", "split", "--json",
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    written = Path(summary["output"])
    assert written == suite / "cases" / "questions.yaml"
    assert summary["cases"] == 3
    assert summary["by_category"] == {"trigger": 2, "should-not-trigger": 1}
    cases = {c["id"]: c for c in yaml.safe_load(written.read_text())["cases"]}
    assert cases["tidy-loop"]["expected_patterns"] == ["rm", '"\\$f"']
    assert cases["flake"]["expected_patterns"] == ["rerun", "seed"]
    assert cases["monad"]["expected_skill"] == "none"
    assert cases["monad"]["split"] == "holdout"
    loaded = {c.id: c for c in load_suite(suite).cases}
    assert loaded["tidy-loop"].prompt.startswith("Fix this loop")
    runs = tmp_path / "runs"
    proc = evalkit_cli(
        "run", str(suite), "--case", "tidy-loop", "--case", "monad", "--case", "flake",
        "--trials", "1", "--conditions", "none,preloaded", "--run-id", "imported",
        "--runs-dir", str(runs), "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr
    results = read_run("imported", runs)
    assert sorted(set(results.case_id)) == ["flake", "monad", "tidy-loop"]
    assert len(results) == 6


def test_every_bad_row_is_named_by_line_and_column(suite: Path, tmp_path: Path) -> None:
    table = tmp_path / "bad.jsonl"
    rows = [
        {"q": "Quote this variable safely", "skill": "safe-shel"},
        {"q": "", "skill": None},
        {"q": "Why is my test order-dependent?", "skill": "flaky-test-triage", "re": ["(x"]},
        {"q": "Same id twice", "id": "dup"},
        {"q": "Same id twice again", "id": "dup"},
    ]
    table.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    columns = TableColumns(prompt="q", expected_skill="skill", pattern="re", id="id")
    with pytest.raises(SuiteError) as info:
        import_case_table(table, suite, columns)
    messages = [str(p) for p in info.value.problems]
    assert any(
        m.startswith(f"{table}:1: column 'skill'") and "did you mean 'safe-shell'" in m
        for m in messages
    ), messages
    assert any(m.startswith(f"{table}:2: column 'q'") and "is empty" in m for m in messages)
    assert any(m.startswith(f"{table}:3: column 're'") and "(x" in m for m in messages)
    assert any(m.startswith(f"{table}:5:") and "repeats line 4" in m for m in messages)
    assert not (suite / "cases" / "bad.yaml").exists()


def test_cli_errors_exit_2_without_traceback(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("prompt,skil\nhello there,safe-shell\n")
    proc = evalkit_cli(
        "cases", "import", str(table), "-o", str(tmp_path / "out.yaml"), "--prompt-col",
        "prompt", "--expected-skill-col", "skill",
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "no column 'skill' (given by --expected-skill-col)" in proc.stderr
    assert "did you mean 'skil'" in proc.stderr


def test_existing_case_file_is_not_overwritten(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("prompt\nhello there\n")
    out = tmp_path / "out.yaml"
    out.write_text("keep me")
    with pytest.raises(InputError, match="exists; choose another -o or pass --force"):
        import_case_table(table, out, TableColumns(prompt="prompt"))
    assert out.read_text() == "keep me"
    done = import_case_table(table, out, TableColumns(prompt="prompt"), overwrite=True)
    assert done.cases == 1
    assert yaml.safe_load(out.read_text())["cases"][0]["id"] == "t-2"
