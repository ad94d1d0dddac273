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
from playwright.sync_api import Browser

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
    # at 3 trials a side no case of the demo runs gets a verdict of its own, so the text
    # names none: the text of named cases is tested on an import below


def test_compare_text_gives_each_named_case_its_reason_line(tmp_path: Path) -> None:
    rows = [
        {"case_id": f"c{c}", "condition": cond, "trial": t, "passed": cond == "preloaded",
         "reason": "" if cond == "preloaded" else f"verifier failed: exit {c}, trial {t}"}
        for c in range(6) for cond in ("none", "preloaded") for t in range(5)
    ]
    source = tmp_path / "reasons.csv"
    pd.DataFrame(rows).to_csv(source, index=False)
    runs = tmp_path / "runs"
    assert evalkit_cli("import", source, "--format", "csv", "--run-id", "r",
                       "--runs-dir", runs).returncode == 0
    text = evalkit_cli("compare", "r", "--conditions", "none,preloaded", "--correction",
                       "none", "--runs-dir", runs).stdout
    reasons = _reasons(runs, "r")
    assert "improved cases: c0, c1, c2, c3, c4, c5" in text
    for case in range(6):
        failing = reasons[(reasons["case_id"] == f"c{case}") & ~reasons["passed"]]
        cause = failing["cause"].iloc[0]
        start = text.index(f"  c{case} (preloaded vs none):\n    none 5/5 failing: {cause} (5) — ")
        line = text[start:].splitlines()[1]
        assert line.split(" — ", 1)[1] in set(failing["reason"])
        assert text[start:].splitlines()[2] == "    preloaded 0/5 failing"


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


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two new runs of the demo suite (2 trials, no cache, seeds 1 and 2), scores included."""
    runs = tmp_path_factory.mktemp("fresh")
    for seed, run_id in ((1, "a"), (2, "b")):
        done = evalkit_cli("run", ROOT / "cases" / "demo", "--trials", "2", "--no-cache",
                           "--seed", str(seed), "--run-id", run_id, "--runs-dir", runs)
        assert done.returncode == 0, done.stderr
    return runs


@pytest.mark.slow
def test_new_runs_give_their_reasons_in_compare_flips_and_lift(fresh: Path) -> None:
    reasons = _reasons(fresh, "b")
    failing = reasons[~reasons["passed"]]
    real = set(failing["reason"]) - {NO_REASONS}
    assert real
    compared = json.loads(evalkit_cli("compare", "a", "b", "--runs-dir", fresh, "--json",
                                      "--resamples", "500").stdout)
    examples = {c["reasons"]["candidate"]["example"] for c in compared["cases"]} - {None}
    assert examples and examples <= real
    assert sum(c["reasons"]["candidate"]["failing"] for c in compared["cases"]) == len(failing)
    flipped = json.loads(evalkit_cli("flips", "a", "b", "--runs-dir", fresh, "--json").stdout)
    both = real | set(_reasons(fresh, "a").query("not passed")["reason"])
    unstable = [r for r in flipped["by_case"] if r["flips"]]
    assert unstable and all(r["example"] in both for r in unstable)
    text = evalkit_cli("flips", "a", "b", "--runs-dir", fresh, "--top", "2").stdout
    top = sorted(unstable, key=lambda r: -r["estimate"])[:2]
    assert any(f"failing: {r['causes']} — {r['example']}" in text for r in top)
    lifted = json.loads(evalkit_cli("lift", "b", "--runs-dir", fresh, "--json",
                                    "--resamples", "300").stdout)
    causes = {(r["condition"], r["cause"]): r["failures"] for r in lifted["failure_causes"]}
    assert causes == failing.groupby(["condition", "cause"]).size().to_dict()
    lift_text = evalkit_cli("lift", "b", "--runs-dir", fresh, "--resamples", "300").stdout
    expected = failure_causes(evalkit.read_run("b", fresh), read_scores("b", fresh))
    assert "what the failures are made of" in lift_text
    assert all(f"  {line}" in lift_text for line in describe_causes(expected))


def test_a_bare_import_says_once_that_no_reasons_were_recorded(tmp_path: Path) -> None:
    rows = [
        {"case_id": f"c{c}", "condition": cond, "trial": t,
         "passed": (cond == "preloaded") if c < 6 else t % 2 == 0}
        for c in range(12) for cond in ("none", "preloaded") for t in range(5)
    ]
    source = tmp_path / "bare.csv"
    pd.DataFrame(rows).to_csv(source, index=False)
    runs = tmp_path / "runs"
    assert evalkit_cli("import", source, "--format", "csv", "--run-id", "bare",
                       "--runs-dir", runs).returncode == 0
    text = evalkit_cli("compare", "bare", "--conditions", "none,preloaded", "--correction",
                       "none", "--runs-dir", runs).stdout
    assert "improved cases: c0, c1, c2, c3, c4, c5" in text
    assert text.count(f"none 5/5 failing: {NO_REASONS} (5)") == 6
    assert "preloaded 0/5 failing" in text
    flips = evalkit_cli("flips", "bare", "--runs-dir", runs, "--top", "3").stdout
    assert "failing:" not in flips
    assert flips.count(NO_REASONS) == 1
    assert f"why: {NO_REASONS} for the failing trials of 3 case(s) listed" in flips


def test_rich_displays_show_the_reasons_as_text(chromium: Browser, tmp_path: Path) -> None:
    hostile = "<script>window.__pwned=1</script> verifier said <img src=x onerror=alert(1)>"
    rows = [
        {"case_id": f"c{c}", "condition": cond, "provider": provider, "trial": t,
         "passed": cond == "preloaded" and t > 0,
         "reason": "" if cond == "preloaded" and t > 0 else f"{hostile} #{c}"}
        for c in range(4) for cond in ("none", "preloaded") for provider in ("p", "q")
        for t in range(3)
    ]
    source = tmp_path / "hostile.csv"
    pd.DataFrame(rows).to_csv(source, index=False)
    runs = tmp_path / "runs"
    done = evalkit_cli("import", source, "--format", "csv", "--run-id", "h", "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    example = item_reasons(evalkit.read_run("h", runs), read_scores("h", runs))["reason"][0]
    assert "<script>" in example  # what the run recorded, shown as text below
    results = {
        "compare": evalkit.compare("h", conditions=("none", "preloaded"), runs_dir=runs,
                                   n_resamples=200),
        "flips": evalkit.flips("h", runs_dir=runs),
        "lift": evalkit.lift("h", runs_dir=runs, n_resamples=200),
    }
    for name, result in results.items():
        path = tmp_path / f"{name}.html"
        path.write_text(f"<!doctype html><meta charset='utf-8'><body>{result._repr_html_()}",
                        encoding="utf-8")
        page = chromium.new_page()
        try:
            page.goto(path.resolve().as_uri(), wait_until="load")
            shown = page.inner_text("body")
            assert page.evaluate("window.__pwned") is None
            assert page.locator("body script, body img[onerror]").count() == 0
        finally:
            page.close()
        if name == "lift":
            assert "What the failures are made of" in shown
            lines = describe_causes(failure_causes(
                evalkit.read_run("h", runs), read_scores("h", runs), by=["provider", "condition"]
            ), by=["provider", "condition"])
            assert len(lines) == 4  # a line per provider and condition
            assert all(line in shown for line in lines)
        else:
            assert "<script>window.__pwned=1</script> verifier said" in shown, name
