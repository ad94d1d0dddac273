"""claude_code and codex: the real CLIs against a loopback model server, one body per behaviour.

Each test runs for every flavour of the table below (Claude Code against a loopback Anthropic
Messages server, Codex against a loopback OpenAI Responses server); what differs between the
two CLIs is data in the table.
"""

from __future__ import annotations

import json
import re
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
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
    OPENAI_SECRET,
    STALE,
    agent_binary,
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

CODEX_MODEL = "gpt-5.5"  # a slug Codex has metadata for


def _claude_shell(command: str, call_id: str = "call_1") -> ToolCall:
    return ToolCall("Bash", {"command": command, "description": "Run a command"},
                    call_id=call_id)


def _codex_shell(command: str, call_id: str = "call_1") -> ToolCall:
    return ToolCall("exec_command", {"cmd": command}, call_id=call_id)


@dataclass(frozen=True)
class Flavour:
    """What differs between the CLI agents, as the tests see it."""

    provider: str
    binary: str
    binary_env: str
    key_env: str
    secret: str
    url_suffix: str
    """Appended to the loopback base URL (Codex talks to ``/v1/responses``)."""
    model: str | None
    """Model to pass (Codex needs a slug it knows), also the model rows must show."""
    shell: Callable[..., ToolCall]
    """A tool call running one shell command."""
    skill_loads: dict[str, Callable[[str], ToolCall]]
    """Ways the agent loads the installed skill, from the SKILL.md path."""
    key_header: Callable[[str], tuple[str, str]]
    """The request header carrying the key, and its value."""
    max_turns_stop_reason: str
    bad_flag_message: str
    """What the CLI says about an unknown command-line flag."""
    streams: bool
    """The first request asks for a stream (``body["stream"] is True``)."""
    reports_cost: bool
    key_in_tool_env: bool
    """The agent's commands see the CLI's own API key variable."""
    malformed_requests: list[Any]
    """What the server sees per two attempts at a malformed stream."""
    malformed_message: str
    max_turns_requests: int | None
    invalid: dict[str, Any] = field(default_factory=dict)
    """A flavour-specific invalid option and value."""


CLAUDE = Flavour(
    provider="claude_code", binary="claude", binary_env="EVALKIT_CLAUDE_BIN",
    key_env="ANTHROPIC_API_KEY", secret=ANTHROPIC_SECRET, url_suffix="", model=None,
    shell=_claude_shell,
    skill_loads={
        "Read": lambda path: ToolCall("Read", {"file_path": path}),
        "Skill": lambda path: ToolCall("Skill", {"skill": "waiting"}),
    },
    key_header=lambda secret: ("x-api-key", secret),
    max_turns_stop_reason="error_max_turns", bad_flag_message="unknown option",
    streams=True, reports_cost=True, key_in_tool_env=True,
    # per attempt: the stream, then Claude Code's own non-streaming retry
    malformed_requests=[True, False, True, False], malformed_message="",
    max_turns_requests=2,
)
CODEX = Flavour(
    provider="codex", binary="codex", binary_env="EVALKIT_CODEX_BIN",
    key_env="OPENAI_API_KEY", secret=OPENAI_SECRET, url_suffix="/v1", model=CODEX_MODEL,
    shell=_codex_shell,
    skill_loads={"cat": lambda path: _codex_shell(f"cat {path}")},
    key_header=lambda secret: ("authorization", f"Bearer {secret}"),
    max_turns_stop_reason="max_turns", bad_flag_message="unexpected argument",
    streams=False, reports_cost=False, key_in_tool_env=False,
    malformed_requests=[None, None], malformed_message="response.completed",
    max_turns_requests=None, invalid={"sandbox": "everything"},
)
FLAVOURS = [CLAUDE, CODEX]
SKILL_LOADS = [(f, how) for f in FLAVOURS for how in f.skill_loads]


@pytest.fixture(params=FLAVOURS, ids=lambda f: f.provider)
def flavour(request: pytest.FixtureRequest) -> Flavour:
    value: Flavour = request.param
    return value


@pytest.fixture
def binary(flavour: Flavour) -> str:
    """The pinned CLI (scripts/install-agent-clis.sh)."""
    return agent_binary(flavour.binary, flavour.binary_env)


