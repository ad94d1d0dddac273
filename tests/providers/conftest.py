"""Fixtures of the provider tests: a loopback model server and the real agent CLIs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.providers.agent_harness import agent_binary
from tests.providers.loopback_server import LoopbackModelServer


@pytest.fixture
def loopback() -> Iterator[LoopbackModelServer]:
    """A scriptable model server on 127.0.0.1 (ephemeral port)."""
    server = LoopbackModelServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """The pinned Claude Code CLI (scripts/install-agent-clis.sh)."""
    return agent_binary("claude", "EVALKIT_CLAUDE_BIN")


@pytest.fixture(scope="session")
def codex_bin() -> str:
    """The pinned Codex CLI (scripts/install-agent-clis.sh)."""
    return agent_binary("codex", "EVALKIT_CODEX_BIN")
