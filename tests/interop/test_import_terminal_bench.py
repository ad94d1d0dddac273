"""``evalkit import --format terminal-bench`` against Terminal-Bench 1.0 run directories.

The fixture (``tests/fixtures/imports/terminal-bench-1``, written by
``scripts/make_terminal_bench_run.py`` from the published ``RunMetadata``/``BenchmarkResults``/
``TrialResults`` field lists) holds two runs of 5 tasks x 3 attempts with resolved and
unresolved trials, agent timeouts the tests graded (resolved or not) and one they did not, a
test timeout, a parse error, an unknown agent error and a graded context-window failure.
``expected.json`` lists what each trial holds.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalkit.results import item_reasons, read_run, read_scores
from tests.conftest import evalkit_cli

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "imports" / "terminal-bench-1"
RUNS = ("no-skills", "with-skills")


def _expected() -> list[dict[str, Any]]:
    return json.loads((FIXTURE / "expected.json").read_text())


def _import(runs_dir: Path, *extra: str, run_id: str = "tb") -> pd.DataFrame:
    result = evalkit_cli(
        "import", *(FIXTURE / r for r in RUNS), "--format", "terminal-bench", "--run-id",
        run_id, "--runs-dir", runs_dir, "--json", *extra,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["format"] == "terminal-bench"
    assert summary["items"] == len(_expected())
    return read_run(run_id, runs_dir)


def _by_trial(rows: pd.DataFrame) -> dict[tuple[str, str, int], pd.Series]:
    return {(r.condition, r.case_id, int(r.trial)): r for r in rows.itertuples()}


def test_rows_reproduce_every_trial(tmp_path: Path) -> None:
    rows = _import(tmp_path)
    expected = _expected()
    assert set(rows["case_id"]) == {e["task_id"] for e in expected}
    assert set(rows["condition"]) == set(RUNS)
    assert set(rows["provider"]) == {"terminus/anthropic/claude-sonnet-4-20250514"}
    trials = _by_trial(rows)
    for e in expected:
        row = trials[(e["run"], e["task_id"], e["attempt"] - 1)]
        assert row.input_tokens == e["total_input_tokens"]
        assert row.output_tokens == e["total_output_tokens"]
        assert row.passed == bool(e["is_resolved"])  # graded policy: the leaderboard's count
        if e["is_resolved"] is None:
            status = "timeout" if e["failure_mode"].endswith("timeout") else "error"
            assert (row.status, row.error_class) == (status, e["failure_mode"])
        else:
            assert row.status == "ok"
            mode = None if e["failure_mode"] in ("none", "unset") else e["failure_mode"]
            assert (None if pd.isna(row.error_class) else row.error_class) == mode
            tests = e["parser_results"]
            share = sum(v == "passed" for v in tests.values()) / len(tests)
            assert row.score == pytest.approx(share)
        assert row.latency_s > 0
    for run in RUNS:
        resolved = sum(bool(e["is_resolved"]) for e in expected if e["run"] == run)
        assert int(rows.loc[rows["condition"] == run, "passed"].sum()) == resolved


@pytest.mark.parametrize("policy", ["failed", "error"])
def test_timeout_policy_decides_graded_timeouts(tmp_path: Path, policy: str) -> None:
    rows = _import(tmp_path, "--timeout-policy", policy)
    trials = _by_trial(rows)
    graded_timeouts = [
        e for e in _expected()
        if e["failure_mode"] == "agent_timeout" and e["is_resolved"] is not None
    ]
    assert {e["is_resolved"] for e in graded_timeouts} == {True, False}
    for e in graded_timeouts:
        row = trials[(e["run"], e["task_id"], e["attempt"] - 1)]
        assert (row.status, row.passed, row.error_class) == (
            "timeout" if policy == "failed" else "error", False, "agent_timeout"
        )
    resolved = sum(bool(e["is_resolved"]) for e in _expected())
    lost = sum(bool(e["is_resolved"]) for e in graded_timeouts)
    assert int(rows["passed"].sum()) == resolved - lost


def test_reasons_name_the_failed_tests(tmp_path: Path) -> None:
    rows = _import(tmp_path)
    reasons = item_reasons(rows, read_scores("tb", tmp_path)).set_index("item_key")["reason"]
    trials = _by_trial(rows)
    for e in _expected():
        row = trials[(e["run"], e["task_id"], e["attempt"] - 1)]
        reason = reasons[row.item_key]
        if e["is_resolved"] is False:
            failed = [n for n, s in e["parser_results"].items() if s == "failed"]
            assert "failed tests: " + ", ".join(failed) in reason
            assert "AssertionError: expected 42, found 41" in reason  # from the test pane
        elif e["is_resolved"] is None:
            assert e["failure_mode"] in reason


def test_run_file_and_trial_files_are_one_source(tmp_path: Path) -> None:
    """Per-trial files alone give the same rows; both together count each trial once."""
    copy = tmp_path / "no-skills"
    shutil.copytree(FIXTURE / "no-skills", copy)
    (copy / "results.json").unlink()
    result = evalkit_cli(
        "import", copy, "--format", "terminal-bench", "--run-id", "trials-only",
        "--runs-dir", tmp_path / "runs", "--json",
    )
    assert result.returncode == 0, result.stderr
    only_trials = read_run("trials-only", tmp_path / "runs")
    both = _import(tmp_path / "runs", run_id="both")
    both = both[both["condition"] == "no-skills"]
    columns = ["case_id", "trial", "status", "passed", "score", "input_tokens"]
    assert only_trials.sort_values(columns)[columns].reset_index(drop=True).equals(
        both.sort_values(columns)[columns].reset_index(drop=True)
    )


def test_harbor_format_names_terminal_bench(tmp_path: Path) -> None:
    result = evalkit_cli(
        "import", FIXTURE / "no-skills", "--format", "harbor", "--run-id", "h",
        "--runs-dir", tmp_path,
    )
    assert result.returncode == 2
    assert "Terminal-Bench 1.0" in result.stderr
    assert "--format terminal-bench" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "h").exists()


def _broken_run(tmp_path: Path, count: int) -> Path:
    run = tmp_path / "broken"
    run.mkdir()
    data = json.loads((FIXTURE / "no-skills" / "results.json").read_text())
    good = data["results"][0]
    data["results"] = [good] + [
        {**good, "id": f"bad-{i}", "trial_name": f"t{i}.1-of-1.broken",
         "total_input_tokens": -i - 1}
        for i in range(count)
    ]
    (run / "results.json").write_text(json.dumps(data))
    return run


def test_refusal_names_every_bad_trial_up_to_a_cap(tmp_path: Path) -> None:
    run = _broken_run(tmp_path, 25)
    result = evalkit_cli(
        "import", run, "--format", "terminal-bench", "--run-id", "x", "--runs-dir", tmp_path,
    )
    assert result.returncode == 2
    assert "25 of 26 Terminal-Bench trial(s)" in result.stderr
    named = [line for line in result.stderr.splitlines() if "total_input_tokens" in line]
    assert len(named) == 20
    assert "(trial t0.1-of-1.broken)" in named[0] and "(trial t19.1-of-1.broken)" in named[-1]
    assert "... and 5 more" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"task_id": None}, "task_id"),
        ({"trial_started_at": "yesterday at noon"}, "trial_started_at"),
        ({"total_output_tokens": 10**30}, "total_output_tokens"),
        ({"parser_results": ["test_a"]}, "parser_results"),
        ({"failure_mode": 3}, "failure_mode"),
        ({"task_id": ""}, "task_id"),
        ({"trial_name": "../../elsewhere"}, "trial_name"),
        ({"total_input_tokens": float("nan")}, "total_input_tokens"),
        ({"agent_ended_at": "99999-01-01T00:00:00"}, "agent_ended_at"),
    ],
)
def test_bad_trial_fields_exit_2_naming_file_and_field(
    tmp_path: Path, change: dict[str, Any], field: str
) -> None:
    trial_file = next((FIXTURE / "no-skills").glob("task-00/*/results.json"))
    data = {**json.loads(trial_file.read_text()), **change}
    data = {k: v for k, v in data.items() if v is not None or k != "task_id"}
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps(data))
    result = evalkit_cli(
        "import", bad, "--format", "terminal-bench", "--run-id", "x", "--runs-dir", tmp_path,
    )
    assert result.returncode == 2
    assert str(bad) in result.stderr and field in result.stderr
    assert "Traceback" not in result.stderr


def test_non_json_and_foreign_files_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "results.json"
    bad.write_text("{not json")
    result = evalkit_cli(
        "import", bad, "--format", "terminal-bench", "--run-id", "x", "--runs-dir", tmp_path,
    )
    assert result.returncode == 2 and str(bad) in result.stderr
    assert "not valid JSON" in result.stderr
    bad.write_text(json.dumps({"rows": []}))
    result = evalkit_cli(
        "import", bad, "--format", "terminal-bench", "--run-id", "x", "--runs-dir", tmp_path,
    )
    assert result.returncode == 2 and "not a Terminal-Bench 1.0 result" in result.stderr


def test_timeout_policy_applies_to_terminal_bench_only(tmp_path: Path) -> None:
    result = evalkit_cli(
        "import", ROOT / "tests/fixtures/imports/tables/results.csv", "--format", "csv",
        "--run-id", "x", "--runs-dir", tmp_path, "--timeout-policy", "failed",
    )
    assert result.returncode == 2
    assert "--timeout-policy applies to harbor, terminal-bench imports" in result.stderr


def test_graded_timeouts_are_announced(tmp_path: Path) -> None:
    result = evalkit_cli(
        "import", FIXTURE / "no-skills", "--format", "terminal-bench", "--run-id", "tb",
        "--runs-dir", tmp_path,
    )
    assert result.returncode == 0, result.stderr
    graded = Counter(
        e["run"] for e in _expected()
        if e["failure_mode"] == "agent_timeout" and e["is_resolved"] is not None
    )["no-skills"]
    assert f"{graded} trial(s) timed out and were still graded" in result.stderr
