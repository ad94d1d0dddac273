"""A ``provider:`` optimizer on evalkit's own agent loop edits through the sandboxed shell tool.

``provider:openai_compat`` (and ``anthropic``) run the model's ``bash`` tool calls through
:func:`evalkit.sandbox.run_command`, with the throwaway proposal workspace as the only writable
directory. The model here (a real HTTP server on 127.0.0.1) asks for the attacks of the
``command:`` optimizer's test: a write beside the workspace and a ``setsid`` daemon, then the
legitimate edit. Agent CLIs (``claude_code``, ``codex``) run outside evalkit's sandbox; see
docs/optimize.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.optimize import OptimizerContext, load_optimizer
from tests.providers.agent_harness import OPENAI_SECRET, steps
from tests.providers.loopback_server import LoopbackModelServer, ToolCall
from tests.security.sandbox_probes import processes_mentioning


@pytest.fixture
def loopback() -> Iterator[LoopbackModelServer]:
    """A scriptable model server on 127.0.0.1 (ephemeral port)."""
    server = LoopbackModelServer().start()
    try:
        yield server
    finally:
        server.stop()


def test_an_agent_optimizers_shell_tool_is_sandboxed(
    tmp_path: Path, loopback: LoopbackModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    monkeypatch.delenv("EVALKIT_SANDBOX", raising=False)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n", encoding="utf-8")
    marker = f"654.{os.getpid()}7"
    loopback.script = steps(
        ToolCall("bash", {"command": f"echo bad >> {outside}; echo tried"}),
        ToolCall("bash", {"command": f"setsid sleep {marker} >/dev/null 2>&1 & sleep 0.3"}),
        ToolCall("bash", {"command": "echo '[X]' >> SKILL.md && echo edited"}),
        final="Done.",
    )
    workspace = tmp_path / "ws"
    (workspace / "failures").mkdir(parents=True)
    (workspace / "SKILL.md").write_text("# seed\n", encoding="utf-8")
    (workspace / "INSTRUCTIONS.md").write_text("Improve SKILL.md\n", encoding="utf-8")
    optimizer = load_optimizer(
        "provider:openai_compat",
        {"base_url": loopback.base_url + "/v1", "model": "loopback-1", "api": "chat"},
    )
    proposal = optimizer.propose(
        OptimizerContext(
            workspace=workspace,
            skill_path=workspace / "SKILL.md",
            champion_text="# seed\n",
            failures=[],
            candidate_id="cand-0001",
            iteration=0,
            seed=1,
        )
    )
    assert processes_mentioning(marker) == []  # the daemon died with its tool call
    assert outside.read_text(encoding="utf-8") == "keep\n"
    results = loopback.model_requests()[-1].tool_results()
    assert len(results) == 3, results
    assert "tried" in results[0] and "edited" in results[2]
    assert proposal.text == "# seed\n[X]\n"
