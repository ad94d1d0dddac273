"""Judged runs end to end with the simulated agent and the simulated judge."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.errors import ConfigError
from evalkit.judge import judge_run
from evalkit.results import load_manifest, read_scores
from evalkit.runner import RunConfig, run
from tests.conftest import evalkit_cli
from tests.judge.conftest import CASES_YAML, SUITE_YAML, write_suite


def _config(runs_dir: Path, run_id: str, **kw: object) -> RunConfig:
    return RunConfig(runs_dir=runs_dir, run_id=run_id, progress=False, concurrency=1,
                     trials=3, **kw)  # type: ignore[arg-type]


def test_a_run_grades_every_expectation_and_combines_by_the_rule(
    judged_suite: Path, runs_dir: Path
) -> None:
    result = run(judged_suite, _config(runs_dir, "a"))
    assert result.judge is not None
    df = evalkit.read_run(result.run_dir).set_index("item_key")
    scores = read_scores(result.run_dir)
    judged = scores[scores["component"].str.startswith("expectation:")]
    # one row per expectation per item, with the statement and the judge's evidence
    assert len(judged) == 6 * 2 + 6 * 1
    assert judged["detail"].str.len().gt(0).all()
    assert set(judged["expectation"]) == {
        "Polls a readiness check in a loop", "Bounds the wait with a deadline",
        "Checks the file in a loop"}
    assert (df["judge_provider"] == "simulated").all()
    assert (df["judge_model"] == "sim-judge-1").all()
    assert df["judge_prompt_hash"].nunique() == 1
    assert result.judge["statements"] == 18
    totals = scores[scores["component"] == "total"].set_index("item_key")
    for key, row in df.iterrows():
        verdicts = judged[judged["item_key"] == key]["passed"]
        assert row["judge_passed"] == verdicts.all()
        assert row["judge_score"] == pytest.approx(verdicts.mean())
        if row["case_id"] == "judged-only":  # no weighted scorers: the judge decides alone
            assert row["passed"] == row["judge_passed"]
            assert row["score"] == pytest.approx(row["judge_score"])
        else:
            assert row["passed"] == (totals.loc[key, "passed"] and row["judge_passed"])
            assert row["score"] == pytest.approx((totals.loc[key, "value"] + verdicts.mean()) / 2)
    manifest = load_manifest(result.run_dir).to_json()
    assert manifest["judge"]["provider"] == "simulated"
    assert manifest["judge"]["prompt_hash"] == df["judge_prompt_hash"].iloc[0]


def test_an_unchanged_rerun_costs_no_judge_call(judged_suite: Path, runs_dir: Path) -> None:
    first = run(judged_suite, _config(runs_dir, "first"))
    assert first.judge is not None and first.judge["calls"] > 0
    second = run(judged_suite, _config(runs_dir, "second"))
    assert second.judge is not None
    assert second.judge["calls"] == 0
    assert second.judge["cache_hits"] == second.judge["statements"] == 18
    df = evalkit.read_run(second.run_dir)
    assert (df["judge_calls"] == 0).all()
    a = evalkit.read_run(first.run_dir).set_index("item_key")
    b = df.set_index("item_key")
    pd.testing.assert_series_equal(a["passed"], b["passed"])


def test_editing_an_expectation_regrades_it_without_rerunning_the_agent(
    judged_suite: Path, runs_dir: Path
) -> None:
    run(judged_suite, _config(runs_dir, "before"))
    cases = judged_suite / "cases" / "cases.yaml"
    cases.write_text(cases.read_text().replace(
        "Bounds the wait with a deadline", "Gives up after a deadline"))
    after = run(judged_suite, _config(runs_dir, "after"))
    df = evalkit.read_run(after.run_dir)
    assert df["cache_hit"].all()  # the agent's outcomes came from the outcome cache
    assert after.judge is not None
    # only the edited statement is asked again, once per distinct answer of its case
    transcripts = evalkit.results.read_transcripts(after.run_dir)
    answers = {json.dumps(t["response"]["events"]) for key, t in transcripts.items()
               if ":wait-server:" in key}
    assert after.judge["calls"] == len(answers) > 0
    assert after.judge["cache_hits"] == 18 - len(answers)


def test_judge_run_regrades_into_a_new_run_sharing_the_agent_outcomes(
    judged_suite: Path, runs_dir: Path
) -> None:
    source = run(judged_suite, _config(runs_dir, "src"))
    regraded = judge_run("src", runs_dir=runs_dir, options={"error_rate": 0.5, "model": "j2"},
                         run_id="src-j2")
    assert regraded.judged_from == "src"
    assert regraded.judge.model == "j2"
    # a new judge model: nothing from the cache, each distinct question asked once
    assert source.judge is not None
    assert regraded.judge.calls == source.judge["calls"] > 0
    assert regraded.judge.calls + regraded.judge.cache_hits == 18
    a = evalkit.read_run(source.run_dir).set_index("item_key")
    b = evalkit.read_run(regraded.run_dir).set_index("item_key")
    for column in ("item_hash", "transcript_path", "inferred_skill", "input_tokens"):
        assert a[column].tolist() == b[column].tolist()
    assert (b["run_id"] == "src-j2").all()
    assert (b["judge_model"] == "j2").all()
    assert evalkit.results.read_transcripts(regraded.run_dir).keys() == (
        evalkit.results.read_transcripts(source.run_dir).keys())
    manifest = load_manifest(regraded.run_dir).to_json()
    assert manifest["judged_from"] == "src"
    assert manifest["judge"]["model"] == "j2"
    again = judge_run("src", runs_dir=runs_dir, options={"error_rate": 0.5, "model": "j2"},
                      run_id="src-j2-again")
    assert again.judge.calls == 0 and again.judge.cache_hits == 18


def test_an_unparsable_judge_is_retried_then_a_judge_error_never_a_fail(
    judged_suite: Path, runs_dir: Path
) -> None:
    result = run(judged_suite, _config(runs_dir, "bad", judge_options={"malformed_rate": 1.0},
                                       retries=2, retry_backoff_s=0.0))
    df = evalkit.read_run(result.run_dir)
    assert (df["status"] == "error").all()
    assert (df["error_class"] == "judge_error").all()
    assert df["error_message"].str.contains("not a JSON object").all()
    assert df["judge_passed"].isna().all()
    assert (df["judge_calls"] == 3).all()  # first try and two retries, then it gives up
    assert result.judge is not None and result.judge["errors"] == 12
    # a working judge re-grades the same agent outcomes: the rows are ok again
    fixed = judge_run("bad", runs_dir=runs_dir, options={"malformed_rate": 0.0}, run_id="fixed")
    assert fixed.judge.errors == 0
    assert (evalkit.read_run(fixed.run_dir)["status"] == "ok").all()


def test_expectations_without_a_judge_are_refused(tmp_path: Path, runs_dir: Path) -> None:
    suite = write_suite(tmp_path, SUITE_YAML.replace("judge:\n  provider: simulated\n", ""))
    with pytest.raises(ConfigError, match=r"case .judged-only. has expectations.*judge:"):
        run(suite, _config(runs_dir, "x"))
    # naming a judge on the command line is enough
    assert run(suite, _config(runs_dir, "y", judge_provider="simulated")).judge is not None


def test_cli_run_and_judge_with_json_and_clean_errors(
    judged_suite: Path, runs_dir: Path
) -> None:
    done = evalkit_cli("run", str(judged_suite), "--runs-dir", str(runs_dir), "--run-id", "c",
                       "--no-progress", "--trials", "1", "--judge-opt", "error_rate=0.3", "--json")
    code = done.returncode
    assert code == 0
    out = json.loads(done.stdout)
    assert out["judge"]["provider"] == "simulated" and out["judge"]["statements"] == 6
    assert {"run_id", "run_dir", "items", "ok", "errors", "pass_rate"} <= set(out)
    done = evalkit_cli("judge", "c", "--runs-dir", str(runs_dir), "--run-id", "c2",
                       "--judge-model", "sim-judge-2", "--json")
    code = done.returncode
    assert code == 0
    out = json.loads(done.stdout)
    assert out["judged_from"] == "c" and out["judge"]["model"] == "sim-judge-2"
    done = evalkit_cli("judge", "no-such-run", "--runs-dir", str(runs_dir))
    assert done.returncode == 2
    assert "run 'no-such-run' not found" in done.stderr
    done = evalkit_cli("judge", "c", "--runs-dir", str(runs_dir), "--judge-opt", "eror_rate=1")
    assert done.returncode == 2
    err = done.stderr
    assert "unknown option 'eror_rate'" in err and "Traceback" not in err
    done = evalkit_cli("judge", "c", "--runs-dir", str(runs_dir), "--run-id", "c2")
    assert done.returncode == 2
    assert "already exists" in done.stderr


def test_demo_expectations_hold_on_their_references() -> None:
    from evalkit.cases import load_suite
    from evalkit.judge import known_truth, statements
    from tests.conftest import DEMO

    suite = load_suite(DEMO)
    judged = [c for c in suite.cases if c.is_judged]
    assert len(judged) >= 3 and suite.spec.judge is not None
    for case in judged:
        assert case.reference
        for statement in statements(case):
            assert known_truth(statement, case, case.reference), (case.id, statement.text)


def test_cases_validate_checks_expectation_truths_on_the_reference(tmp_path: Path) -> None:
    from evalkit.cases import load_suite
    from evalkit.scorers import check_references

    suite_dir = write_suite(tmp_path, cases_yaml=CASES_YAML.replace(
        "truth: 'deadline'", "truth: 'exponential backoff'"))
    problems = check_references(load_suite(suite_dir))
    assert problems == [
        "wait-server: expectations[1] ('Bounds the wait with a deadline'): its truth regex does "
        "not hold on the reference; fix the regex or the reference"
    ]
    assert check_references(load_suite(write_suite(tmp_path / "ok"))) == []
