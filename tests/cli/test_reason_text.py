"""compare, flips and lift say why items failed, in their text and their JSON.

The runs are the committed demo runs of the golden outputs (``evalkit run cases/demo
--trials 3`` with seeds 1 and 2, their scores included); every expected reason is read back
from the runs with :func:`evalkit.results.item_reasons`, never written here by hand.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.results import NO_REASONS, describe_causes, failure_causes, item_reasons, read_scores
from tests.conftest import ROOT, evalkit_cli

GOLDEN = ROOT / "tests" / "fixtures" / "golden" / "runs"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    for name in ("demo-a", "demo-b"):
        shutil.copytree(GOLDEN / name, runs / name)
    return runs


def _reasons(runs: Path, run: str) -> pd.DataFrame:
    rows = evalkit.read_run(run, runs)
    return rows.join(item_reasons(rows, read_scores(run, runs)).set_index(rows.index)[
        ["cause", "reason"]
    ])


def test_compare_names_why_each_named_case_failed(runs: Path) -> None:
    done = evalkit_cli("compare", "demo-a", "demo-b", "--runs-dir", runs, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    candidate = _reasons(runs, "demo-b")
    checked = 0
    for case in data["cases"]:
        side = case["reasons"]["candidate"]
        mine = candidate[(candidate["case_id"] == case["case_id"])
                         & (candidate["condition"] == case["condition"])]
        assert side["trials"] == len(mine)
        failing = mine[~mine["passed"]]
        assert side["failing"] == len(failing)
        assert side["causes"] == failing["cause"].value_counts().to_dict()
        if len(failing):
            assert side["example"] in set(failing["reason"])
            checked += 1
    assert checked > 10
    text = evalkit_cli("compare", "demo-a", "demo-b", "--runs-dir", runs)
    assert text.returncode == 0
    named = [c for c in data["cases"] if c["verdict"] != "inconclusive"]
    for case in named:
        assert f"  {case['case_id']} ({case['condition']}" in text.stdout
        for side, label in (("baseline", "demo-a"), ("candidate", "demo-b")):
            reason = case["reasons"][side]
            assert f"{label} {reason['failing']}/{reason['trials']} failing" in text.stdout
            if reason["failing"]:
                assert reason["example"] in text.stdout


def test_flips_give_the_causes_of_each_unstable_case(runs: Path) -> None:
    done = evalkit_cli("flips", "demo-b", "--runs-dir", runs, "--json")
    data = json.loads(done.stdout)
    reasons = _reasons(runs, "demo-b")
    unstable = [r for r in data["by_case"] if r["flips"]]
    assert unstable
    for row in unstable:
        failing = reasons[(reasons["case_id"] == row["case_id"])
                          & (reasons["condition"] == row["condition"]) & ~reasons["passed"]]
        assert row["example"] in set(failing["reason"])
        counts = failing["cause"].value_counts()
        most = sorted(c for c, n in counts.items() if n == counts.max())[0]
        assert row["causes"].startswith(f"{most} ({counts.max()})")
    text = evalkit_cli("flips", "demo-b", "--runs-dir", runs, "--top", "3")
    first = sorted(unstable, key=lambda r: -r["estimate"])[0]
    assert f"failing: {first['causes']} — " in text.stdout


def test_lift_says_what_the_failures_are_made_of(runs: Path) -> None:
    done = evalkit_cli("lift", "demo-b", "--runs-dir", runs, "--json", "--resamples", "500")
    data = json.loads(done.stdout)
    rows = evalkit.read_run("demo-b", runs)
    expected = failure_causes(rows, read_scores("demo-b", runs), by=["provider", "condition"])
    assert data["failure_causes"] == [
        {**r, "failures": int(r["failures"]), "share": pytest.approx(r["share"])}
        for r in expected.to_dict("records")
    ]
    assert sum(r["failures"] for r in data["failure_causes"]) == int((~rows["passed"]).sum())
    text = evalkit_cli("lift", "demo-b", "--runs-dir", runs, "--resamples", "500")
    assert "what the failures are made of" in text.stdout
    for line in describe_causes(expected, by=["condition"]):
        assert line in text.stdout


def test_a_bare_table_says_no_reasons_were_recorded(runs: Path, tmp_path: Path) -> None:
    table = pd.DataFrame({
        "case_id": [f"c{i}" for i in range(6)] * 2,
        "condition": ["none"] * 6 + ["preloaded"] * 6,
        "provider": ["model-a", "model-b"] * 6,
        "passed": [False, True, False, False, True, False, True, True, False, True, True, True],
    })
    source = tmp_path / "bare.csv"
    table.to_csv(source, index=False)
    done = evalkit_cli("import", source, "--format", "csv", "--run-id", "bare",
                       "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    data = json.loads(evalkit_cli("compare", "bare", "--conditions", "none,preloaded",
                                  "--runs-dir", runs, "--json").stdout)
    failing = [c["reasons"]["baseline"] for c in data["cases"]
               if c["reasons"]["baseline"]["failing"]]
    assert failing and all(side["example"] == NO_REASONS for side in failing)
    lift = json.loads(evalkit_cli("lift", "bare", "--runs-dir", runs, "--json",
                                  "--resamples", "200").stdout)
    assert {r["cause"] for r in lift["failure_causes"]} == {NO_REASONS}
    assert {r["provider"] for r in lift["failure_causes"]} == {"model-a", "model-b"}
    why = evalkit.explain("bare", "c0", runs_dir=runs)
    assert set(why.trials["reason"]) == {NO_REASONS}
