"""Per-case reasons (``evalkit.analysis._case_reasons``) read back from real runs.

The runs are the committed demo runs of the golden outputs (``evalkit run cases/demo
--trials 3`` with seeds 1 and 2, their scores included); every expected count and line is
computed from the runs with :func:`evalkit.results.item_reasons`, never written here by hand.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.analysis import side_line
from evalkit.analysis._case_reasons import case_reasons, causes_text
from evalkit.results import NO_REASONS, item_reasons, read_scores
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "fixtures" / "golden" / "runs"
UNITS = ["case_id", "condition", "provider"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    for name in ("demo-a", "demo-b"):
        shutil.copytree(GOLDEN / name, runs / name)
    return runs


def _with_reasons(rows: pd.DataFrame, scores: pd.DataFrame | None) -> pd.DataFrame:
    reasons = item_reasons(rows, scores).set_index(rows.index)
    return rows.join(reasons[["cause", "reason"]])


def test_each_case_counts_its_failures_by_the_cause_item_reasons_gives(runs: Path) -> None:
    rows = evalkit.read_run("demo-b", runs)
    scores = read_scores("demo-b", runs)
    table = case_reasons(rows, scores, UNITS)
    expected = _with_reasons(rows, scores)
    assert len(table) == len(rows.groupby(UNITS))
    with_failures = 0
    for record in table.to_dict("records"):
        mine = expected[(expected["case_id"] == record["case_id"])
                        & (expected["condition"] == record["condition"])
                        & (expected["provider"] == record["provider"])]
        failing = mine[~mine["passed"]]
        assert record["trials"] == len(mine)
        assert record["failing"] == len(failing)
        assert record["causes"] == failing["cause"].value_counts().to_dict()
        if failing.empty:
            assert record["example"] is None
            continue
        with_failures += 1
        # the example is a failing trial of the most frequent cause (ties: by name)
        counts = failing["cause"].value_counts()
        top = sorted(c for c, n in counts.items() if n == counts.max())[0]
        assert record["example"] in set(failing.loc[failing["cause"] == top, "reason"])
        assert record["example"] != NO_REASONS
    assert with_failures > 20


def test_without_scores_only_what_the_rows_say_is_a_reason(runs: Path) -> None:
    rows = evalkit.read_run("demo-b", runs)
    table = case_reasons(rows, None, UNITS)
    expected = _with_reasons(rows, None)
    failing = expected[~expected["passed"]]
    counted: dict[str, int] = {}
    for causes in table["causes"]:
        for cause, n in causes.items():
            counted[cause] = counted.get(cause, 0) + n
    assert counted == failing["cause"].value_counts().to_dict()
    # the rows alone tell a skill not loaded; every scored component's failure is unrecorded
    assert counted[NO_REASONS] > 0 and "skill not loaded" in counted
    assert not {"verifier failed", "missing expected pattern"} & set(counted)


def test_side_line_reads_a_side_in_words() -> None:
    record = {"trials": 3, "failing": 3, "causes": {"verifier failed": 2, "timeout": 1},
              "example": "verifier failed: exit 1"}
    assert side_line("candidate", record) == (
        "candidate 3/3 failing: verifier failed (2), timeout (1) — verifier failed: exit 1"
    )
    assert side_line("baseline", {**record, "failing": 0, "causes": {}, "example": None}) == (
        "baseline 0/3 failing"
    )
    assert side_line("x", {**record, "causes": {NO_REASONS: 3}, "example": NO_REASONS}) == (
        f"x 3/3 failing: {NO_REASONS} (3)"
    )
    assert side_line("x", None) == "x: no trial"
    many = {f"cause {i}": 5 - i for i in range(5)}
    assert causes_text(many) == "cause 0 (5), cause 1 (4), cause 2 (3), 3 other"


def test_compare_of_runs_gives_each_case_its_reasons(runs: Path) -> None:
    result = evalkit.compare("demo-a", "demo-b", runs_dir=runs, n_resamples=200)
    assert result.case_reasons is not None
    assert len(result.case_reasons) == len(result.cases)
    expected = {
        side: case_reasons(evalkit.read_run(run, runs), read_scores(run, runs), UNITS)
        for side, run in (("baseline", "demo-a"), ("candidate", "demo-b"))
    }
    for row, reasons in zip(result.cases.to_dict("records"), result.case_reasons, strict=True):
        for side, table in expected.items():
            mine = table[(table["case_id"] == row["case_id"])
                         & (table["condition"] == row["condition"])].iloc[0]
            assert reasons[side]["failing"] == mine["failing"]
            assert reasons[side]["causes"] == mine["causes"]
            assert reasons[side]["example"] == mine["example"]


def test_a_frame_read_from_a_run_finds_its_scores_a_bare_frame_does_not(runs: Path) -> None:
    a, b = evalkit.read_run("demo-a", runs), evalkit.read_run("demo-b", runs)
    from_runs = evalkit.compare("demo-a", "demo-b", runs_dir=runs, n_resamples=200)
    from_frames = evalkit.compare(a, b, n_resamples=200)
    assert from_frames.case_reasons == from_runs.case_reasons
    bare = evalkit.compare(a[["case_id", "condition", "provider", "trial", "passed"]],
                           b[["case_id", "condition", "provider", "trial", "passed"]],
                           n_resamples=200)
    assert bare.case_reasons is not None
    failing = [r["candidate"] for r in bare.case_reasons if r["candidate"]["failing"]]
    assert failing
    assert all(set(side["causes"]) == {NO_REASONS} for side in failing)
    assert all(side["example"] == NO_REASONS for side in failing)
