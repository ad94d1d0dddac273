"""Imported runs carry their source's own reasons: why each item passed or failed.

Every format is imported with the real CLI (``evalkit import ... --json``, exit 0), then
:func:`evalkit.results.item_reasons` must give, for a failing item, the reason the source
itself recorded: an Inspect AI scorer's explanation, error or limit; the last lines of a
Harbor verifier's output and its reward against the threshold; a skill-creator grader's
evidence; a promptfoo assertion's reason; a CSV's ``reason`` column. A bare table without
one reads "no reasons recorded".

Fixtures (tests/fixtures/imports/) come from the real tools: ``inspect-reasons/reasons.eval``
from inspect-ai 0.3.285 (scripts/make_inspect_reasons_log.py), ``harbor/`` from Harbor
0.26.0's own models (scripts/make_harbor_jobs.py --tasks 1 --trials 2 --agents 1 --seed 11),
the Inspect and promptfoo logs of test_import.py; ``skill-creator-workspace/`` follows
skill-creator's schemas.md, ``tables-reasons/results.csv`` evalkit's own table format.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalkit.results import NO_REASONS, cause_outcome, item_reasons, read_run, read_scores
from tests.conftest import ROOT, evalkit_cli

FIX = ROOT / "tests" / "fixtures" / "imports"
HARBOR = FIX / "harbor"
INSPECT_REASONS = FIX / "inspect-reasons" / "reasons.eval"
SECRET = "sk-proj-AAAAbbbbCCCCdddd1234"


def _import(runs: Path, run_id: str, fmt: str, *paths: Path | str, extra: tuple[str, ...] = ()
            ) -> pd.DataFrame:
    """Import with the CLI (must exit 0), then the rows with their reasons beside them."""
    done = evalkit_cli("import", *paths, "--format", fmt, "--run-id", run_id,
                       "--runs-dir", runs, "--json", *extra)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["run_id"] == run_id
    rows = read_run(run_id, runs)
    reasons = item_reasons(rows, read_scores(run_id, runs))
    assert list(reasons["item_key"]) == list(rows["item_key"].astype(str))
    return rows.assign(**{c: reasons[c].to_numpy() for c in ("cause", "reason",
                                                            "reasons_recorded")})


# ------------------------------------------------------------------------------ Inspect AI


def test_inspect_scorer_explanation_error_and_limit_are_the_reasons(tmp_path: Path) -> None:
    rows = _import(tmp_path, "ins", "inspect", INSPECT_REASONS).set_index("case_id")
    wrong = rows.loc["graded-wrong"]
    assert not wrong["passed"] and wrong["cause"] == "line_count failed"
    assert wrong["reason"] == ("line_count failed: counted 41 lines but the file has 42: the "
                               "header line was skipped (target: 42)")
    crashed = rows.loc["crashed"]
    assert crashed["status"] == "error" and crashed["error_class"] == "RuntimeError"
    # Inspect keeps the exception's repr; the class is a column, the message is the text
    assert crashed["error_message"] == "sandbox unavailable: could not start the task container"
    assert crashed["cause"] == "error: RuntimeError"
    assert crashed["reason"].endswith("sandbox unavailable: could not start the task container")
    capped = rows.loc["token-capped"]
    assert capped["status"] == "ok" and not capped["passed"]  # scored after the limit
    # the limit is what happened: the sample did not finish, and its cause says which limit
    assert capped["cause"] == "token limit"
    assert capped["reason"].startswith(
        "token limit: the sample hit its token limit (1000) before it finished")
    assert "line_count failed: counted 4 lines" in capped["reason"]
    assert cause_outcome(capped["cause"]) == cause_outcome(crashed["cause"]) == "did not finish"
    assert cause_outcome(wrong["cause"]) == "answered wrong"
    assert rows.loc["right", "reason"] == "passed on line_count 42 lines, as expected"
    assert rows["reasons_recorded"].all()


def test_inspect_capitals_logs_name_the_wrong_answer_and_the_target(tmp_path: Path) -> None:
    rows = _import(tmp_path, "caps", "inspect", FIX / "inspect",
                   extra=("--condition-from", "task_arg:skill"))
    australia = rows[(rows["case_id"] == "cap-australia") & (rows["condition"] == "none")]
    assert len(australia) == 3 and not australia["passed"].any()
    assert set(australia["reason"]) == {
        "includes failed: Sydney (target: Canberra) · strict failed: Sydney (target: Canberra)"
    }
    outage = rows[rows["status"] == "error"]
    assert len(outage) == 1
    assert outage["reason"].iloc[0].startswith("error: RuntimeError: ")
    assert "simulated provider outage while answering 'peru'" in outage["reason"].iloc[0]
    assert not rows["error_message"].dropna().str.startswith("RuntimeError(").any()


# ---------------------------------------------------------------------------------- Harbor


def _harbor_expected() -> pd.DataFrame:
    expected = pd.DataFrame(json.loads((HARBOR / "expected.json").read_text()))
    expected["started_at"] = pd.to_datetime(expected["started_at"], utc=True)
    return expected


def test_harbor_reward_threshold_and_verifier_output_are_the_reason(tmp_path: Path) -> None:
    rows = _import(tmp_path, "hb", "harbor", HARBOR / "job-no-skills", HARBOR / "job-with-skills")
    merged = rows.merge(_harbor_expected(), on="started_at", validate="one_to_one")
    assert len(merged) == 4
    for _, trial in merged.iterrows():
        last = trial["verifier_last_line"].strip("= ")  # the rule around pytest's summary goes
        assert trial["reason"].endswith(last), trial["reason"]
        if trial["reward"] == 0.0:
            assert trial["cause"] == "verifier failed"
            assert trial["reason"].startswith("verifier failed: reward 0.00 < 1.00")
            assert ("FAILED ../tests/test_outputs.py::test_output - AssertionError: task-00: "
                    "/app/out.txt holds '41', expected '42'") in trial["reason"]
        else:
            assert trial["reason"].startswith("passed on verifier reward 1.00 >= 1.00: ")
            assert "2 passed in 0.08s" in trial["reason"]
        graded_failure = trial["exception"] == "NonZeroAgentExitCodeError"
        assert ("agent ended with NonZeroAgentExitCodeError" in trial["reason"]) == graded_failure
    scores = read_scores("hb", tmp_path)
    assert set(scores["component"]) == {"verifier"}
    assert sorted(scores["value"]) == sorted(merged["reward"])


def test_harbor_threshold_is_the_one_imported_with(tmp_path: Path) -> None:
    rows = _import(tmp_path, "hb", "harbor", HARBOR / "job-no-skills",
                   extra=("--pass-threshold", "0.5"))
    assert set(rows["cause"]) == {"verifier failed"}
    assert rows["reason"].str.startswith("verifier failed: reward 0.00 < 0.50").all()


def _trial_dirs(root: Path) -> list[Path]:
    """The trial directories under a job (or a folder of jobs): those with a config.json."""
    found = sorted(p.parent for p in root.rglob("config.json"))
    assert found, root
    return found


def test_harbor_trial_without_verifier_output_still_gives_the_reward(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    shutil.copytree(HARBOR, jobs)
    for trial in _trial_dirs(jobs):
        shutil.rmtree(trial / "verifier")
    rows = _import(tmp_path / "runs", "hb", "harbor", jobs / "job-no-skills")
    plain = rows[rows["error_class"].isna()]
    assert plain["reason"].tolist() == ["verifier failed: reward 0.00 < 1.00"]


def test_harbor_verifier_output_is_untrusted_text(tmp_path: Path) -> None:
    """Terminal escapes go, secrets are redacted, a huge output is read from its end only."""
    jobs = tmp_path / "jobs"
    shutil.copytree(HARBOR, jobs)
    noise = "".join(f"line {i} of a very chatty build log\n" for i in range(60_000))
    hostile = (noise + f"\x1b[31mE   assert token == 'ok'\x1b[0m (token was {SECRET})\x07\n"
               "\x1b[1m1 failed in 9.9s\x1b[0m\n")
    for trial in _trial_dirs(jobs / "job-no-skills"):
        (trial / "verifier" / "test-stdout.txt").write_text(hostile)
    rows = _import(tmp_path / "runs", "hb", "harbor", jobs / "job-no-skills")
    for reason in rows["reason"]:
        assert "\x1b" not in reason and "\x07" not in reason and SECRET not in reason
        assert reason.endswith("E assert token == 'ok' (token was [REDACTED]) | 1 failed in 9.9s")
    stored = read_scores("hb", tmp_path / "runs")["detail"]
    assert not stored.str.contains(SECRET, regex=False).any()
    assert stored.str.len().max() < 500


def test_harbor_error_row_keeps_the_verifier_output_it_has(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    shutil.copytree(HARBOR, jobs)
    trial = _trial_dirs(jobs / "job-no-skills")[0]
    result = json.loads((trial / "result.json").read_text())
    result["verifier_result"] = None  # the verifier ran but wrote no reward
    (trial / "result.json").write_text(json.dumps(result))
    rows = _import(tmp_path / "runs", "hb", "harbor", jobs / "job-no-skills")
    broken = rows[rows["error_class"] == "NoVerifierResult"]
    assert len(broken) == 1
    assert broken["reason"].iloc[0].startswith("error: NoVerifierResult: ")
    assert "the verifier recorded no reward; its output: " in broken["reason"].iloc[0]
    assert broken["reason"].iloc[0].endswith("1 failed, 1 passed in 0.11s")


# --------------------------------------------------------------------------- skill-creator


def test_skill_creator_benchmark_failures_read_the_graders_evidence(tmp_path: Path) -> None:
    source = FIX / "skill-creator" / "benchmark.json"
    rows = _import(tmp_path, "sc", "skill-creator", source)
    configurations = {"without_skill": "none", "with_skill": "preloaded"}
    checked = 0
    for run in json.loads(source.read_text())["runs"]:
        failed = [e for e in run["expectations"] if not e["passed"]]
        item = rows[(rows["case_id"] == str(run["eval_id"]))
                    & (rows["condition"] == configurations.get(run["configuration"],
                                                               run["configuration"]))
                    & (rows["trial"] == run["run_number"] - 1)]
        assert len(item) == 1
        reason = item["reason"].iloc[0]
        if failed:
            assert item["cause"].iloc[0] == "judged expectation failed"
            assert reason.startswith("judged expectation failed: ")
            for expectation in failed:
                assert f"{expectation['text']!r}: {expectation['evidence']}" in reason
            checked += 1
        else:
            assert reason.startswith("passed on expectation:1 ")
    assert checked >= 3


def test_skill_creator_workspace_grading_evidence_is_the_reason(tmp_path: Path) -> None:
    rows = _import(tmp_path, "ws", "skill-creator", FIX / "skill-creator-workspace")
    rows = rows.set_index("condition")
    assert rows.loc["none", "reason"] == (
        "judged expectation failed: 'The TIN is entered in the SSN boxes': The SSN boxes are "
        "empty; the TIN was typed as text over the signature line"
    )
    assert rows.loc["preloaded", "reason"].startswith(
        "passed on expectation:1 'The output PDF has the name field filled': Page 1, field "
        "'Name' reads 'Ada Lovelace'"
    )


# -------------------------------------------------------------------------------- promptfoo


def test_promptfoo_assertion_reasons_and_errors(tmp_path: Path) -> None:
    source = FIX / "promptfoo" / "results.json"
    rows = _import(tmp_path, "pf", "promptfoo", source)
    raw: list[dict[str, Any]] = json.loads(source.read_text())["results"]["results"]
    graded_failures = set()
    for result in raw:
        if result["success"] or result.get("failureReason") == 2:
            continue
        seen: Counter[str] = Counter()
        parts = []
        for part in result["gradingResult"]["componentResults"]:
            name = part["assertion"].get("metric") or part["assertion"]["type"]
            seen[name] += 1  # a repeated assertion is numbered: contains, contains#2
            if not part["pass"]:
                label = name if seen[name] == 1 else f"{name}#{seen[name]}"
                parts.append(f"{label} failed: {part['reason']}")
        graded_failures.add(" · ".join(parts))
    failing = rows[~rows["passed"] & (rows["status"] == "ok")]
    assert len(failing) > 0 and set(failing["reason"]) == graded_failures
    assert 'contains failed: Expected output to contain "Paris"' in graded_failures
    errors = rows[rows["status"] == "error"]
    assert len(errors) > 0
    assert errors["reason"].str.contains("simulated provider outage", regex=False).all()


# ------------------------------------------------------------------------------- CSV/JSONL


def test_csv_reason_and_error_columns_are_the_reasons(tmp_path: Path) -> None:
    rows = _import(tmp_path, "tab", "csv", FIX / "tables-reasons" / "results.csv")
    rows = rows.set_index(["case_id", "condition", "trial"])
    assert rows.loc[("port-config", "none", 0), "reason"] == (
        "grader failed: config/app.json sets server.port to 3000, expected 8080"
    )
    assert rows.loc[("port-config", "none", 1), "reason"] == (
        "passed on grader server.port is 8080 and the service answers on it"
    )
    assert rows.loc[("port-config", "preloaded", 1), "reason"] == (
        "timeout: AgentTimeout: the agent ran past its 600 s budget"
    )
    assert rows.loc[("log-rotate", "none", 0), "cause"] == "error: RateLimited"
    assert rows.loc[("log-rotate", "none", 0), "reason"].endswith(
        "429 from the model API after 3 retries")
    # a row of the table without a reason says so; the others keep theirs
    assert rows.loc[("log-rotate", "preloaded", 0), "reason"] == NO_REASONS
    assert not rows.loc[("log-rotate", "preloaded", 0), "reasons_recorded"]


@pytest.mark.parametrize("name, fmt", [("results.csv", "csv"), ("results.jsonl", "jsonl"),
                                       ("minimal.csv", "csv")])
def test_a_bare_table_says_no_reasons_recorded(tmp_path: Path, name: str, fmt: str) -> None:
    rows = _import(tmp_path, "bare", fmt, FIX / "tables" / name)
    assert (~rows["passed"]).any()
    assert set(rows["reason"]) == {NO_REASONS} and set(rows["cause"]) == {NO_REASONS}
    assert not rows["reasons_recorded"].any()
    assert read_scores("bare", tmp_path).empty


def test_a_table_reason_is_cleaned_and_redacted_before_it_is_stored(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("case_id,condition,passed,reason,status,error_class,error_message\n"
                     f'a,none,false,"\x1b[31mleaked {SECRET}\x1b[0m",ok,,\n'
                     f"b,none,false,,error,AuthError,bad key {SECRET}\n")
    rows = _import(tmp_path / "runs", "t", "csv", table).set_index("case_id")
    assert rows.loc["a", "reason"] == "grader failed: leaked [REDACTED]"
    assert SECRET not in rows.loc["b", "error_message"]
    stored = read_scores("t", tmp_path / "runs")
    assert stored["detail"].tolist() == ["leaked [REDACTED]"]
