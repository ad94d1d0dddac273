"""Failures that did not finish read as such, from the harness's own records, end to end.

An edit that avoids timeouts is not an edit that answers better. These tests import real logs
with the real CLI and read ``evalkit lift`` and ``evalkit compare`` (subprocesses): their cause
tables must say "did not finish: timeout 20 -> 8", never "agent_scorer failed 20 -> 8".

- ``inspect-timeouts/`` (scripts/make_inspect_timeouts_log.py, inspect-ai 0.3.285): a plugin
  A/B whose every failure is an HTTP timeout its scorer marked ``incomplete``;
- a Harbor pair of jobs built from the committed trials of ``harbor/`` (Harbor 0.26.0's own
  models): agent timeouts (``AgentTimeoutError``) beside wrong answers (reward 0).
"""

from __future__ import annotations

import copy
import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evalkit.interop._import_inspect import load_log
from evalkit.results import item_reasons, read_run, read_scores
from tests.conftest import ROOT, evalkit_cli

FIX = ROOT / "tests" / "fixtures" / "imports"
TIMEOUT_LOGS = FIX / "inspect-timeouts"
HARBOR = FIX / "harbor"
PLUGIN_URL = "http://localhost:9101"
NAMES = f"{PLUGIN_URL}=plugin,false=baseline"


def _incomplete_counts() -> Counter[str]:
    """Samples whose scorer marked its score incomplete, per task argument, read from the logs."""
    counts: Counter[str] = Counter()
    for path in sorted(TIMEOUT_LOGS.glob("*.eval")):
        log = load_log(path, use_inspect_ai=False)
        value = json.dumps(log["eval"]["task_args"]["plugin_url"])
        for sample in log["samples"]:
            score = sample["scores"]["agent_scorer"]
            counts[value] += bool(score["metadata"]["incomplete"])
    return counts


