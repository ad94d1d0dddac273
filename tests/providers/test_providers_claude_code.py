"""claude_code: the real Claude Code CLI against a loopback Anthropic Messages server."""

from __future__ import annotations

import json
import re
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from evalkit.errors import ConfigError
from evalkit.providers import create_provider
from tests.providers.agent_harness import (
    ANTHROPIC_SECRET,
    CANONICAL,
    GOOD_WAIT_ANSWER,
    HANGING_COMMAND,
    LISTING,
    STALE,
    bodies,
    closed_port,
    installed_skill,
    processes_mentioning,
    run_items,
    set_budget,
    steps,
)
from tests.providers.loopback_server import (
    Hang,
    LoopbackModelServer,
    Malformed,
    Status,
    ToolCall,
    always,
    answer,
)


@pytest.fixture
def options(
    loopback: LoopbackModelServer, claude_bin: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
    return {
        "binary": claude_bin,
        "base_url": loopback.base_url,
        "cli_retries": 0,
        "state_dir": str(tmp_path / "state"),
    }


def test_plain_answer_is_scored_end_to_end_with_secrets_redacted(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
) -> None:
    loopback.script = answer(f"The sum is 5050. (debug: key {ANTHROPIC_SECRET})")
    rows, transcripts = run_items(tiny_suite, runs_dir, "claude_code", options,
                                  cases=("sum-numbers",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed), row.inferred_skill) == ("ok", True, "none")
    assert re.fullmatch(r"\d+\.\d+\.\d+", row.provider_version)
    assert (row.input_tokens, row.output_tokens, row.n_steps) == (120, 30, 1)
    assert row.cost_usd > 0 and row.latency_s > 0 and row.model
    requests = loopback.model_requests()
    assert len(requests) == 1 and requests[0].body["stream"] is True
    assert requests[0].headers["x-api-key"] == ANTHROPIC_SECRET  # the key reached the CLI
    response = transcripts[row.item_key]
    text = json.dumps(response)
    assert ANTHROPIC_SECRET not in text and "[REDACTED]" in text
    assert response["extra"]["cli_version"] == row.provider_version


@pytest.mark.parametrize("tool", ["Read", "Skill"])
def test_skill_load_round_trip_is_inferred(
    tool: str, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    options: dict[str, Any], tmp_path: Path,
) -> None:
    def load(request: object) -> ToolCall:
        if tool == "Skill":
            return ToolCall("Skill", {"skill": "waiting"})
        return ToolCall("Read", {"file_path": installed_skill(tmp_path / "state", "waiting")})

    loopback.script = steps(load, final=GOOD_WAIT_ANSWER)
    rows, transcripts = run_items(tiny_suite, runs_dir, "claude_code", options,
                                  cases=("wait-server",), conditions=("self-load",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed)) == ("ok", True)
    assert (row.inferred_skill, bool(row.skill_loaded)) == ("waiting", True)
    first, second = loopback.model_requests()
    assert LISTING in first.text and CANONICAL not in first.text  # listed, not loaded
    assert CANONICAL in bodies([second])  # the skill text reached the model after the call
    events = transcripts[row.item_key]["events"]
    calls = [e for e in events if e["kind"] == "tool_call"]
    assert calls[0]["name"] == tool and "skills/waiting/SKILL.md" in calls[0]["content"]


def test_conditions_reach_the_model_only_when_they_should(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
) -> None:
    seen = {}
    for condition in ("none", "self-load", "preloaded", "stale"):
        loopback.reset(answer(GOOD_WAIT_ANSWER))
        rows, _ = run_items(tiny_suite, runs_dir, "claude_code", options,
                            cases=("wait-server",), conditions=(condition,))
        assert rows.status.tolist() == ["ok"]
        text = bodies(loopback.model_requests())
        seen[condition] = (LISTING in text, CANONICAL in text, STALE in text)
    assert seen == {
        "none": (False, False, False),
        "self-load": (True, False, False),  # discoverable: name and description only
        "preloaded": (False, True, False),
        "stale": (False, False, True),
    }


def test_execution_case_real_tool_call_writes_the_file_in_an_allowlisted_env(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setenv("EVALKIT_TEST_CANARY", "canary-value-that-must-not-leak")
    loopback.script = steps(
        ToolCall("Bash", {"command": "env | sort", "description": "Show the environment"}),
        ToolCall("Bash", {"command": "wc -l < data.txt | tr -d ' ' > report.txt",
                          "description": "Count lines"}, call_id="call_2"),
        final="Counted the lines with wc -l and wrote report.txt.",
    )
    rows, transcripts = run_items(tiny_suite, runs_dir, "claude_code", options,
                                  cases=("make-report",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed), row.score) == ("ok", True, 1.0)  # verifier passed
    env_output = loopback.model_requests()[1].tool_results()[0]
    assert f"HOME={tmp_path / 'state'}" in env_output  # a private HOME per item
    assert "canary-value" not in env_output  # nothing of the caller's environment leaks in
    events = transcripts[row.item_key]["events"]
    assert any(e["kind"] == "tool_call" and "wc -l" in e["content"] for e in events)
    # the CLI's own key is in its commands' environment, but never in the stored transcript
    assert "ANTHROPIC_API_KEY=" in env_output and ANTHROPIC_SECRET not in json.dumps(events)


def test_scrubbed_commands_run_sandboxed_without_the_key(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
) -> None:
    if not (shutil.which("bwrap") and shutil.which("socat")):
        pytest.fail("bubblewrap/socat are missing: run scripts/install-agent-clis.sh",
                    pytrace=False)
    loopback.script = steps(
        ToolCall("Bash", {"command": "env | sort", "description": "Show the environment"}),
        ToolCall("Bash", {"command": "wc -l < data.txt | tr -d ' ' > report.txt",
                          "description": "Count lines"}, call_id="call_2"),
        final="Counted the lines with wc -l and wrote report.txt.",
    )
    rows, _ = run_items(tiny_suite, runs_dir, "claude_code",
                        {**options, "scrub_subprocess_env": True}, cases=("make-report",))
    assert (rows.status[0], bool(rows.passed[0])) == ("ok", True)
    env_output = loopback.model_requests()[1].tool_results()[0]
    assert "CLAUDECODE=1" in env_output and "ANTHROPIC_API_KEY" not in env_output


def test_max_turns_stops_the_agent_without_an_error(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
) -> None:
    # the model never stops calling tools
    loopback.script = always(ToolCall("Bash", {"command": "echo again", "description": "Echo"}))
    rows, transcripts = run_items(tiny_suite, runs_dir, "claude_code",
                                  {**options, "max_turns": 2}, cases=("make-report",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed)) == ("ok", False)  # a wrong answer, not an error
    assert transcripts[row.item_key]["extra"]["stop_reason"] == "error_max_turns"
    assert len(loopback.model_requests()) == 2


def test_server_error_is_retried_then_an_error_row(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
) -> None:
    loopback.script = always(Status(500))
    rows, _ = run_items(tiny_suite, runs_dir, "claude_code", options, cases=("sum-numbers",),
                        retries=2)
    row = rows.iloc[0]
    assert (row.status, row.error_class, bool(row.passed)) == ("error", "server_error", False)
    assert len(loopback.model_requests()) == 3  # one attempt plus two retries


def test_malformed_stream_is_an_error_row(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
) -> None:
    loopback.script = always(Malformed())
    rows, _ = run_items(tiny_suite, runs_dir, "claude_code", options, cases=("sum-numbers",),
                        retries=1)
    row = rows.iloc[0]
    assert (row.status, row.error_class) == ("error", "server_error")
    # per attempt: the stream, then Claude Code's own non-streaming retry
    assert [r.body["stream"] for r in loopback.model_requests()] == [True, False, True, False]


def test_a_cli_that_dies_before_any_output_is_a_retried_crash(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
) -> None:
    broken = {**options, "extra_args": "--definitely-not-a-flag"}
    rows, _ = run_items(tiny_suite, runs_dir, "claude_code", broken, cases=("sum-numbers",),
                        retries=1)
    row = rows.iloc[0]
    assert (row.status, row.error_class) == ("error", "agent_crashed")
    assert "unknown option" in row.error_message and loopback.model_requests() == []


def test_unreachable_server_is_a_connection_error(
    tiny_suite: Path, runs_dir: Path, options: dict[str, Any],
) -> None:
    closed = {**options, "base_url": f"http://127.0.0.1:{closed_port()}"}
    rows, _ = run_items(tiny_suite, runs_dir, "claude_code", closed, cases=("sum-numbers",))
    assert rows.error_class.tolist() == ["connection_error"]


@pytest.mark.parametrize("where", ["server", "tool"])
def test_hang_is_a_timeout_row_and_leaves_no_process(
    where: str, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    options: dict[str, Any], tmp_path: Path,
) -> None:
    if where == "server":
        case, script = "sum-numbers", always(Hang(60))
    else:  # the agent's own tool hangs: bash and sleep are children of the CLI
        case = "make-report"
        script = steps(ToolCall("Bash", {"command": HANGING_COMMAND, "description": "Wait"}),
                       final="done")
    set_budget(tiny_suite, case, timeout_s=5)
    loopback.script = script
    rows, _ = run_items(tiny_suite, runs_dir, "claude_code", options, cases=(case,))
    row = rows.iloc[0]
    assert (row.status, row.error_class) == ("timeout", "timeout")
    assert 5 <= row.latency_s < 15
    assert processes_mentioning(str(tmp_path / "state"), HANGING_COMMAND) == []


def test_the_cli_contacts_nothing_but_the_loopback_server(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
    tmp_path: Path,
) -> None:
    strace = shutil.which("strace")
    if strace is None:
        pytest.fail("strace is missing: run scripts/install-agent-clis.sh", pytrace=False)
    log = tmp_path / "connect.log"
    wrapper = tmp_path / "claude-traced"
    wrapper.write_text(
        f"#!/bin/sh\nexec {strace} -f -qq -e trace=connect,sendto,sendmsg -o {log} "
        f"{options['binary']} \"$@\"\n"
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    loopback.script = answer("The sum is 5050.")
    rows, _ = run_items(tiny_suite, runs_dir, "claude_code", {**options, "binary": str(wrapper)},
                        cases=("sum-numbers",))
    assert rows.status.tolist() == ["ok"]
    peers = set(re.findall(r"sa_family=AF_INET6?, [^}]*", log.read_text()))
    port = f"htons({loopback.port})"
    assert peers and all("127.0.0.1" in p or "::1" in p for p in peers), peers
    assert any(port in p for p in peers)
    assert len(loopback.model_requests()) == 1


def test_bad_settings_are_config_errors_naming_the_option(
    claude_bin: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
    with pytest.raises(ConfigError, match="unknown option 'modle'"):
        create_provider("claude_code", {"binary": claude_bin, "modle": "x"})
    with pytest.raises(ConfigError, match="option 'effort'"):
        create_provider("claude_code", {"binary": claude_bin, "effort": "huge"})
    with pytest.raises(ConfigError, match="install-agent-clis.sh"):
        create_provider("claude_code", {"binary": str(tmp_path / "no-such-claude")})
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        create_provider("claude_code", {"binary": claude_bin})


def test_outcome_settings_hold_what_changes_outcomes(
    claude_bin: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
    base = {"binary": claude_bin, "model": "m1", "base_url": "http://127.0.0.1:1"}
    provider = create_provider("claude_code", base)
    outcome = provider.outcome_settings()
    assert outcome["model"] == "m1" and outcome["base_url"] == "http://127.0.0.1:1"
    assert outcome["cli_version"] == provider.info().version
    assert "binary" not in outcome and "cli_retries" not in outcome
    runtime = create_provider("claude_code", {**base, "cli_retries": 5, "max_concurrency": 2})
    assert runtime.outcome_settings() == outcome
