"""codex: the real Codex CLI against a loopback OpenAI Responses server."""

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
    CANONICAL,
    GOOD_WAIT_ANSWER,
    HANGING_COMMAND,
    LISTING,
    OPENAI_SECRET,
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
    Recorded,
    Status,
    ToolCall,
    always,
    answer,
)

MODEL = "gpt-5.5"  # a slug Codex has metadata for


@pytest.fixture
def options(
    loopback: LoopbackModelServer, codex_bin: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    return {
        "binary": codex_bin,
        "base_url": f"{loopback.base_url}/v1",
        "model": MODEL,
        "cli_retries": 0,
        "state_dir": str(tmp_path / "state"),
    }


def shell(command: str, call_id: str = "call_1") -> ToolCall:
    return ToolCall("exec_command", {"cmd": command}, call_id=call_id)


def test_plain_answer_is_scored_end_to_end_with_secrets_redacted(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
) -> None:
    loopback.script = answer(f"The sum is 5050. (debug: key {OPENAI_SECRET})")
    rows, transcripts = run_items(tiny_suite, runs_dir, "codex", options, cases=("sum-numbers",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed), row.inferred_skill) == ("ok", True, "none")
    assert re.fullmatch(r"\d+\.\d+\.\d+", row.provider_version)
    assert (row.model, row.input_tokens, row.output_tokens, row.n_steps) == (MODEL, 120, 30, 1)
    requests = loopback.model_requests()
    assert len(requests) == 1 and requests[0].body["model"] == MODEL
    assert requests[0].headers["authorization"] == f"Bearer {OPENAI_SECRET}"
    text = json.dumps(transcripts[row.item_key])
    assert OPENAI_SECRET not in text and "[REDACTED]" in text


def test_skill_read_round_trip_is_inferred(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
    tmp_path: Path,
) -> None:
    def read(request: Recorded) -> ToolCall:
        return shell(f"cat {installed_skill(tmp_path / 'state', 'waiting')}")

    loopback.script = steps(read, final=GOOD_WAIT_ANSWER)
    rows, transcripts = run_items(tiny_suite, runs_dir, "codex", options,
                                  cases=("wait-server",), conditions=("self-load",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed)) == ("ok", True)
    assert (row.inferred_skill, bool(row.skill_loaded)) == ("waiting", True)
    first, second = loopback.model_requests()
    assert LISTING in first.text and CANONICAL not in first.text  # listed, not loaded
    assert CANONICAL in second.tool_results()[0]  # the file's text went back to the model
    calls = [e for e in transcripts[row.item_key]["events"] if e["kind"] == "tool_call"]
    assert calls[0]["content"].startswith("cat ") and "skills/waiting/SKILL.md" in calls[0][
        "content"
    ]


def test_conditions_reach_the_model_only_when_they_should(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
) -> None:
    seen = {}
    for condition in ("none", "self-load", "preloaded", "stale"):
        loopback.reset(answer(GOOD_WAIT_ANSWER))
        rows, _ = run_items(tiny_suite, runs_dir, "codex", options,
                            cases=("wait-server",), conditions=(condition,))
        assert rows.status.tolist() == ["ok"]
        text = bodies(loopback.model_requests())
        seen[condition] = (LISTING in text, CANONICAL in text, STALE in text)
    assert seen == {
        "none": (False, False, False),
        "self-load": (True, False, False),  # discoverable: name, description and path
        "preloaded": (False, True, False),
        "stale": (False, False, True),
    }


def test_execution_case_real_tool_call_writes_the_file_in_an_allowlisted_env(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setenv("EVALKIT_TEST_CANARY", "canary-value-that-must-not-leak")
    loopback.script = steps(
        shell("env | sort"),
        shell("wc -l < data.txt | tr -d ' ' > report.txt", call_id="call_2"),
        final="Counted the lines with wc -l and wrote report.txt.",
    )
    rows, transcripts = run_items(tiny_suite, runs_dir, "codex", options, cases=("make-report",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed), row.score) == ("ok", True, 1.0)  # verifier passed
    env_output = loopback.model_requests()[1].tool_results()[0]
    assert f"HOME={tmp_path / 'state'}" in env_output  # a private HOME per item
    assert "canary-value" not in env_output  # nothing of the caller's environment leaks in
    events = transcripts[row.item_key]["events"]
    assert any(e["kind"] == "tool_call" and "wc -l" in e["content"] for e in events)
    assert OPENAI_SECRET not in json.dumps(events)


def test_max_turns_stops_the_agent_without_an_error(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
) -> None:
    loopback.script = always(shell("echo again"))  # the model never stops calling tools
    rows, transcripts = run_items(tiny_suite, runs_dir, "codex", {**options, "max_turns": 2},
                                  cases=("make-report",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed)) == ("ok", False)  # a wrong answer, not an error
    assert transcripts[row.item_key]["extra"]["stop_reason"] == "max_turns"


def test_server_error_is_retried_then_an_error_row(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
) -> None:
    loopback.script = always(Status(500))
    rows, _ = run_items(tiny_suite, runs_dir, "codex", options, cases=("sum-numbers",),
                        retries=2)
    row = rows.iloc[0]
    assert (row.status, row.error_class, bool(row.passed)) == ("error", "server_error", False)
    assert len(loopback.model_requests()) == 3  # one attempt plus two retries


def test_malformed_stream_is_an_error_row(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, options: dict[str, Any],
) -> None:
    loopback.script = always(Malformed())
    rows, _ = run_items(tiny_suite, runs_dir, "codex", options, cases=("sum-numbers",),
                        retries=1)
    row = rows.iloc[0]
    assert (row.status, row.error_class) == ("error", "server_error")
    assert "response.completed" in row.error_message
    assert len(loopback.model_requests()) == 2


def test_unreachable_server_is_a_connection_error(
    tiny_suite: Path, runs_dir: Path, options: dict[str, Any],
) -> None:
    closed = {**options, "base_url": f"http://127.0.0.1:{closed_port()}/v1"}
    rows, _ = run_items(tiny_suite, runs_dir, "codex", closed, cases=("sum-numbers",))
    row = rows.iloc[0]
    assert (row.status, row.error_class) == ("error", "connection_error")
    assert row.latency_s < 30  # stopped at the first "waiting for network", not at the timeout


@pytest.mark.parametrize("where", ["server", "tool"])
def test_hang_is_a_timeout_row_and_leaves_no_process(
    where: str, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    options: dict[str, Any], tmp_path: Path,
) -> None:
    if where == "server":
        case, script = "sum-numbers", always(Hang(60))
    else:  # the agent's own command hangs in a PTY, a session of its own
        case, script = "make-report", steps(shell(HANGING_COMMAND), final="done")
    set_budget(tiny_suite, case, timeout_s=5)
    loopback.script = script
    rows, _ = run_items(tiny_suite, runs_dir, "codex", options, cases=(case,))
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
    wrapper = tmp_path / "codex-traced"
    wrapper.write_text(
        f"#!/bin/sh\nexec {strace} -f -qq -e trace=connect,sendto,sendmsg -o {log} "
        f"{options['binary']} \"$@\"\n"
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    loopback.script = answer("The sum is 5050.")
    rows, _ = run_items(tiny_suite, runs_dir, "codex", {**options, "binary": str(wrapper)},
                        cases=("sum-numbers",))
    assert rows.status.tolist() == ["ok"]
    peers = set(re.findall(r"sa_family=AF_INET6?, [^}]*", log.read_text()))
    assert peers and all("127.0.0.1" in p or "::1" in p for p in peers), peers
    assert any(f"htons({loopback.port})" in p for p in peers)
    assert len(loopback.model_requests()) == 1


def test_bad_settings_are_config_errors_naming_the_option(
    codex_bin: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    with pytest.raises(ConfigError, match="option 'sandbox'"):
        create_provider("codex", {"binary": codex_bin, "sandbox": "everything"})
    with pytest.raises(ConfigError, match="option 'base_url'"):
        create_provider("codex", {"binary": codex_bin, "base_url": "localhost:8000"})
    with pytest.raises(ConfigError, match="EVALKIT_CODEX_BIN"):
        create_provider("codex", {"binary": str(tmp_path / "no-such-codex")})
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        create_provider("codex", {"binary": codex_bin})
