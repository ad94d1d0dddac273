"""Baseline isolation per provider, for a skill that has resource files.

- ``preloaded`` injects the skill and does not make it discoverable;
- ``self-load`` makes it discoverable and injects nothing;
- ``none`` and ``stale`` cannot find the canonical skill by any path: not where the agent
  discovers skills, not by a grep of the workspace or of the agent's home and private folders.

Run for the simulated agent, the real Claude Code and Codex CLIs and an HTTP agent (Anthropic
Messages), the last three against the loopback model server, which makes the agent run a shell
command that looks for the skill, and records what reached the model.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.cases import load_suite
from tests.providers.agent_harness import (
    ANTHROPIC_SECRET,
    CANONICAL,
    LISTING,
    OPENAI_SECRET,
    STALE,
    agent_binary,
    bodies,
    run_items,
    steps,
)
from tests.providers.loopback_server import LoopbackModelServer, Recorded, ToolCall

FILE_MARKER = "okapi-guide-marker-4711"
CONDITIONS = ("none", "self-load", "preloaded", "stale")
#: Where could the skill be? Every SKILL.md of the skill under the agent's private folders and
#: workspace (Codex also unpacks its own bundled skills under ``skills/.system``), and every
#: file there holding the canonical skill's text or its resource file's text.
#: (The texts are cut in two inside the command, so the command itself never quotes them.)
PROBE = (
    f"A='{CANONICAL[:10]}'; B='{FILE_MARKER[:6]}'; "
    'R="$(dirname "$HOME")"; P="$PWD"; echo "== skills"; '
    'find "$R" "$P" -path "*waiting*" -name SKILL.md 2>/dev/null; echo "== canonical"; '
    f'grep -rlF "${{A}}{CANONICAL[10:]}" "$R" "$P" 2>/dev/null; echo "== files"; '
    f'grep -rlF "${{B}}{FILE_MARKER[6:]}" "$R" "$P" 2>/dev/null; echo "== end"'
)


@pytest.fixture
def resource_suite(tiny_suite: Path) -> Path:
    """The tiny suite whose skill is a directory: SKILL.md plus references/guide.md."""
    skill = tiny_suite / "skills" / "waiting"
    variants = tiny_suite / "variants"
    variants.mkdir()
    for name in ("stale.md", "bootstrap.md"):
        shutil.move(skill / name, variants / name)
    (skill / "references").mkdir()
    (skill / "references" / "guide.md").write_text(f"Deadlines: {FILE_MARKER}\n")
    spec = yaml.safe_load((tiny_suite / "suite.yaml").read_text())
    spec["skills"]["waiting"].update(
        resources="skills/waiting", bootstrap="variants/bootstrap.md",
        variants={"stale": "variants/stale.md"},
    )
    (tiny_suite / "suite.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return tiny_suite


def _sections(output: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = ""
    for line in output.splitlines():
        if line.startswith("== "):
            current = line[3:].strip()
            out[current] = []
        elif current and line.strip():
            out[current].append(line.strip())
    assert "end" in out, f"the probe did not finish: {output!r}"
    return out


def _check(
    condition: str, found: dict[str, list[str]], requests: list[Recorded], suite: Path
) -> None:
    """The isolation rules, from what the probe found and what reached the model."""
    text = bodies(requests)
    # no condition points the agent at the suite's own copy of the skill
    assert str(suite / "skills" / "waiting") not in text
    first = requests[0].text
    skills = found["skills"]
    if condition == "self-load":
        assert any(p.endswith("skills/waiting/SKILL.md") for p in skills), skills
        assert LISTING in first and CANONICAL not in first  # listed, not injected
        assert '<skill name="waiting">' not in text
    else:
        assert skills == [], f"{condition}: a SKILL.md is reachable: {skills}"
        assert LISTING not in text, f"{condition}: the skill is listed for discovery"
    if condition in ("none", "stale"):
        assert found["canonical"] == [], f"{condition}: canonical text at {found['canonical']}"
        assert CANONICAL not in text
    if condition == "none":
        assert found["files"] == [] and FILE_MARKER not in text
    if condition == "stale":
        assert STALE in first
    if condition == "preloaded":
        assert CANONICAL in first  # injected up front
        assert found["files"], f"the files the injected text names must exist: {found}"
        directory = str(Path(found["files"][0]).parent.parent)
        assert directory in first  # the injected text says where they are ...
        assert "load_skill" not in first  # ... and names no tool the CLI does not have


# -- the real CLIs ------------------------------------------------------------------------------

CLIS = {
    "claude_code": ("claude", "EVALKIT_CLAUDE_BIN", "ANTHROPIC_API_KEY", ANTHROPIC_SECRET, "",
                    None, lambda cmd: ToolCall("Bash", {"command": cmd, "description": "look"})),
    "codex": ("codex", "EVALKIT_CODEX_BIN", "OPENAI_API_KEY", OPENAI_SECRET, "/v1", "gpt-5.5",
              lambda cmd: ToolCall("exec_command", {"cmd": cmd})),
}


@pytest.mark.slow
@pytest.mark.parametrize("provider", list(CLIS))
def test_a_cli_agent_finds_the_skill_only_as_its_condition_says(
    provider: str, resource_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    binary, binary_env, key_env, secret, suffix, model, shell = CLIS[provider]
    monkeypatch.setenv(key_env, secret)
    options: dict[str, Any] = {
        "binary": agent_binary(binary, binary_env), "base_url": loopback.base_url + suffix,
        "cli_retries": 0, "state_dir": str(tmp_path / "state"),
        **({"model": model} if model else {}),
    }
    for condition in CONDITIONS:
        loopback.reset(steps(shell(PROBE), final="Counted the lines with wc -l."))
        rows, _ = run_items(resource_suite, runs_dir, provider, options,
                            cases=("make-report",), conditions=(condition,))
        assert rows.status.tolist() == ["ok"], rows.error_message.tolist()
        requests = loopback.model_requests()
        assert len(requests) >= 2, f"{condition}: the probe did not run"
        _check(condition, _sections(requests[1].tool_results()[0]), requests, resource_suite)


# -- an HTTP agent ------------------------------------------------------------------------------


def test_an_http_agent_finds_the_skill_only_as_its_condition_says(
    resource_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
    options = {"base_url": loopback.base_url, "model": "loopback-1"}
    for condition in CONDITIONS:
        loopback.reset(steps(
            ToolCall("load_skill", {"name": "waiting"}),
            ToolCall("load_skill", {"name": "waiting/references/guide.md"}, call_id="call_2"),
            ToolCall("bash", {"command": PROBE}, call_id="call_3"),
            final="Counted the lines with wc -l.",
        ))
        rows, _ = run_items(resource_suite, runs_dir, "anthropic", options,
                            cases=("make-report",), conditions=(condition,))
        assert rows.status.tolist() == ["ok"], rows.error_message.tolist()
        requests = loopback.model_requests()
        whole, guide, probe = requests[-1].tool_results()[:3]
        found = _sections(probe)
        text = bodies(requests[:1])
        # the skill loads by name only where it is discoverable
        assert (CANONICAL in whole) == (condition == "self-load"), (condition, whole)
        assert (FILE_MARKER in guide) == (condition != "none"), (condition, guide)
        assert found["skills"] == [] and found["canonical"] == []  # nothing in the workspace
        assert (LISTING in text) == (condition == "self-load")
        assert (CANONICAL in text) == (condition == "preloaded")
        assert (STALE in text) == (condition == "stale")
        if condition in ("preloaded", "stale"):  # its files: named with the tool it has
            assert "load_skill('waiting/<file>')" in text
        offered = requests[0].tool_names()
        assert ("load_skill" in offered) == (condition != "none")


# -- the simulated agent ------------------------------------------------------------------------


def test_the_simulated_agent_gets_what_its_condition_says(
    resource_suite: Path, runs_dir: Path
) -> None:
    suite = load_suite(resource_suite)
    case = next(c for c in suite.cases if c.id == "wait-server")
    for condition in CONDITIONS:
        exposed = suite.exposure(case, condition)
        injected = [s for s in exposed if s.mode != "self-load"]
        discoverable = [s for s in exposed if s.mode == "self-load"]
        assert bool(discoverable) == (condition == "self-load")
        assert bool(injected) == (condition in ("preloaded", "stale"))
        texts = " ".join(s.text for s in injected)
        assert (CANONICAL in texts) == (condition == "preloaded")
    rows, transcripts = run_items(resource_suite, runs_dir, "simulated", {},
                                  cases=("wait-server",), conditions=CONDITIONS, trials=20)
    loads = {c: 0 for c in CONDITIONS}
    for row in rows.itertuples():
        events = transcripts[row.item_key]["events"]
        loads[row.condition] += sum(e.get("name") == "load_skill" for e in events)
        if row.condition in ("none", "stale"):
            assert all(CANONICAL not in str(e.get("content")) for e in events)
    assert loads["self-load"] > 0
    assert loads["none"] == loads["preloaded"] == loads["stale"] == 0