def _options(
    flavour: Flavour, binary: str, base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    monkeypatch.setenv(flavour.key_env, flavour.secret)
    options: dict[str, Any] = {
        "binary": binary,
        "base_url": base_url + flavour.url_suffix,
        "cli_retries": 0,
        "state_dir": str(tmp_path / "state"),
    }
    if flavour.model:
        options["model"] = flavour.model
    return options


@pytest.fixture
def options(
    flavour: Flavour, binary: str, loopback: LoopbackModelServer, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    return _options(flavour, binary, loopback.base_url, tmp_path, monkeypatch)


def test_plain_answer_is_scored_end_to_end_with_secrets_redacted(
    flavour: Flavour, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    options: dict[str, Any],
) -> None:
    loopback.script = answer(f"The sum is 5050. (debug: key {flavour.secret})")
    rows, transcripts = run_items(tiny_suite, runs_dir, flavour.provider, options,
                                  cases=("sum-numbers",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed), row.inferred_skill) == ("ok", True, "none")
    assert re.fullmatch(r"\d+\.\d+\.\d+", row.provider_version)
    assert (row.input_tokens, row.output_tokens, row.n_steps) == (120, 30, 1)
    assert row.latency_s > 0 and row.model == (flavour.model or row.model) and row.model
    assert bool(row.cost_usd > 0) == flavour.reports_cost
    requests = loopback.model_requests()
    assert len(requests) == 1
    if flavour.streams:
        assert requests[0].body["stream"] is True
    if flavour.model:
        assert requests[0].body["model"] == flavour.model
    header, value = flavour.key_header(flavour.secret)
    assert requests[0].headers[header] == value  # the key reached the CLI
    response = transcripts[row.item_key]
    text = json.dumps(response)
    assert flavour.secret not in text and "[REDACTED]" in text
    assert response["extra"]["cli_version"] == row.provider_version


@pytest.mark.parametrize(("flavour", "how"), SKILL_LOADS,
                         ids=[f"{f.provider}-{how}" for f, how in SKILL_LOADS])
def test_skill_load_round_trip_is_inferred(
    flavour: Flavour, how: str, tiny_suite: Path, runs_dir: Path,
    loopback: LoopbackModelServer, options: dict[str, Any], tmp_path: Path,
) -> None:
    def load(request: Recorded) -> ToolCall:
        return flavour.skill_loads[how](installed_skill(tmp_path / "state", "waiting"))

    loopback.script = steps(load, final=GOOD_WAIT_ANSWER)
    rows, transcripts = run_items(tiny_suite, runs_dir, flavour.provider, options,
                                  cases=("wait-server",), conditions=("self-load",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed)) == ("ok", True)
    assert (row.inferred_skill, bool(row.skill_loaded)) == ("waiting", True)
    first, second = loopback.model_requests()
    assert LISTING in first.text and CANONICAL not in first.text  # listed, not loaded
    assert CANONICAL in bodies([second])  # the skill text reached the model after the call
    if how == "cat":
        assert CANONICAL in second.tool_results()[0]  # the file's text went back to the model
    calls = [e for e in transcripts[row.item_key]["events"] if e["kind"] == "tool_call"]
    assert "skills/waiting/SKILL.md" in calls[0]["content"]
    expected_name = {"Read": "Read", "Skill": "Skill", "cat": "exec_command"}[how]
    assert calls[0]["name"] == expected_name
    if how == "cat":
        assert calls[0]["content"].startswith("cat ")


def test_conditions_reach_the_model_only_when_they_should(
    flavour: Flavour, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    options: dict[str, Any],
) -> None:
    seen = {}
    for condition in ("none", "self-load", "preloaded", "stale"):
        loopback.reset(answer(GOOD_WAIT_ANSWER))
        rows, _ = run_items(tiny_suite, runs_dir, flavour.provider, options,
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
    flavour: Flavour, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setenv("EVALKIT_TEST_CANARY", "canary-value-that-must-not-leak")
    loopback.script = steps(
        flavour.shell("env | sort"),
        flavour.shell("wc -l < data.txt | tr -d ' ' > report.txt", call_id="call_2"),
        final="Counted the lines with wc -l and wrote report.txt.",
    )
    rows, transcripts = run_items(tiny_suite, runs_dir, flavour.provider, options,
                                  cases=("make-report",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed), row.score) == ("ok", True, 1.0)  # verifier passed
    env_output = loopback.model_requests()[1].tool_results()[0]
    assert f"HOME={tmp_path / 'state'}" in env_output  # a private HOME per item
    assert "canary-value" not in env_output  # nothing of the caller's environment leaks in
    events = transcripts[row.item_key]["events"]
    assert any(e["kind"] == "tool_call" and "wc -l" in e["content"] for e in events)
    if flavour.key_in_tool_env:  # the CLI's own key is in its commands' environment ...
        assert f"{flavour.key_env}=" in env_output
    assert flavour.secret not in json.dumps(events)  # ... but never in the stored transcript


def test_claude_scrubbed_commands_run_sandboxed_without_the_key(
    tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not (shutil.which("bwrap") and shutil.which("socat")):
        pytest.fail("bubblewrap/socat are missing: run scripts/install-agent-clis.sh",
                    pytrace=False)
    options = _options(CLAUDE, agent_binary(CLAUDE.binary, CLAUDE.binary_env),
                       loopback.base_url, tmp_path, monkeypatch)
    loopback.script = steps(
        CLAUDE.shell("env | sort"),
        CLAUDE.shell("wc -l < data.txt | tr -d ' ' > report.txt", call_id="call_2"),
        final="Counted the lines with wc -l and wrote report.txt.",
    )
    rows, _ = run_items(tiny_suite, runs_dir, "claude_code",
                        {**options, "scrub_subprocess_env": True}, cases=("make-report",))
    assert (rows.status[0], bool(rows.passed[0])) == ("ok", True)
    env_output = loopback.model_requests()[1].tool_results()[0]
    assert "CLAUDECODE=1" in env_output and "ANTHROPIC_API_KEY" not in env_output


def test_max_turns_stops_the_agent_without_an_error(
    flavour: Flavour, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    options: dict[str, Any],
) -> None:
    loopback.script = always(flavour.shell("echo again"))  # the model never stops calling tools
    rows, transcripts = run_items(tiny_suite, runs_dir, flavour.provider,
                                  {**options, "max_turns": 2}, cases=("make-report",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed)) == ("ok", False)  # a wrong answer, not an error
    assert transcripts[row.item_key]["extra"]["stop_reason"] == flavour.max_turns_stop_reason
    if flavour.max_turns_requests is not None:
        assert len(loopback.model_requests()) == flavour.max_turns_requests


def test_server_error_is_retried_then_an_error_row(
    flavour: Flavour, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    options: dict[str, Any],
) -> None:
    loopback.script = always(Status(500))
    rows, _ = run_items(tiny_suite, runs_dir, flavour.provider, options,
                        cases=("sum-numbers",), retries=2)
    row = rows.iloc[0]
    assert (row.status, row.error_class, bool(row.passed)) == ("error", "server_error", False)
    assert len(loopback.model_requests()) == 3  # one attempt plus two retries


def test_malformed_stream_is_an_error_row(
    flavour: Flavour, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    options: dict[str, Any],
) -> None:
    loopback.script = always(Malformed())
    rows, _ = run_items(tiny_suite, runs_dir, flavour.provider, options,
                        cases=("sum-numbers",), retries=1)
    row = rows.iloc[0]
    assert (row.status, row.error_class) == ("error", "server_error")
    assert flavour.malformed_message in row.error_message
    requests = loopback.model_requests()
    assert [r.body.get("stream") if flavour.streams else None for r in requests] == (
        flavour.malformed_requests
    )


def test_a_cli_that_dies_before_any_output_is_a_retried_crash(
    flavour: Flavour, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    options: dict[str, Any],
) -> None:
    broken = {**options, "extra_args": "--definitely-not-a-flag"}
    rows, _ = run_items(tiny_suite, runs_dir, flavour.provider, broken, cases=("sum-numbers",),
                        retries=1)
    row = rows.iloc[0]
    assert (row.status, row.error_class) == ("error", "agent_crashed")
    assert flavour.bad_flag_message in row.error_message and loopback.model_requests() == []


def test_unreachable_server_is_a_connection_error(
    flavour: Flavour, tiny_suite: Path, runs_dir: Path, options: dict[str, Any],
) -> None:
    closed = {**options, "base_url": f"http://127.0.0.1:{closed_port()}{flavour.url_suffix}"}
    rows, _ = run_items(tiny_suite, runs_dir, flavour.provider, closed, cases=("sum-numbers",))
    row = rows.iloc[0]
    assert (row.status, row.error_class) == ("error", "connection_error")
    assert row.latency_s < 30  # stopped as soon as the CLI gave up on the network


@pytest.mark.slow
@pytest.mark.serial  # kills a hung agent and checks at once that nothing is left: timing
@pytest.mark.parametrize("where", ["server", "tool"])
def test_hang_is_a_timeout_row_and_leaves_no_process(
    flavour: Flavour, where: str, tiny_suite: Path, runs_dir: Path,
    loopback: LoopbackModelServer, options: dict[str, Any], tmp_path: Path,
) -> None:
    if where == "server":
        case, script = "sum-numbers", always(Hang(60))
    else:  # the agent's own command hangs: a child of the CLI, or in a session of its own
        case, script = "make-report", steps(flavour.shell(HANGING_COMMAND), final="done")
    set_budget(tiny_suite, case, timeout_s=5)
    loopback.script = script
    rows, _ = run_items(tiny_suite, runs_dir, flavour.provider, options, cases=(case,))
    row = rows.iloc[0]
    assert (row.status, row.error_class) == ("timeout", "timeout")
    assert 5 <= row.latency_s < 15
    assert processes_mentioning(str(tmp_path / "state"), HANGING_COMMAND) == []


def test_the_cli_contacts_nothing_but_the_loopback_server(
    flavour: Flavour, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    options: dict[str, Any], tmp_path: Path,
) -> None:
    strace = shutil.which("strace")
    if strace is None:
        pytest.fail("strace is missing: run scripts/install-agent-clis.sh", pytrace=False)
    log = tmp_path / "connect.log"
    wrapper = tmp_path / f"{flavour.binary}-traced"
    wrapper.write_text(
        f"#!/bin/sh\nexec {strace} -f -qq -e trace=connect,sendto,sendmsg -o {log} "
        f"{options['binary']} \"$@\"\n"
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    loopback.script = answer("The sum is 5050.")
    rows, _ = run_items(tiny_suite, runs_dir, flavour.provider,
                        {**options, "binary": str(wrapper)}, cases=("sum-numbers",))
    assert rows.status.tolist() == ["ok"]
    peers = set(re.findall(r"sa_family=AF_INET6?, [^}]*", log.read_text()))
    assert peers and all("127.0.0.1" in p or "::1" in p for p in peers), peers
    assert any(f"htons({loopback.port})" in p for p in peers)
    assert len(loopback.model_requests()) == 1


def test_bad_settings_are_config_errors_naming_the_option(
    flavour: Flavour, binary: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setenv(flavour.key_env, flavour.secret)
    name = flavour.provider
    with pytest.raises(ConfigError, match="unknown option 'modle'"):
        create_provider(name, {"binary": binary, "modle": "x"})
    bad = {"effort": "huge", "base_url": "localhost:8000", **flavour.invalid}
    for option, value in bad.items():
        with pytest.raises(ConfigError, match=f"option '{option}'"):
            create_provider(name, {"binary": binary, option: value})
    with pytest.raises(ConfigError, match=f"install-agent-clis.sh.*{flavour.binary_env}"):
        create_provider(name, {"binary": str(tmp_path / f"no-such-{flavour.binary}")})
    monkeypatch.delenv(flavour.key_env)
    with pytest.raises(ConfigError, match=flavour.key_env):
        create_provider(name, {"binary": binary})


def test_outcome_settings_hold_what_changes_outcomes(
    flavour: Flavour, binary: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(flavour.key_env, flavour.secret)
    base = {"binary": binary, "model": "m1", "base_url": "http://127.0.0.1:1"}
    provider = create_provider(flavour.provider, base)
    outcome = provider.outcome_settings()
    assert outcome["model"] == "m1" and outcome["base_url"] == "http://127.0.0.1:1"
    assert outcome["cli_version"] == provider.info().version
    assert "binary" not in outcome and "cli_retries" not in outcome
    runtime = create_provider(flavour.provider,
                              {**base, "cli_retries": 5, "max_concurrency": 2})
    assert runtime.outcome_settings() == outcome
    assert create_provider(flavour.provider, {**base, "max_turns": 3}).outcome_settings() != (
        outcome
    )
