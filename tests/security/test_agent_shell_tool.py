"""The shell tool of evalkit's own agent loop runs in the sandbox (openai_compat, anthropic)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.providers.agent_harness import ANTHROPIC_SECRET, OPENAI_SECRET, run_items, steps
from tests.providers.loopback_server import LoopbackModelServer, ToolCall
from tests.security.sandbox_probes import READ_ENVIRONS, loopback_http, probe_network


@pytest.fixture
def loopback() -> Iterator[LoopbackModelServer]:
    """A scriptable model server on 127.0.0.1 (ephemeral port)."""
    server = LoopbackModelServer().start()
    try:
        yield server
    finally:
        server.stop()


FLAVORS = {
    "chat": ("openai_compat", {"api": "chat"}, "/v1"),
    "responses": ("openai_compat", {"api": "responses"}, "/v1"),
    "anthropic": ("anthropic", {}, ""),
}


@pytest.mark.parametrize("flavor", list(FLAVORS))
def test_model_shell_commands_cannot_escape(
    flavor: str,
    tiny_suite: Path,
    runs_dir: Path,
    tmp_path: Path,
    loopback: LoopbackModelServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
    provider, settings, suffix = FLAVORS[flavor]
    outside = tmp_path / "outside"
    outside.mkdir()
    with loopback_http() as (port, paths):
        loopback.script = steps(
            ToolCall("bash", {"command": READ_ENVIRONS}),
            ToolCall("bash", {"command": f"touch {outside}/marker; echo wrote"}),
            ToolCall("bash", {"command": probe_network(port)}),
            final="Done.",
        )
        options = {"base_url": loopback.base_url + suffix, "model": "loopback-1", **settings}
        rows, _ = run_items(tiny_suite, runs_dir, provider, options, cases=("make-report",))
        assert paths == []
    assert rows.status.tolist() == ["ok"]
    results = loopback.model_requests()[-1].tool_results()
    assert len(results) == 3
    environs, write, network = results
    assert "== /proc/1/environ" in environs and "HOME=" in environs
    assert OPENAI_SECRET not in environs and ANTHROPIC_SECRET not in environs
    assert "wrote" in write and not (outside / "marker").exists()
    assert "BLOCKED" in network and "CONNECTED" not in network
