"""Offline, a suite whose expectations have no known truth still runs: they stay ungraded.

The simulated judge grades a statement only against a known truth (a ``truth`` regex or the
case's ``reference``). A statement without one is recorded as ungraded: the item neither passes
nor fails (status ``ungraded``), the run counts and shows it, ``compare`` leaves it out as
missing evidence and says so, and ``evalkit judge RUN --judge-provider ...`` grades it later
with a model judge (here a real HTTP judge on a loopback server) without rerunning the agent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalkit
from evalkit.results import read_scores
from evalkit.runner import RunConfig, run
from tests.conftest import evalkit_cli
from tests.judge.conftest import CASES_YAML, write_suite
from tests.judge.test_judge_http import statement_of, verdict
from tests.providers.agent_harness import ANTHROPIC_SECRET
from tests.providers.loopback_server import LoopbackModelServer

NO_TRUTH = (
    "  - id: no-truth\n    expected_skill: waiting\n    prompt: Anything about waiting?\n"
    "    expectations: [Waits for it in a loop]\n"
)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path, cases_yaml=CASES_YAML + NO_TRUTH)


def test_ungraded_items_run_are_counted_and_left_out(
    suite: Path, runs_dir: Path
) -> None:
    done = evalkit_cli("run", str(suite), "--runs-dir", str(runs_dir), "--run-id", "off",
                       "--no-progress", "--trials", "3")
    code = done.returncode
    assert code == 0
    out = done.stdout
    assert "6 items ungraded" in out and "evalkit judge off --judge-provider" in out
    df = evalkit.read_run(runs_dir / "off")
    ungraded = df[df["case_id"] == "no-truth"]
    assert (ungraded["status"] == "ungraded").all() and len(ungraded) == 6
    assert ungraded["score"].isna().all() and ungraded["judge_passed"].isna().all()
    # the other cases are graded as before
    assert (df.loc[df["case_id"] != "no-truth", "status"] == "ok").all()
    scores = read_scores(runs_dir / "off")
    rows = scores[scores["item_key"].isin(ungraded["item_key"])
                  & scores["component"].str.startswith("expectation:")]
    assert len(rows) == 6 and rows["passed"].isna().all()
    assert rows["detail"].str.contains("not graded").all()
    # --json counts them and leaves them out of the pass rate
    done = evalkit_cli("run", str(suite), "--runs-dir", str(runs_dir), "--run-id", "off2",
                       "--no-progress", "--trials", "3", "--json")
    code = done.returncode
    summary = json.loads(done.stdout)
    assert summary["ungraded"] == 6
    graded = df[df["status"] != "ungraded"]
    assert summary["pass_rate"] == pytest.approx(graded["passed"].mean())
    # compare: missing evidence, said so, and never a pass or a failure
    result = evalkit.compare(runs_dir / "off", conditions=("none", "cond-okapi"), n_resamples=500)
    assert result.ungraded_items == 6
    assert "missing evidence" in result.ungraded_note
    assert {c["case_id"] for c in result.to_dict()["cases"]} == {"wait-server", "judged-only"}
    assert result.to_dict()["ungraded_items"] == 6
    done = evalkit_cli("compare", "off", "--runs-dir", str(runs_dir), "--conditions",
                       "none,cond-okapi")
    code = done.returncode
    assert "ungraded: 6 item(s) left out as missing evidence" in done.stdout


def test_a_model_judge_grades_them_later_without_rerunning(
    suite: Path, runs_dir: Path, loopback: LoopbackModelServer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    run(suite, RunConfig(runs_dir=runs_dir, run_id="off", progress=False, trials=2))
    before = evalkit.read_run(runs_dir / "off").set_index("item_key")
    assert (before.loc[before["case_id"] == "no-truth", "status"] == "ungraded").all()
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
    loopback.reset(verdict)  # passes statements about loops
    done = evalkit_cli("judge", "off", "--runs-dir", str(runs_dir), "--run-id", "graded",
                       "--judge-provider", "anthropic", "--judge-model", "judge-1",
                       "--judge-opt", f"base_url={loopback.base_url}", "--json")
    code = done.returncode
    assert code == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["judge"]["statements_ungraded"] == 0 and out["judge"]["items_ungraded"] == 0
    after = evalkit.read_run(runs_dir / "graded").set_index("item_key")
    mine = after[after["case_id"] == "no-truth"]
    assert (mine["status"] == "ok").all() and mine["passed"].all()  # "in a loop": passed
    # the agent's outcomes are the same items, not a rerun
    for column in ("item_hash", "output_tokens", "latency_s"):
        assert after[column].equals(before[column])
    asked = {statement_of(r) for r in loopback.model_requests()}
    assert "Waits for it in a loop" in asked
