"""Fixtures of the judge tests: a small judged suite and the loopback model server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.providers.loopback_server import LoopbackModelServer

SKILL_MARKER = "zebra-marker-only-in-the-skill"

SUITE_YAML = """\
name: judged
skills:
  waiting:
    description: Waiting for things with a deadline.
    path: skills/waiting/SKILL.md
conditions:
  cond-okapi: {mode: preloaded, description: canonical skill injected}
defaults:
  trials: 1
  conditions: [none, cond-okapi]
judge:
  provider: simulated
"""

SKILL_MD = f"# Waiting\\nPoll the real condition with a deadline. {SKILL_MARKER}\\n"

CASES_YAML = """\
cases:
  - id: wait-server
    expected_skill: waiting
    prompt: How should my CI script wait for the server to be ready?
    expected_patterns: ['until|while']
    expectations:
      - text: Polls a readiness check in a loop
        truth: 'until\\b'
      - text: Bounds the wait with a deadline
        truth: 'deadline'
    reference: |
      until curl -fsS http://localhost:8080/health; do sleep 1; done
      Give up after a deadline of 60 seconds.
  - id: judged-only
    expected_skill: waiting
    prompt: Explain how to wait for a file to appear.
    expectations:
      - Checks the file in a loop
    reference: |
      until [ -e out.txt ]; do sleep 0.5; done
      Stop after a deadline.
"""


def write_suite(root: Path, suite_yaml: str = SUITE_YAML, cases_yaml: str = CASES_YAML) -> Path:
    """Write the judged suite under ``root`` and return its directory."""
    suite = root / "judged"
    (suite / "skills" / "waiting").mkdir(parents=True)
    (suite / "cases").mkdir()
    (suite / "suite.yaml").write_text(suite_yaml)
    (suite / "skills" / "waiting" / "SKILL.md").write_text(SKILL_MD.replace("\\n", "\n"))
    (suite / "cases" / "cases.yaml").write_text(cases_yaml)
    return suite


@pytest.fixture
def judged_suite(tmp_path: Path) -> Path:
    """A two-case suite whose cases carry expectations, judged by the simulated judge."""
    return write_suite(tmp_path)


@pytest.fixture
def loopback() -> Iterator[LoopbackModelServer]:
    """A scriptable model server on 127.0.0.1 (ephemeral port)."""
    server = LoopbackModelServer().start()
    try:
        yield server
    finally:
        server.stop()
