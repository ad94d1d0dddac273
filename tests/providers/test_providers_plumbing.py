"""Shared plumbing of the real providers: redaction, the CLI runner, prompt composition."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from evalkit.cases import SkillExposure
from evalkit.errors import ConfigError
from evalkit.providers import AgentResponse, Event, redact_response, redact_text
from evalkit.providers._prompting import injected_text, skill_file_text, skills_index
from evalkit.providers._subprocess import (
    MARK_VAR,
    agent_dirs,
    cli_env,
    find_binary,
    run_cli,
)
from tests.providers.agent_harness import processes_mentioning

SKILL = SkillExposure("waiting", "Wait on\nconditions.", "self-load", "# Waiting\nPoll.",
                      bootstrap="Load it first.")


def test_redaction_covers_env_values_key_shapes_headers_and_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", "plain-looking-value-42")
    monkeypatch.setenv("CUSTOM_CRED", "custom-credential-99")
    response = AgentResponse(
        events=(
            Event("tool_result", "MY_SERVICE_API_KEY=plain-looking-value-42"),
            Event("assistant", "use sk-ant-api03-abcdefghijklmnopqrstuv and AKIAABCDEFGHIJKLMNOP"),
            Event("tool_call", "curl -H 'x-api-key: 0123456789abcdef' -H 'Authorization: Bearer "
                               "tok.en-123456789'"),
            Event("assistant", "custom-credential-99"),
        ),
        extra={"nested": [{"header": "Bearer abcdefghijkl"}], "ok": 3},
    )
    redacted = redact_response(response, ["CUSTOM_CRED"])
    text = repr(redacted)
    for secret in ("plain-looking-value-42", "abcdefghijklmnopqrstuv", "AKIAABCDEFGHIJKLMNOP",
                   "0123456789abcdef", "tok.en-123456789", "custom-credential-99",
                   "abcdefghijkl"):
        assert secret not in text
    assert redacted.extra["ok"] == 3 and "x-api-key: [REDACTED]" in text
    assert redact_text("a short key=abc is fine", secrets=("abc",)) == "a short key=abc is fine"


def test_cli_env_is_an_allowlist(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_TEST_CANARY", "x")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    env = cli_env({"HOME": "/h"}, pass_env=("HTTPS_PROXY",))
    assert env["HOME"] == "/h" and env["HTTPS_PROXY"] == "http://proxy:3128"
    assert "EVALKIT_TEST_CANARY" not in env and env["PATH"]
    assert set(env) <= {"HOME", "HTTPS_PROXY", "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ"}


def test_run_cli_kills_descendants_that_left_the_process_group(tmp_path: Path) -> None:
    script = "setsid sleep 321.5 & sleep 321.25 & echo started; wait"
    result = run_cli(["bash", "-c", script], cwd=tmp_path, env=cli_env({}), timeout_s=1.0)
    assert result.timed_out and result.returncode is None and result.lines == ["started"]
    assert processes_mentioning("sleep 321.5", "sleep 321.25") == []


def test_run_cli_line_hook_stops_early_and_marks_processes(tmp_path: Path) -> None:
    script = f'echo "$${MARK_VAR}" | wc -c; echo stop-here; sleep 30'.replace("$$", "$")
    result = run_cli(["bash", "-c", script], cwd=tmp_path, env=cli_env({}), timeout_s=20,
                     on_line=lambda line: "seen" if line == "stop-here" else None)
    assert result.aborted == "seen" and not result.timed_out and result.elapsed_s < 10
    assert int(result.lines[0]) == 33  # a 32-character marker (and a newline) was set


def test_agent_dirs_are_private_and_removed(tmp_path: Path) -> None:
    with agent_dirs("evalkit-test-", str(tmp_path / ("a-long-state-directory" * 4))) as dirs:
        assert dirs.config.is_dir() and dirs.tmp.is_dir() and dirs.home.is_dir()
        assert oct(dirs.home.stat().st_mode & 0o777) == "0o700"
        assert dirs.tmp not in dirs.config.parents  # CODEX_HOME never under TMPDIR
        assert len(str(dirs.tmp)) < 40  # room for the agents' Unix sockets
    assert not dirs.root.exists() and not dirs.tmp.exists()


def test_find_binary_prefers_the_setting_and_explains_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert find_binary(sys.executable, "EVALKIT_NOPE_BIN", "nope", "x") == str(
        Path(sys.executable).resolve()
    )
    monkeypatch.setenv("EVALKIT_NOPE_BIN", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="EVALKIT_NOPE_BIN.*install-agent-clis.sh"):
        find_binary(None, "EVALKIT_NOPE_BIN", "nope", "x")
    plain = tmp_path / "not-executable"
    plain.write_text("")
    os.chmod(plain, 0o644)
    with pytest.raises(ConfigError, match="binary"):
        find_binary(str(plain), "EVALKIT_NOPE_BIN", "nope", "x")


def test_prompt_composition_per_condition() -> None:
    index = skills_index([SKILL])
    assert "- waiting: Wait on conditions." in index and "  Load it first." in index
    assert "Poll." not in index
    assert skills_index([]) == "" and injected_text([]) == ""
    preloaded = SkillExposure("waiting", "d", "preloaded", "---\nname: w\n---\nPoll.")
    injected = injected_text([preloaded])
    assert '<skill name="waiting">\nPoll.\n</skill>' in injected  # frontmatter stripped
    with_frontmatter = SkillExposure("w", "desc", "self-load", "---\nname: w\n---\nBody\n")
    assert skill_file_text(with_frontmatter) == '---\nname: w\ndescription: "desc"\n---\nBody\n'
