"""``codex``: the Codex CLI (``codex exec --json``).

Per work item the CLI runs in the item's workspace with a private ``HOME``, ``CODEX_HOME`` and
``TMPDIR`` (``CODEX_HOME`` is never under ``TMPDIR``, where Codex refuses its helper binaries)
and an allowlisted environment. evalkit writes ``$CODEX_HOME/config.toml``: a model provider
``evalkit`` for ``base_url`` (Responses API, key from ``api_key_env``), analytics and plugins
off, no update check. Skill conditions:

- ``none``: ``$CODEX_HOME/skills`` holds only Codex's bundled system skills;
- ``self-load``: ``$CODEX_HOME/skills/<name>/SKILL.md`` is installed; Codex lists it (name,
  description, path) and the agent loads it by reading the file;
- ``preloaded``/``stale``: the skill text goes into ``developer_instructions`` (a developer
  message at the start of the conversation).

Sandbox: ``read-only`` for the prompt lane, ``workspace-write`` (no network) for execution
lanes; approvals are never asked. Codex has no turn limit of its own: with ``max_turns`` set,
evalkit stops the agent once it has made that many tool calls.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from evalkit._redact import clip
from evalkit._registry import plugin
from evalkit._untrusted import load_json
from evalkit.errors import (
    AuthError,
    ConnectionFailed,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    ServerError,
)
from evalkit.providers._cli_agent import (
    CliAgentProvider,
    CliSettings,
    CliStream,
    CliUsage,
    cli_injected_text,
    json_objects,
    stderr_tail,
)
from evalkit.providers._prompting import injected_text, skill_in, user_prompt
from evalkit.providers._protocol import AgentRequest
from evalkit.providers._settings import OUTCOME, RUNTIME, parse_settings, split_list
from evalkit.providers._subprocess import AgentDirs, CliResult, LineHook
from evalkit.providers._transcript import Event

DEFAULT_BASE_URL = "https://api.openai.com/v1"

#: Item types that are tool calls (they count against ``max_turns``).
TOOL_ITEMS = ("command_execution", "file_change", "mcp_tool_call", "web_search")

_NETWORK_DOWN = ("waiting for network", "connection failed", "error sending request",
                 "connection refused")


class CodexSettings(CliSettings):
    """Settings of ``codex`` (see :class:`CliSettings` for the shared ones)."""

    api_key_env: Annotated[str, RUNTIME] = "OPENAI_API_KEY"
    """Environment variable holding the key (Codex reads it under this name)."""
    effort: Annotated[Literal["minimal", "low", "medium", "high", "xhigh"] | None, OUTCOME] = None
    """``model_reasoning_effort`` (default: the CLI's)."""
    sandbox: Annotated[
        Literal["read-only", "workspace-write", "danger-full-access"] | None, OUTCOME
    ] = None
    """``--sandbox`` (default: ``read-only`` for the prompt lane, ``workspace-write`` for
    execution lanes)."""
    config_overrides: Annotated[tuple[str, ...], OUTCOME] = ()
    """More ``-c KEY=VALUE`` overrides (TOML values), an outcome setting."""
    input_cost_per_mtok: Annotated[float, RUNTIME, Field(ge=0)] = 0.0
    """USD per million input tokens, for ``cost_usd`` (Codex reports no cost)."""
    output_cost_per_mtok: Annotated[float, RUNTIME, Field(ge=0)] = 0.0
    """USD per million output tokens, for ``cost_usd``."""

    _overrides = field_validator("config_overrides", mode="before")(split_list)


def toml_string(value: str) -> str:
    r"""A TOML basic string.

    Examples:
        >>> import tomllib
        >>> text = 'say "hi"\n\tback\\slash \x7f end'
        >>> tomllib.loads("k = " + toml_string(text))["k"] == text
        True
    """
    out = []
    for char in value:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def unwrap_shell(command: str) -> str:
    """The script of a ``/bin/bash -lc '...'`` command line (other commands unchanged).

    Examples:
        >>> unwrap_shell("/bin/bash -lc 'cat skills/x/SKILL.md'")
        'cat skills/x/SKILL.md'
    """
    try:
        parts = shlex.split(command)
    except ValueError:
        return command
    if len(parts) == 3 and parts[0].endswith(("bash", "sh", "zsh")) and parts[1] in ("-lc", "-c"):
        return parts[2]
    return command


@dataclass
class CodexStream(CliStream):
    """What ``codex exec --json`` said, normalized.

    Attributes:
        input_tokens: Prompt tokens over all turns.
        output_tokens: Completion tokens over all turns.
        completed: Whether a turn completed.
        failure: The ``turn.failed`` message, if any.
        errors: ``error`` messages (warnings when a turn still completed).
        tool_calls: Tool calls made.
        messages: Agent messages.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    completed: bool = False
    failure: str = ""
    errors: list[str] = field(default_factory=list)
    tool_calls: int = 0
    messages: int = 0


def _item_events(item: dict[str, Any], out: CodexStream) -> None:
    kind = item.get("type")
    if kind == "agent_message" and item.get("text"):
        out.messages += 1
        out.events.append(Event("assistant", str(item["text"])))
    elif kind == "command_execution":
        command = unwrap_shell(str(item.get("command", "")))
        result = f"exit code {item.get('exit_code')}\n{item.get('aggregated_output') or ''}"
        out.events += [Event("tool_call", command, "exec_command"),
                       Event("tool_result", result, "exec_command")]
        skill = skill_in(command)
        if skill and item.get("exit_code") == 0:
            out.loaded.append(skill)
    elif kind == "file_change":
        changes = "\n".join(
            f"{c.get('kind', '')} {c.get('path', '')}"
            for c in item.get("changes") or [] if isinstance(c, dict)
        )
        out.events += [Event("tool_call", changes, "apply_patch"),
                       Event("tool_result", str(item.get("status", "")), "apply_patch")]
    elif kind == "mcp_tool_call":
        name = f"mcp:{item.get('server', '')}/{item.get('tool', '')}"
        out.events += [Event("tool_call", json.dumps(item.get("arguments"), sort_keys=True), name),
                       Event("tool_result", json.dumps(item.get("result") or item.get("error")),
                             name)]
    elif kind == "web_search":
        out.events += [Event("tool_call", str(item.get("query", "")), "web_search"),
                       Event("tool_result", "", "web_search")]
    elif kind == "error" and item.get("message"):
        out.errors.append(str(item["message"]))
    if kind in TOOL_ITEMS:
        out.tool_calls += 1


def parse_stream(lines: list[str]) -> CodexStream:
    """Normalize ``codex exec --json`` lines into transcript events and usage.

    Args:
        lines: Stdout lines.

    Returns:
        Events, token usage, whether a turn completed, and the failure message if any.
    """
    out = CodexStream()
    for msg in json_objects(lines, out):
        kind = msg.get("type")
        if kind == "item.completed" and isinstance(msg.get("item"), dict):
            _item_events(msg["item"], out)
        elif kind == "turn.completed":
            out.completed = True
            usage = msg.get("usage") or {}
            out.input_tokens += int(usage.get("input_tokens") or 0)
            out.output_tokens += int(usage.get("output_tokens") or 0)
        elif kind == "turn.failed":
            out.failure = str((msg.get("error") or {}).get("message") or "turn failed")
        elif kind == "error":
            out.errors.append(str(msg.get("message") or ""))
    return out


def classify_message(message: str) -> ProviderError:
    """The exception for a Codex error message.

    Examples:
        >>> type(classify_message("exceeded retry limit, last status: 429 Too Many")).__name__
        'RateLimited'
        >>> type(classify_message("unexpected status 401 Unauthorized: bad key")).__name__
        'AuthError'
        >>> type(classify_message("unexpected status 404 Not Found: no such model")).__name__
        'ProviderError'
        >>> type(classify_message("stream closed before response.completed")).__name__
        'ServerError'
    """
    low = message.lower()
    text = f"codex: {clip(message, 1000)}"
    if "429" in message or "too many requests" in low or "rate limit" in low:
        return RateLimited(text)
    if any(s in low for s in _NETWORK_DOWN):
        return ConnectionFailed(text)
    if re.search(r"\b(401|403)\b", message) or "unauthorized" in low or "forbidden" in low:
        return AuthError(text)
    if (re.search(r"\b(400|404|422)\b", message) or "invalid_request" in low
            or "model metadata" in low):
        return ProviderError(text)
    if "timed out" in low or "idle timeout" in low:
        return ProviderTimeout(text)
    return ServerError(text)


def _watch(max_turns: int | None) -> LineHook:
    """A line hook: stop on a lost connection, or once ``max_turns`` tool calls are done."""
    calls = 0

    def on_line(line: str) -> str | None:
        nonlocal calls
        try:
            msg = load_json(line, "codex output")
        except ValueError:
            return None
        if not isinstance(msg, dict):
            return None
        if msg.get("type") == "error":
            message = str(msg.get("message", "")).lower()
            if any(s in message for s in _NETWORK_DOWN):
                return "connection"
        item = msg.get("item")
        if max_turns and msg.get("type") == "item.completed" and isinstance(item, dict):
            calls += item.get("type") in TOOL_ITEMS
            if calls >= max_turns:
                return "max_turns"
        return None

    return on_line


class CodexProvider(CliAgentProvider[CodexSettings, CodexStream]):
    """Codex as an evalkit agent (see the module docstring)."""

    name = "codex"
    binary_name = "codex"
    binary_env = "EVALKIT_CODEX_BIN"

    def __init__(self, settings: CodexSettings) -> None:
        super().__init__(settings)
        self.base_url = settings.base_url or DEFAULT_BASE_URL

    def outcome_settings(self) -> dict[str, Any]:
        """The outcome settings, with the server Codex really talks to as ``base_url``."""
        out = super().outcome_settings()
        out["base_url"] = self.base_url
        return out

    def config_toml(self, request: AgentRequest, dirs: AgentDirs | None = None) -> str:
        """``$CODEX_HOME/config.toml`` for one item (``dirs``: where injected files are)."""
        s = self.settings
        top = {
            "model_provider": toml_string("evalkit"),
            "approval_policy": toml_string("never"),
            "check_for_update_on_startup": "false",
        }
        if s.model:
            top["model"] = toml_string(s.model)
        if s.effort:
            top["model_reasoning_effort"] = toml_string(s.effort)
        injected = (injected_text(request.injected) if dirs is None
                    else cli_injected_text(request, dirs))
        if injected:
            top["developer_instructions"] = toml_string(injected)
        provider = {
            "name": toml_string("evalkit"),
            "base_url": toml_string(self.base_url),
            "env_key": toml_string(s.api_key_env),
            "wire_api": toml_string("responses"),
            "request_max_retries": str(s.cli_retries),
            "stream_max_retries": str(s.cli_retries),
        }
        lines = [f"{k} = {v}" for k, v in top.items()]
        lines += ["", "[analytics]", "enabled = false", "", "[features]", "plugins = false", "",
                  "[model_providers.evalkit]"]
        lines += [f"{k} = {v}" for k, v in provider.items()]
        return "\n".join(lines) + "\n"

    def write_files(self, request: AgentRequest, dirs: AgentDirs) -> None:
        """``$CODEX_HOME/config.toml``."""
        (dirs.config / "config.toml").write_text(self.config_toml(request, dirs),
                                                   encoding="utf-8")

    def argv(self, request: AgentRequest, dirs: AgentDirs) -> list[str]:
        """The command line for one item."""
        s = self.settings
        sandbox = s.sandbox or ("read-only" if request.case.lane == "prompt" else "workspace-write")
        argv = [self.binary, "exec", "--json", "--skip-git-repo-check", "--ephemeral",
                "--color", "never", "-s", sandbox, "-C", str(request.workspace)]
        for override in s.config_overrides:
            argv += ["-c", override]
        return [*argv, *s.extra_args, "--", user_prompt(request.case)]

    def own_env(self, dirs: AgentDirs) -> dict[str, str]:
        """HOME, ``CODEX_HOME``, TMPDIR and the key under its own name."""
        s = self.settings
        return {
            "HOME": str(dirs.home),
            "CODEX_HOME": str(dirs.config),
            "TMPDIR": str(dirs.tmp),
            "NO_COLOR": "1",
            s.api_key_env: os.environ.get(s.api_key_env, ""),
        }

    def line_hook(self, request: AgentRequest) -> LineHook:
        """Stop on a lost connection, or once the turn limit's tool calls are done."""
        return _watch(self.turn_limit(request))

    def parse(self, lines: list[str]) -> CodexStream:
        """See :func:`parse_stream`."""
        return parse_stream(lines)

    def classify(self, stream: CodexStream, run: CliResult) -> ProviderError | None:
        """The exception for a failed turn, a lost connection, a crash or a truncated stream."""
        if run.aborted == "connection":
            return ConnectionFailed(f"codex: {(stream.errors or ['connection failed'])[-1]}")
        if run.aborted == "max_turns":
            return None
        if stream.failure:
            return classify_message(stream.failure)
        if stream.completed:
            return None
        if stream.errors:
            return classify_message(stream.errors[-1])
        crashed = self.crashed(stream, run)
        if crashed is not None:
            return crashed
        tail = stderr_tail(run)
        return ServerError(f"codex: stream ended without a completed turn "
                           f"(exit {run.returncode}): {tail}")

    def usage(self, stream: CodexStream, run: CliResult) -> CliUsage:
        """Tokens, cost from the configured prices, tool calls and warnings."""
        s = self.settings
        cost = (stream.input_tokens * s.input_cost_per_mtok
                + stream.output_tokens * s.output_cost_per_mtok) / 1e6
        return CliUsage(
            model=s.model or "default",
            input_tokens=stream.input_tokens,
            output_tokens=stream.output_tokens,
            cost_usd=cost,
            n_steps=stream.tool_calls + 1,
            extra={
                "stop_reason": "max_turns" if run.aborted == "max_turns" else "completed",
                "tool_calls": stream.tool_calls,
                "warnings": stream.errors[-5:],
            },
        )


@plugin("provider")
def create_codex(settings: Mapping[str, Any]) -> CodexProvider:
    """Build the ``codex`` provider from ``--provider-opt`` settings."""
    return CodexProvider(parse_settings(CodexSettings, "codex", settings))
