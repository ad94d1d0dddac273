"""openai_compat (Chat Completions, Responses) and anthropic (Messages) against loopback."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evalkit.errors import ConfigError, ProviderTimeout
from evalkit.providers import Limiter, create_provider
from evalkit.runner import RunStopped
from tests.providers.agent_harness import (
    ANTHROPIC_SECRET,
    CANONICAL,
    GOOD_WAIT_ANSWER,
    LISTING,
    OPENAI_SECRET,
    STALE,
    bodies,
    closed_port,
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

BOOTSTRAP = "Load the full waiting skill before writing any wait logic."


@dataclass(frozen=True)
class Flavor:
    provider: str
    settings: dict[str, Any]
    key_env: str
    secret: str
    suffix: str  # appended to the server's base URL

    def options(self, server: LoopbackModelServer) -> dict[str, Any]:
        return {"base_url": server.base_url + self.suffix, "model": "loopback-1",
                **self.settings}


FLAVORS = [
    Flavor("openai_compat", {"api": "chat"}, "OPENAI_API_KEY", OPENAI_SECRET, "/v1"),
    Flavor("openai_compat", {"api": "responses"}, "OPENAI_API_KEY", OPENAI_SECRET, "/v1"),
    Flavor("anthropic", {}, "ANTHROPIC_API_KEY", ANTHROPIC_SECRET, ""),
]


@pytest.fixture(params=FLAVORS, ids=["chat", "responses", "anthropic"])
def flavor(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Flavor:
    chosen: Flavor = request.param
    monkeypatch.setenv(chosen.key_env, chosen.secret)
    return chosen


def test_plain_answer_is_scored_end_to_end_with_secrets_redacted(
    flavor: Flavor, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
) -> None:
    loopback.script = answer(f"The sum is 5050. (debug: key {flavor.secret})")
    rows, transcripts = run_items(tiny_suite, runs_dir, flavor.provider,
                                  flavor.options(loopback), cases=("sum-numbers",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed), row.inferred_skill) == ("ok", True, "none")
    assert (row.model, row.input_tokens, row.output_tokens, row.n_steps) == (
        "loopback-1", 120, 30, 1)
    (request,) = loopback.model_requests()
    auth = request.headers.get("x-api-key") or request.headers.get("authorization")
    assert flavor.secret in auth
    assert "tools" not in request.body  # no tool is offered when no tool is needed
    text = json.dumps(transcripts[row.item_key])
    assert flavor.secret not in text and "[REDACTED]" in text


def test_load_skill_round_trip_is_inferred(
    flavor: Flavor, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
) -> None:
    loopback.script = steps(ToolCall("load_skill", {"name": "waiting"}), final=GOOD_WAIT_ANSWER)
    rows, transcripts = run_items(tiny_suite, runs_dir, flavor.provider,
                                  flavor.options(loopback), cases=("wait-server",),
                                  conditions=("self-load",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed)) == ("ok", True)
    assert (row.inferred_skill, bool(row.skill_loaded), row.n_steps) == ("waiting", True, 2)
    first, second = loopback.model_requests()
    assert first.tool_names() == ["load_skill"]
    assert LISTING in first.text and BOOTSTRAP in first.text and CANONICAL not in first.text
    assert CANONICAL in second.tool_results()[0]
    calls = [e for e in transcripts[row.item_key]["events"] if e["kind"] == "tool_call"]
    assert calls == [{"kind": "tool_call", "content": "waiting", "name": "load_skill"}]


def test_conditions_reach_the_model_only_when_they_should(
    flavor: Flavor, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
) -> None:
    seen = {}
    for condition in ("none", "self-load", "preloaded", "stale"):
        loopback.reset(answer(GOOD_WAIT_ANSWER))
        run_items(tiny_suite, runs_dir, flavor.provider, flavor.options(loopback),
                  cases=("wait-server",), conditions=(condition,))
        text = bodies(loopback.model_requests())
        seen[condition] = (LISTING in text, CANONICAL in text, STALE in text)
    assert seen == {
        "none": (False, False, False),
        "self-load": (True, False, False),
        "preloaded": (False, True, False),
        "stale": (False, False, True),
    }


def test_execution_case_bash_tool_writes_the_file(
    flavor: Flavor, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
) -> None:
    loopback.script = steps(
        ToolCall("bash", {"command": "wc -l < data.txt | tr -d ' ' > report.txt"}),
        final="Counted the lines with wc -l.",
    )
    rows, _ = run_items(tiny_suite, runs_dir, flavor.provider, flavor.options(loopback),
                        cases=("make-report",))
    row = rows.iloc[0]
    assert (row.status, bool(row.passed), row.score) == ("ok", True, 1.0)
    assert loopback.model_requests()[0].tool_names() == ["bash"]
    assert loopback.model_requests()[1].tool_results()[0].startswith("exit code 0")


def test_server_error_is_retried_then_an_error_row(
    flavor: Flavor, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
) -> None:
    loopback.script = always(Status(500))
    rows, _ = run_items(tiny_suite, runs_dir, flavor.provider, flavor.options(loopback),
                        cases=("sum-numbers",), retries=2)
    row = rows.iloc[0]
    assert (row.status, row.error_class, bool(row.passed)) == ("error", "server_error", False)
    assert len(loopback.model_requests()) == 3


def test_malformed_response_is_an_error_row(
    flavor: Flavor, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
) -> None:
    loopback.script = always(Malformed())
    rows, _ = run_items(tiny_suite, runs_dir, flavor.provider, flavor.options(loopback),
                        cases=("sum-numbers",), retries=1)
    row = rows.iloc[0]
    assert (row.status, row.error_class) == ("error", "server_error")
    assert "malformed" in row.error_message
    assert len(loopback.model_requests()) == 2


def test_hang_is_a_timeout_row(
    flavor: Flavor, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
) -> None:
    set_budget(tiny_suite, "sum-numbers", timeout_s=2)
    loopback.script = always(Hang(30))
    rows, _ = run_items(tiny_suite, runs_dir, flavor.provider, flavor.options(loopback),
                        cases=("sum-numbers",))
    row = rows.iloc[0]
    assert (row.status, row.error_class) == ("timeout", "timeout")
    assert 2 <= row.latency_s < 6


@pytest.mark.parametrize(("code", "error_class", "attempts"), [
    (429, "rate_limited", 2), (503, "server_error", 2), (404, "provider_error", 1),
])
def test_http_errors_map_onto_retryable_classes(
    code: int, error_class: str, attempts: int, tiny_suite: Path, runs_dir: Path,
    loopback: LoopbackModelServer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    loopback.script = always(Status(code))
    rows, _ = run_items(tiny_suite, runs_dir, "openai_compat", FLAVORS[0].options(loopback),
                        cases=("sum-numbers",), retries=1)
    assert rows.error_class.tolist() == [error_class]
    assert len(loopback.model_requests()) == attempts  # a bad request is never retried


def test_unreachable_server_is_a_connection_error(
    tiny_suite: Path, runs_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
    options = {"base_url": f"http://127.0.0.1:{closed_port()}", "model": "loopback-1"}
    rows, _ = run_items(tiny_suite, runs_dir, "anthropic", options, cases=("sum-numbers",))
    assert rows.error_class.tolist() == ["connection_error"]


def test_bad_settings_are_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="model=NAME"):
        create_provider("openai_compat", {"base_url": "http://127.0.0.1:1/v1"})
    with pytest.raises(ConfigError, match="option 'api'"):
        create_provider("openai_compat", {"model": "m", "api": "completions"})
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        create_provider("anthropic", {"model": "m"})
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):  # the vendor's API needs a key
        create_provider("openai_compat", {"model": "m"})
    local = create_provider("openai_compat", {"model": "m", "base_url": "http://127.0.0.1:1/v1",
                                              "max_concurrency": 1, "request_timeout_s": 5})
    assert local.outcome_settings() == create_provider(
        "openai_compat", {"model": "m", "base_url": "http://127.0.0.1:1/v1"}
    ).outcome_settings()  # runtime settings never enter the item hash
    assert local.outcome_settings()["base_url"] == "http://127.0.0.1:1/v1"


@pytest.mark.serial  # measures the spacing of requests in time
def test_limiter_caps_concurrency_and_spaces_requests() -> None:
    limiter = Limiter(max_concurrency=2, requests_per_minute=600)  # one start per 0.1 s
    starts: list[float] = []
    active, peak = [0], [0]
    lock = threading.Lock()

    def request() -> None:
        with limiter.slot(time.monotonic() + 10):
            with lock:
                starts.append(time.monotonic())
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            time.sleep(0.05)
            with lock:
                active[0] -= 1

    threads = [threading.Thread(target=request) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    starts.sort()
    assert peak[0] <= 2
    assert all(b - a >= 0.09 for a, b in zip(starts, starts[1:], strict=False))
    busy = Limiter(max_concurrency=1, requests_per_minute=None)
    with busy.slot(time.monotonic() + 1), pytest.raises(ProviderTimeout):
        with busy.slot(time.monotonic() + 0.05):
            pass


@pytest.mark.parametrize("code", [401, 403])
def test_refused_credentials_stop_the_run_without_retries(
    code: int, flavor: Flavor, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
) -> None:
    loopback.script = always(Status(code, json.dumps({"error": f"bad key {flavor.secret}"})))
    with pytest.raises(RunStopped) as stopped:
        run_items(tiny_suite, runs_dir, flavor.provider, flavor.options(loopback),
                  cases=("sum-numbers", "wait-file"), retries=2, trials=10)
    message = str(stopped.value)
    assert stopped.value.error_class == "auth" and f"HTTP {code}" in message
    assert f"export a valid key in {flavor.key_env}" in message and flavor.secret not in message
    # of 20 items, each asked at most once (retries=2 would triple a retried item): the first
    # refusal stops the run; only items already in flight or dispatched before it was seen ran
    assert len(loopback.model_requests()) <= 4
