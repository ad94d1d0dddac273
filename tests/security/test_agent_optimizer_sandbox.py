"""A ``provider:`` optimizer on evalkit's own agent loop edits through the sandboxed shell tool.

``provider:openai_compat`` (and ``anthropic``) run the model's ``bash`` tool calls through
:func:`evalkit.sandbox.run_command`, with the throwaway proposal workspace as the only writable
directory. Agent CLIs (``claude_code``, ``codex``) run outside evalkit's sandbox, with their
own tool sandbox turned on by the optimizer (``CONFINING_SETTINGS``). The model (a real HTTP
server on 127.0.0.1, the real CLIs of scripts/install-agent-clis.sh) asks for the attacks of the
``command:`` optimizer's test: a write beside the workspace, ``setsid`` daemons (one with an
empty environment, so no marker variable finds it), then the legitimate edit.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.optimize import OptimizerContext, Proposal, load_optimizer
from evalkit.optimize._optimizers import confining_settings
from tests.providers.agent_harness import ANTHROPIC_SECRET, OPENAI_SECRET, agent_binary, steps
from tests.providers.loopback_server import LoopbackModelServer, ToolCall
from tests.security.sandbox_probes import pids_with_argument, processes_mentioning


@pytest.fixture
def loopback() -> Iterator[LoopbackModelServer]:
    """A scriptable model server on 127.0.0.1 (ephemeral port)."""
    server = LoopbackModelServer().start()
    try:
        yield server
    finally:
        server.stop()


def _context(tmp_path: Path) -> OptimizerContext:
    workspace = tmp_path / "ws"
    (workspace / "failures").mkdir(parents=True)
    (workspace / "SKILL.md").write_text("# seed\n", encoding="utf-8")
    (workspace / "INSTRUCTIONS.md").write_text("Improve SKILL.md\n", encoding="utf-8")
    return OptimizerContext(
        workspace=workspace,
        skill_path=workspace / "SKILL.md",
        champion_text="# seed\n",
        failures=[],
        candidate_id="cand-0001",
        iteration=0,
        seed=1,
    )


def _attacks(outside: Path, marker: str) -> list[str]:
    return [
        f"echo bad >> {outside}; echo tried",
        f"setsid sleep {marker}1 >/dev/null 2>&1 & env -i setsid sleep {marker}2 >/dev/null "
        "2>&1 & sleep 0.3; echo started",
        "echo '[X]' >> SKILL.md && echo edited",
    ]


def _kill_leftovers(marker: str) -> None:
    """Kill (by pid) any sleeper this test started that survived, so a failure leaks nothing."""
    for pid in pids_with_argument(f"{marker}1") + pids_with_argument(f"{marker}2"):
        os.kill(pid, signal.SIGKILL)


def _propose(spec: str, options: dict[str, object], tmp_path: Path) -> Proposal:
    optimizer = load_optimizer(spec, options)
    return optimizer.propose(_context(tmp_path))


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


def test_a_codex_optimizer_edits_only_inside_its_workspace(
    tmp_path: Path, loopback: LoopbackModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    outside = tmp_path / "outside.txt"  # under /tmp, which Codex's sandbox allows by default
    outside.write_text("keep\n", encoding="utf-8")
    marker = f"654.{os.getpid()}8"
    calls = [ToolCall("exec_command", {"cmd": c}, call_id=f"call_{i}")
             for i, c in enumerate(_attacks(outside, marker))]  # fmt: skip
    loopback.script = steps(*calls, final="Done.")
    options = {"binary": agent_binary("codex", "EVALKIT_CODEX_BIN"), "model": "gpt-5.5",
               "base_url": loopback.base_url + "/v1", "cli_retries": 0,
               "state_dir": str(tmp_path / "state")}  # fmt: skip
    try:
        proposal = _propose("provider:codex", options, tmp_path)
        alive = pids_with_argument(f"{marker}1") + pids_with_argument(f"{marker}2")
    finally:
        _kill_leftovers(marker)
    assert alive == []
    results = loopback.model_requests()[-1].tool_results()
    assert f"{outside}: Read-only file system" in results[0]
    assert outside.read_text(encoding="utf-8") == "keep\n"
    assert proposal.text == "# seed\n[X]\n"


def test_a_claude_code_optimizer_runs_its_commands_in_claudes_sandbox(
    tmp_path: Path, loopback: LoopbackModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``scrub_subprocess_env`` the daemon with an empty environment survived."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
    outside = tmp_path / "outside.txt"
    marker = f"654.{os.getpid()}9"
    calls = [ToolCall("Bash", {"command": c, "description": "Run"}, call_id=f"call_{i}")
             for i, c in enumerate(_attacks(outside, marker))]  # fmt: skip
    loopback.script = steps(*calls, final="Done.")
    options = {"binary": agent_binary("claude", "EVALKIT_CLAUDE_BIN"), "cli_retries": 0,
               "base_url": loopback.base_url, "state_dir": str(tmp_path / "state")}  # fmt: skip
    try:
        proposal = _propose("provider:claude_code", options, tmp_path)
        alive = pids_with_argument(f"{marker}1") + pids_with_argument(f"{marker}2")
    finally:
        _kill_leftovers(marker)
    assert alive == []
    assert "started" in loopback.model_requests()[-1].tool_results()[1]
    assert proposal.text == "# seed\n[X]\n"


def test_the_users_settings_win_over_the_confining_ones() -> None:
    assert confining_settings("claude_code", {}) == {"scrub_subprocess_env": True}
    assert confining_settings("claude_code", {"scrub_subprocess_env": False}) == {
        "scrub_subprocess_env": False
    }
    extra = confining_settings("codex", {"extra_args": "-c a=b"})["extra_args"]
    assert extra == "-c sandbox_workspace_write.exclude_slash_tmp=true -c a=b"
    assert confining_settings("codex", {"extra_args": ("-c", "a=b")})["extra_args"] == [
        "-c", "sandbox_workspace_write.exclude_slash_tmp=true", "-c", "a=b"
    ]  # fmt: skip
    assert confining_settings("openai_compat", {"model": "m"}) == {"model": "m"}