@pytest.fixture(scope="module")
def inspect_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Inspect A/B imported with its conditions named."""
    runs = tmp_path_factory.mktemp("inspect-timeouts") / "runs"
    done = evalkit_cli("import", TIMEOUT_LOGS, "--format", "inspect", "--run-id", "ab",
                       "--runs-dir", runs, "--condition-from", "task_arg:plugin_url",
                       "--condition-map", NAMES)
    assert done.returncode == 0, done.stderr
    return runs


def test_the_logs_hold_what_the_tables_must_show() -> None:
    """The fixture itself: 20 incomplete scores without the plugin, 8 with it, no other failure."""
    assert _incomplete_counts() == {"false": 20, json.dumps(PLUGIN_URL): 8}


def test_lift_says_the_plugin_avoided_timeouts_not_wrong_answers(inspect_runs: Path) -> None:
    done = evalkit_cli("lift", "ab", "--runs-dir", inspect_runs, "--roles", "baseline=A,plugin=B",
                       "--resamples", "500")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "plugin: did not finish: timeout 20 -> 8 (-12)" in text
    assert "plugin: answered wrong: 0 -> 0" in text
    assert "baseline: 20 failures: did not finish 20 (20 timeout); answered wrong 0" in text
    assert "agent_scorer failed" not in text
    data = json.loads(evalkit_cli("lift", "ab", "--runs-dir", inspect_runs, "--roles",
                                  "baseline=A,plugin=B", "--resamples", "500", "--json").stdout)
    assert [(r["condition"], r["outcome"], r["cause"], r["failures"])
            for r in data["failure_causes"]] == [
        ("baseline", "did not finish", "timeout", 20), ("plugin", "did not finish", "timeout", 8)]
    assert [(r["baseline_condition"], r["condition"], r["cause"], r["baseline"], r["candidate"])
            for r in data["failure_changes"]] == [("baseline", "plugin", "timeout", 20, 8)]


def test_compare_says_the_plugin_avoided_timeouts_not_wrong_answers(inspect_runs: Path) -> None:
    args = ("compare", "ab", "--conditions", "baseline,plugin", "--runs-dir", inspect_runs)
    done = evalkit_cli(*args)
    assert done.returncode == 0, done.stderr
    assert "did not finish: timeout 20 -> 8 (-12)" in done.stdout
    assert "answered wrong: 0 -> 0" in done.stdout
    assert "agent_scorer failed 20" not in done.stdout
    data = json.loads(evalkit_cli(*args, "--json").stdout)
    assert data["failure_changes"] == [{"outcome": "did not finish", "cause": "timeout",
                                        "baseline": 20, "candidate": 8, "change": -12}]
    # each case's own reasons name the timeout too
    causes = Counter()
    for case in data["cases"]:
        for side in ("baseline", "candidate"):
            causes.update((case["reasons"][side] or {}).get("causes", {}))
    assert set(causes) == {"timeout"} and sum(causes.values()) == 28


def test_the_scorers_explanation_is_the_reason_line(inspect_runs: Path) -> None:
    rows = read_run("ab", inspect_runs)
    reasons = item_reasons(rows, read_scores("ab", inspect_runs))
    failing = reasons[~rows["passed"].to_numpy()]
    assert len(failing) == 28 and set(failing["cause"]) == {"timeout"}
    explanation = "INCOMPLETE: HTTP timeout after 120 s waiting for the agent's answer"
    for line in failing["reason"]:
        assert line.startswith(f"timeout: agent_scorer: {explanation}")
        assert line.count(explanation) == 1  # said once, as the cause's detail
        assert "agent_scorer failed: target: 90" in line  # and the scorer's verdict follows


# ------------------------------------------------------------------------------ Harbor

#: (job, task, exception, reward) of each trial: without skills 6 agent timeouts and 2 wrong
#: answers, with them 2 timeouts and 2 wrong answers; the rest pass.
TRIALS = [
    *[("job-no-skills", f"task-{i:02d}", "AgentTimeoutError" if i < 6 else None,
       0.0 if i < 8 else 1.0) for i in range(10)],
    *[("job-with-skills", f"task-{i:02d}", "AgentTimeoutError" if i < 2 else None,
       0.0 if i < 4 else 1.0) for i in range(10)],
]


def _harbor_jobs(out: Path) -> Path:
    """Harbor trials copied from the committed ones, each given its task, exception and reward."""
    templates = {job: next(p for p in sorted((HARBOR / job).iterdir()) if p.is_dir())
                 for job in ("job-no-skills", "job-with-skills")}
    for number, (job, task, exception, reward) in enumerate(TRIALS):
        template = templates[job]
        result: dict[str, Any] = json.loads((template / "result.json").read_text())
        config: dict[str, Any] = json.loads((template / "config.json").read_text())
        name = f"{task}__{number:07x}"
        result.update(id=str(uuid.UUID(int=number + 1)), task_name=task, trial_name=name,
                      verifier_result={"rewards": {
            "reward": reward}}, started_at=f"2026-12-05T{8 + number % 10:02d}:00:00Z")
        result["config"]["trial_name"] = config["trial_name"] = name
        if exception is None:
            result["exception_info"] = None
        else:
            info = copy.deepcopy(result["exception_info"]) or {}
            info.update(exception_type=exception,
                        exception_message=f"Agent execution timed out after 900.0 seconds "
                        f"in trial {name}")
            result["exception_info"] = info
        folder = out / job / name
        (folder / "verifier").mkdir(parents=True)
        (folder / "result.json").write_text(json.dumps(result))
        (folder / "config.json").write_text(json.dumps(config))
        (folder / "verifier" / "test-stdout.txt").write_text(
            (template / "verifier" / "test-stdout.txt").read_text())
    return out


@pytest.mark.slow
def test_harbor_agent_timeouts_are_unfinished_items_apart_from_wrong_answers(
    tmp_path: Path,
) -> None:
    jobs, runs = _harbor_jobs(tmp_path / "jobs"), tmp_path / "runs"
    for job in ("job-no-skills", "job-with-skills"):
        assert template_has_an_exception_policy(HARBOR / job)
    done = evalkit_cli("import", jobs / "job-no-skills", jobs / "job-with-skills", "--format",
                       "harbor", "--run-id", "hb", "--runs-dir", runs)
    assert done.returncode == 0, done.stderr
    lift = evalkit_cli("lift", "hb", "--runs-dir", runs, "--resamples", "500")
    assert lift.returncode == 0, lift.stderr
    assert "none: 8 failures: did not finish 6 (6 timeout); answered wrong 2 (2 verifier " \
        "failed)" in lift.stdout
    assert "self-load: did not finish: timeout 6 -> 2 (-4)" in lift.stdout
    assert "self-load: answered wrong: verifier failed 2 -> 2 (+0)" in lift.stdout
    compare = evalkit_cli("compare", "hb", "--conditions", "none,self-load", "--runs-dir", runs,
                          "--json")
    changes = json.loads(compare.stdout)["failure_changes"]
    assert [(c["outcome"], c["cause"], c["baseline"], c["candidate"]) for c in changes] == [
        ("did not finish", "timeout", 6, 2), ("answered wrong", "verifier failed", 2, 2)]


def template_has_an_exception_policy(job: Path) -> bool:
    """The committed trials are Harbor's own: at least one holds an exception with its policy."""
    for result in job.glob("*/result.json"):
        info = json.loads(result.read_text()).get("exception_info")
        if info and "policy" in info:
            return True
    return job.name == "job-with-skills"  # its two trials ended cleanly
