"""Write ``agent/trajectory.json`` into the Harbor fixture trials with Harbor's own converter.

Harbor's ``claude-code`` agent turns the Claude Code session log of a trial
(``agent/sessions/projects/<cwd>/<session>.jsonl``) into an ATIF trajectory after the run
(``ClaudeCode.populate_context_post_run``). This script writes a small Claude Code session for
each trial of ``tests/fixtures/imports/harbor/`` (the task: write 6 x 7 to ``/app/out.txt``;
with skills, the agent reads the skill's ``SKILL.md`` first and computes with Python; without,
it writes a wrong number, as the trials' verifier output says), then runs that converter on
it, so each ``trajectory.json`` is the bytes Harbor writes. It runs offline (LiteLLM, which
Harbor uses for cost estimates, falls back to its bundled price table). Harbor needs
Python >= 3.12 (see scripts/make_harbor_jobs.py)::

    .harbor/bin/python scripts/make_harbor_trajectories.py
"""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path
from typing import Any

from harbor.agents.installed.claude_code import ClaudeCode
from harbor.models.agent.context import AgentContext

ROOT = Path(__file__).resolve().parent.parent
HARBOR = ROOT / "tests" / "fixtures" / "imports" / "harbor"
TASK = "Write the product of 6 and 7 to /app/out.txt."
MODEL = "claude-opus-4-5"


def _line(kind: str, message: dict[str, Any], n: int, session: str) -> dict[str, Any]:
    return {
        "parentUuid": None if n == 0 else f"u{n - 1}",
        "isSidechain": False,
        "userType": "external",
        "cwd": "/app",
        "sessionId": session,
        "version": "2.0.76",
        "type": kind,
        "message": message,
        "uuid": f"u{n}",
        "timestamp": f"2026-12-06T17:51:{n:02d}.000Z",
    }


def _assistant(content: list[dict[str, Any]], n: int) -> dict[str, Any]:
    return {
        "id": f"msg_{n:04d}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": "tool_use" if any(c["type"] == "tool_use" for c in content) else None,
        "usage": {"input_tokens": 900 + 40 * n, "output_tokens": 60,
                  "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
    }


def _result(call: str, text: str) -> dict[str, Any]:
    return {"role": "user",
            "content": [{"tool_use_id": call, "type": "tool_result", "content": text,
                         "is_error": False}]}


def _session(with_skill: bool, session: str) -> list[dict[str, Any]]:
    turns: list[tuple[str, dict[str, Any]]] = [("user", {"role": "user", "content": TASK})]
    if with_skill:
        turns += [
            ("assistant", _assistant([
                {"type": "text", "text": "I will read the arithmetic skill first."},
                {"type": "tool_use", "id": "toolu_1", "name": "Read",
                 "input": {"file_path": "/app/.claude/skills/arithmetic/SKILL.md"}}], 1)),
            ("user", _result("toolu_1", "Never compute in your head: run python3 -c.")),
            ("assistant", _assistant([
                {"type": "tool_use", "id": "toolu_2", "name": "Bash",
                 "input": {"command": "python3 -c 'print(6 * 7)'"}}], 2)),
            ("user", _result("toolu_2", "42")),
        ]
    answer = 42 if with_skill else 41
    turns += [
        ("assistant", _assistant([
            {"type": "tool_use", "id": "toolu_3", "name": "Bash",
             "input": {"command": f"echo {answer} > /app/out.txt"}}], 3)),
        ("user", _result("toolu_3", "")),
        ("assistant", _assistant([{"type": "text", "text": f"Wrote {answer} to /app/out.txt."}],
                                 4)),
    ]
    return [_line(kind, message, n, session) for n, (kind, message) in enumerate(turns)]


def write_trajectory(trial: Path) -> Path:
    """Convert a fresh Claude Code session of ``trial`` with Harbor and write its ATIF file."""
    agent_dir = trial / "agent"
    agent_dir.mkdir(exist_ok=True)
    session = str(uuid.uuid5(uuid.NAMESPACE_URL, trial.name))
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp)
        project = logs / "sessions" / "projects" / "-app"
        project.mkdir(parents=True)
        lines = _session("with-skills" in trial.parent.name, session)
        (project / f"{session}.jsonl").write_text(
            "".join(json.dumps(line) + "\n" for line in lines))
        agent = ClaudeCode(logs_dir=logs, model_name=f"anthropic/{MODEL}")
        agent.populate_context_post_run(AgentContext())
        written = logs / "trajectory.json"
        if not written.is_file():
            raise SystemExit(f"Harbor wrote no trajectory for {trial}")
        (agent_dir / "trajectory.json").write_bytes(written.read_bytes())
    return agent_dir / "trajectory.json"


def main() -> None:
    """Write a trajectory into every trial directory of the Harbor fixture jobs."""
    for trial in sorted(p.parent for p in HARBOR.glob("job-*/*/result.json")):
        path = write_trajectory(trial)
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
