"""Model judges over real HTTP: Anthropic Messages and OpenAI (Chat, Responses) on loopback."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit.results import read_scores
from evalkit.runner import RunConfig, run
from tests.providers.agent_harness import ANTHROPIC_SECRET, OPENAI_SECRET, agent_binary
from tests.providers.loopback_server import LoopbackModelServer, Recorded, Reply, Text

_STATEMENT = re.compile(r"<statement>\\n(.*?)\\n</statement>")


@dataclass(frozen=True)
class Flavor:
    provider: str
    settings: dict[str, Any]
    key_env: str
    secret: str
    suffix: str


FLAVORS = [
    Flavor("anthropic", {}, "ANTHROPIC_API_KEY", ANTHROPIC_SECRET, ""),
    Flavor("openai_compat", {"api": "chat"}, "OPENAI_API_KEY", OPENAI_SECRET, "/v1"),
    Flavor("openai_compat", {"api": "responses"}, "OPENAI_API_KEY", OPENAI_SECRET, "/v1"),
]


@pytest.fixture(params=FLAVORS, ids=lambda f: f"{f.provider}-{f.settings.get('api', 'messages')}")
def flavor(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Flavor:
    chosen: Flavor = request.param
    monkeypatch.setenv(chosen.key_env, chosen.secret)
    return chosen


def statement_of(request: Recorded) -> str:
    match = _STATEMENT.search(request.text)
    assert match, "a judge request carries its statement"
    return match.group(1)


def verdict(request: Recorded) -> Reply:
    """Passes statements about loops, fails the others, with one line of evidence."""
    statement = statement_of(request)
    passed = "in a loop" in statement
    evidence = f"checked: {statement[:20]}"
    return Text(json.dumps({"passed": passed, "evidence": evidence}), 200, 20)


def config(runs_dir: Path, run_id: str, flavor: Flavor, server: LoopbackModelServer,
           **settings: Any) -> RunConfig:
    options = {"base_url": server.base_url + flavor.suffix, **flavor.settings,
               "input_cost_per_mtok": 3.0, "output_cost_per_mtok": 15.0, **settings}
    return RunConfig(runs_dir=runs_dir, run_id=run_id, progress=False, concurrency=2,
                     trials=2, judge_provider=flavor.provider, judge_model="judge-1",
                     judge_options=options, retries=2, retry_backoff_s=0.0)


def test_a_model_judge_grades_with_structured_verdicts_and_costs_apart(
    judged_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, flavor: Flavor
) -> None:
    loopback.reset(verdict)
    plain = run(judged_suite, RunConfig(runs_dir=runs_dir, run_id="plain", progress=False,
                                        trials=2))  # the suite's simulated judge
    result = run(judged_suite, config(runs_dir, "http", flavor, loopback))
    requests = loopback.model_requests()
    assert result.judge is not None
    assert result.judge["errors"] == 0
    assert len(requests) == result.judge["calls"] > 0
    scores = read_scores(result.run_dir)
    judged = scores[scores["component"].str.startswith("expectation:")]
    assert len(judged) == result.judge["statements"] == 4 * 2 + 4 * 1
    for _, row in judged.iterrows():
        assert row["passed"] == ("in a loop" in row["expectation"])
        assert row["detail"] == f"checked: {row['expectation'][:20]}"
    df = evalkit.read_run(result.run_dir)
    assert (df["judge_provider"] == flavor.provider).all()
    assert (df["judge_model"] == "judge-1").all()
    wait = df[df["case_id"] == "wait-server"]
    assert not wait["judge_passed"].any() and not wait["passed"].any()  # a deadline is missing
    only = df[df["case_id"] == "judged-only"]
    assert only["judge_passed"].all() and only["passed"].all()
    # judge cost: the judge's tokens at the judge's prices, apart from the agent's cost
    calls = df["judge_calls"].sum()
    assert df["judge_input_tokens"].sum() == 200 * calls
    assert df["judge_cost_usd"].sum() == pytest.approx(calls * (200 * 3.0 + 20 * 15.0) / 1e6)
    assert result.judge["cost_usd"] == pytest.approx(df["judge_cost_usd"].sum())
    agent_cost = evalkit.read_run(plain.run_dir).set_index("item_key")["cost_usd"]
    assert df.set_index("item_key")["cost_usd"].tolist() == agent_cost.tolist()
    for request in requests:
        assert request.tool_names() == []  # one plain turn: no tools offered to the judge
        assert "cond-okapi" not in request.text and "preloaded" not in request.text
        assert "SKILL.md" not in request.text


@pytest.mark.slow
def test_an_unchanged_rerun_sends_no_judge_request(
    judged_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, flavor: Flavor
) -> None:
    loopback.reset(verdict)
    first = run(judged_suite, config(runs_dir, "one", flavor, loopback))
    sent = len(loopback.model_requests())
    assert first.judge is not None and sent == first.judge["calls"] > 0
    second = run(judged_suite, config(runs_dir, "two", flavor, loopback))
    assert len(loopback.model_requests()) == sent  # nothing more reached the server
    assert second.judge is not None
    assert second.judge["calls"] == 0 and second.judge["cache_hits"] == 12
    # runtime settings (prices, concurrency) are not part of the verdict's address
    third = run(judged_suite, config(runs_dir, "three", flavor, loopback,
                                     input_cost_per_mtok=9.0, max_concurrency=1))
    assert third.judge is not None and third.judge["calls"] == 0
    # an outcome setting is: another temperature asks again
    fourth = run(judged_suite, config(runs_dir, "four", flavor, loopback, temperature=0.5))
    assert fourth.judge is not None and fourth.judge["calls"] == sent


def test_a_malformed_answer_is_retried(
    judged_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, flavor: Flavor
) -> None:
    seen: set[str] = set()
    lock = threading.Lock()

    def prose_first(request: Recorded) -> Reply:
        with lock:
            first = request.text not in seen
            seen.add(request.text)
        return Text("Looks good to me!") if first else verdict(request)

    loopback.reset(prose_first)
    result = run(judged_suite, config(runs_dir, "retry", flavor, loopback))
    assert result.judge is not None and result.judge["errors"] == 0
    assert len(loopback.model_requests()) == result.judge["calls"] == 2 * len(seen)
    df = evalkit.read_run(result.run_dir)
    assert (df["status"] == "ok").all()
    assert df[df["case_id"] == "judged-only"]["judge_passed"].all()


def test_a_judge_that_never_answers_a_verdict_is_a_judge_error(
    judged_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, flavor: Flavor
) -> None:
    loopback.reset(lambda request: Text("PASS"))
    result = run(judged_suite, config(runs_dir, "broken", flavor, loopback))
    df = evalkit.read_run(result.run_dir)
    assert (df["status"] == "error").all() and (df["error_class"] == "judge_error").all()
    assert df["passed"].eq(False).all() and df["judge_passed"].isna().all()
    assert df["judge_error"].str.contains("not a JSON object: 'PASS'").all()
    # each item's first question was tried three times (two retries), then the item stopped:
    # a failure is never cached, never a silent fail
    assert len(loopback.model_requests()) == 3 * len(df)
    assert (df["judge_calls"] == 3).all()


def test_secrets_in_a_judge_answer_are_redacted(
    judged_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, flavor: Flavor
) -> None:
    loopback.reset(lambda request: Text(json.dumps(
        {"passed": True, "evidence": f"the key is {flavor.secret}"})))
    result = run(judged_suite, config(runs_dir, "leak", flavor, loopback))
    scores = read_scores(result.run_dir)
    evidence = scores[scores["component"].str.startswith("expectation:")]["detail"]
    assert evidence.str.contains("[REDACTED]", regex=False).all()
    for path in [*runs_dir.rglob("*.parquet"), *runs_dir.rglob("*.json*")]:
        assert flavor.secret.encode() not in path.read_bytes(), path


def test_the_judge_never_sees_the_injected_skill_or_the_condition(
    judged_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A real API agent gets the skill injected; the same server then judges its answers."""
    from tests.judge.conftest import SKILL_MARKER

    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)

    def script(request: Recorded) -> Reply:
        if "<statement>" in request.text:
            return verdict(request)
        return Text("Poll in a loop: until curl -fsS localhost:8080/health; give up at a deadline.")

    loopback.reset(script)
    result = run(judged_suite, RunConfig(
        runs_dir=runs_dir, run_id="skill", progress=False, trials=1, backend="threading",
        provider="anthropic", provider_options={"base_url": loopback.base_url, "model": "agent-1"},
        conditions=("cond-okapi", "none"), judge_provider="anthropic", judge_model="judge-1",
        judge_options={"base_url": loopback.base_url}))
    requests = loopback.model_requests()
    agent = [r for r in requests if "<statement>" not in r.text]
    judge = [r for r in requests if "<statement>" in r.text]
    assert result.judge is not None and len(judge) == result.judge["calls"] > 0
    # the agent under the preloaded condition did get the skill text: the check can fail
    assert any(SKILL_MARKER in r.text for r in agent)
    transcripts = evalkit.results.read_transcripts(result.run_dir)
    assert any(SKILL_MARKER in json.dumps(t) for t in transcripts.values())
    for request in judge:
        assert SKILL_MARKER not in request.text
        assert "cond-okapi" not in request.text and "preloaded" not in request.text
    # identical answers under both conditions are one question to the judge: the condition is
    # not part of what it grades
    assert result.judge["calls"] == 3 and result.judge["cache_hits"] == 3


def test_claude_code_judges_through_the_real_cli(
    judged_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``claude -p`` (the pinned CLI) as the judge: its answers are parsed as strict verdicts."""
    binary = agent_binary("claude", "EVALKIT_CLAUDE_BIN")
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
    loopback.reset(verdict)
    options = {"binary": binary, "base_url": loopback.base_url, "cli_retries": 0,
               "state_dir": str(tmp_path / "state")}
    result = run(judged_suite, RunConfig(
        runs_dir=runs_dir, run_id="claude-judge", progress=False, concurrency=2, trials=1,
        judge_provider="claude_code", judge_model="judge-1", judge_options=options, retries=1,
        retry_backoff_s=0.0))
    assert result.judge is not None
    assert result.judge["provider"] == "claude_code" and result.judge["errors"] == 0
    assert result.judge["calls"] > 0
    scores = read_scores(result.run_dir)
    judged = scores[scores["component"].str.startswith("expectation:")]
    assert len(judged) > 0
    # the verdict follows the scripted rule, and the evidence is the CLI's one line
    expected = judged["expectation"].str.contains("in a loop")
    assert (judged["passed"] == expected).all()
    assert judged["detail"].str.startswith("checked: ").all()
