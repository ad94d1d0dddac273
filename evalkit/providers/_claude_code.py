"""``claude_code``: the Claude Code CLI (``claude -p ... --output-format stream-json``).

Per work item the CLI runs in the item's workspace with a private ``HOME``,
``CLAUDE_CONFIG_DIR`` and ``TMPDIR`` and an allowlisted environment (telemetry, error
reporting, auto-update and other non-essential traffic switched off). Skill conditions:

- ``none``: the private config directory has no skills;
- ``self-load``: ``<config>/skills/<name>/SKILL.md`` is installed, so Claude Code lists the
  skill (name and description) and the agent may load it with its ``Skill`` tool or read the
  file (a ``Read`` permission rule for that directory is granted);
- ``preloaded``/``stale``: the skill text is appended to the system prompt
  (``--append-system-prompt-file``).

Permissions are the least that let a lane work: the prompt lane runs in the default permission
mode (reads inside the workspace, nothing else); execution lanes add ``--permission-mode
acceptEdits`` (file edits in the workspace) and ``--allowedTools Bash``.
``--dangerously-skip-permissions`` is never used unless ``dangerously_skip_permissions=true``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import field_validator

from evalkit._redact import clip
from evalkit._registry import plugin
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
    skill_files_root,
    stderr_tail,
)
from evalkit.providers._prompting import injected_text, skill_in, user_prompt
from evalkit.providers._protocol import AgentRequest
from evalkit.providers._settings import OUTCOME, RUNTIME, parse_settings, split_list
from evalkit.providers._subprocess import AgentDirs, CliResult
from evalkit.providers._transcript import Event, anthropic_input_tokens

#: Environment switches that keep Claude Code off the network except for model requests.
QUIET_ENV = {
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "NO_COLOR": "1",
}


#: Result texts that mean the model server could not be reached.
_UNREACHABLE = ("ECONNREFUSED", "Connection refused", "ENOTFOUND", "Unable to connect")


class ClaudeCodeSettings(CliSettings):
    """Settings of ``claude_code`` (see :class:`CliSettings` for the shared ones)."""

    api_key_env: Annotated[str, RUNTIME] = "ANTHROPIC_API_KEY"
    """Environment variable holding the key; passed to the CLI as ``ANTHROPIC_API_KEY``."""
    effort: Annotated[Literal["low", "medium", "high", "xhigh", "max"] | None, OUTCOME] = None
    """``--effort`` (default: the CLI's)."""
    permission_mode: Annotated[str | None, OUTCOME] = None
    """``--permission-mode`` (default: ``default`` for the prompt lane, ``acceptEdits``
    for execution lanes)."""
    allowed_tools: Annotated[tuple[str, ...] | None, OUTCOME] = None
    """``--allowedTools`` rules (default: none for the prompt lane, ``Bash`` for execution
    lanes); a ``Read`` rule for the installed skills is always added under self-load."""
    disallowed_tools: Annotated[tuple[str, ...], OUTCOME] = ()
    """``--disallowedTools`` rules."""
    scrub_subprocess_env: Annotated[bool, OUTCOME] = False
    """Set ``CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1``: the agent's commands run in Claude Code's
    sandbox without the API key in their environment (needs bubblewrap and socat)."""
    dangerously_skip_permissions: Annotated[bool, OUTCOME] = False
    """Pass ``--dangerously-skip-permissions`` (and ``IS_SANDBOX=1``, which it needs as
    root). Only inside an external sandbox."""

    _tool_lists = field_validator("allowed_tools", "disallowed_tools", mode="before")(
        split_list
    )


@dataclass
class ClaudeStream(CliStream):
    """What a stream-json transcript says, normalized.

    Attributes:
        model: The model of the ``system/init`` line.
        result: The ``result`` object, if the CLI printed one.
        api_error: Error details of an API error message.
        denials: Permission denials.
        calls: Tool calls by id (to name their results).
    """

    model: str = ""
    result: dict[str, Any] | None = None
    api_error: dict[str, Any] = field(default_factory=dict)
    denials: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[str, Event] = field(default_factory=dict)


def _flatten(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return "" if content is None else json.dumps(content)


def tool_call_content(name: str, tool_input: Mapping[str, Any]) -> str:
    """The normalized ``tool_call`` content of a Claude Code tool use.

    ``Bash`` gives the command; ``Read`` the file path; ``Write`` the path and the text;
    ``Skill`` the skill name and ``skills/<name>/SKILL.md`` (so skill inference sees it);
    any other tool its JSON input.

    Examples:
        >>> tool_call_content("Skill", {"skill": "waiting"})
        'waiting (skills/waiting/SKILL.md)'
        >>> tool_call_content("Bash", {"command": "wc -l < data.txt", "description": "x"})
        'wc -l < data.txt'
    """
    if name == "Bash":
        return str(tool_input.get("command", ""))
    if name == "Read":
        return str(tool_input.get("file_path", ""))
    if name == "Write":
        return f"{tool_input.get('file_path', '')}\n{tool_input.get('content', '')}"
    if name == "Skill":
        skill = str(tool_input.get("skill", ""))
        return f"{skill} (skills/{skill}/SKILL.md)"
    return json.dumps(dict(tool_input), sort_keys=True, ensure_ascii=False)


def parse_stream(lines: list[str]) -> ClaudeStream:
    """Normalize Claude Code's ``stream-json`` lines into transcript events.

    Args:
        lines: Stdout lines.

    Returns:
        Events, the init model, the result object, API error details, permission denials and
        skills loaded.
    """
    out = ClaudeStream()
    for msg in json_objects(lines, out):
        kind = msg.get("type")
        if kind == "system" and msg.get("subtype") == "init":
            out.model = str(msg.get("model", ""))
        elif kind == "system" and msg.get("subtype") == "permission_denied":
            out.denials.append({k: msg.get(k) for k in ("tool_name", "message")})
        elif kind == "assistant":
            _assistant(out, msg)
        elif kind == "user":
            _user(out, msg)
        elif kind == "result":
            out.result = msg
    return out


def _assistant(out: ClaudeStream, msg: dict[str, Any]) -> None:
    if msg.get("is_api_error_message") or msg.get("error"):
        out.api_error = {k: msg.get(k) for k in ("error", "api_error_status")}
        return
    for block in (msg.get("message") or {}).get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            out.events.append(Event("assistant", str(block["text"])))
        elif block.get("type") == "tool_use":
            name = str(block.get("name", ""))
            raw_input = block.get("input")
            tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
            event = Event("tool_call", tool_call_content(name, tool_input), name)
            out.events.append(event)
            out.calls[str(block.get("id", ""))] = event


def _user(out: ClaudeStream, msg: dict[str, Any]) -> None:
    content = (msg.get("message") or {}).get("content")
    if isinstance(content, str) or msg.get("isSynthetic"):
        # harness-injected text, e.g. the body of a skill the Skill tool loaded
        out.events.append(Event("system", _flatten(content)))
        return
    for block in content or []:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        call = out.calls.get(str(block.get("tool_use_id", "")))
        name = call.name if call else ""
        out.events.append(Event("tool_result", _flatten(block.get("content")), name))
        skill = skill_in(call.content) if call else None
        if skill and not block.get("is_error"):
            out.loaded.append(skill)


def classify_failure(stream: ClaudeStream, run: CliResult) -> ProviderError | None:
    """The exception for a failed invocation, or ``None`` when the agent produced a result.

    A result that is an answer (right or wrong, or the turn limit reached) is never a failure.
    """
    result = stream.result
    if result is None:
        tail = stderr_tail(run)
        if stream.bad_lines and stream.json_lines == 0:
            return ServerError(f"claude_code: malformed output stream: {tail}")
        return ServerError(
            f"claude_code: stream ended without a result (exit {run.returncode}): {tail}"
        )
    if not result.get("is_error") or str(result.get("subtype", "")).startswith("error_max"):
        return None
    text = clip(str(result.get("result") or result.get("subtype") or "unknown error"), 1000)
    status = result.get("api_error_status") or stream.api_error.get("api_error_status")
    kind = str(stream.api_error.get("error") or "")
    message = f"claude_code: {text}"
    if status == 429 or kind == "rate_limit":
        return RateLimited(message)
    if any(s in text for s in _UNREACHABLE):
        return ConnectionFailed(message)
    if "timed out" in text.lower() or "ETIMEDOUT" in text:
        return ProviderTimeout(message)
    if kind == "authentication_failed" or status in (401, 403):
        return AuthError(message)
    if kind in ("invalid_request", "billing_error") or (
        isinstance(status, int) and 400 <= status < 500 and status not in (408, 409)
    ):
        return ProviderError(message)
    return ServerError(message)


#: File under the invocation's private directory holding the injected skill text.
PROMPT_FILE = "append-system-prompt.md"


class ClaudeCodeProvider(CliAgentProvider[ClaudeCodeSettings, ClaudeStream]):
    """Claude Code as an evalkit agent (see the module docstring)."""

    name = "claude_code"
    binary_name = "claude"
    binary_env = "EVALKIT_CLAUDE_BIN"
    key_required = False

    def write_files(self, request: AgentRequest, dirs: AgentDirs) -> None:
        """The injected skill text, for ``--append-system-prompt-file``."""
        injected = cli_injected_text(request, dirs)
        if injected:
            (dirs.root / PROMPT_FILE).write_text(injected, encoding="utf-8")

    def argv(self, request: AgentRequest, dirs: AgentDirs) -> list[str]:
        """The command line for one item."""
        s = self.settings
        argv = [self.binary, "-p", "--output-format", "stream-json", "--verbose",
                "--no-session-persistence"]
        if s.model:
            argv += ["--model", s.model]
        if s.effort:
            argv += ["--effort", s.effort]
        turns = self.turn_limit(request)
        if turns:
            argv += ["--max-turns", str(turns)]
        if injected_text(request.injected):
            argv += ["--append-system-prompt-file", str(dirs.root / PROMPT_FILE)]
        execution = request.case.lane != "prompt"
        if s.dangerously_skip_permissions:
            argv.append("--dangerously-skip-permissions")
        else:
            mode = s.permission_mode or ("acceptEdits" if execution else "default")
            argv += ["--permission-mode", mode]
        allowed = list(s.allowed_tools if s.allowed_tools is not None else
                       (("Bash",) if execution else ()))
        if request.discoverable:
            allowed.append(f"Read(/{dirs.config / 'skills'}/**)")
        if any(skill.resource_files() for skill in request.injected):
            allowed.append(f"Read(/{skill_files_root(dirs)}/**)")
        if allowed:
            argv += ["--allowedTools", *allowed]
        if s.disallowed_tools:
            argv += ["--disallowedTools", *s.disallowed_tools]
        return [*argv, *s.extra_args, "--", user_prompt(request.case)]

    def own_env(self, dirs: AgentDirs) -> dict[str, str]:
        """HOME, ``CLAUDE_CONFIG_DIR``, TMPDIR, retries, quiet switches, key and server."""
        s = self.settings
        own = {
            "HOME": str(dirs.home),
            "CLAUDE_CONFIG_DIR": str(dirs.config),
            "TMPDIR": str(dirs.tmp),
            "CLAUDE_CODE_MAX_RETRIES": str(s.cli_retries),
            **QUIET_ENV,
        }
        if s.api_key_env:
            own["ANTHROPIC_API_KEY"] = os.environ.get(s.api_key_env, "")
        if s.base_url:
            own["ANTHROPIC_BASE_URL"] = s.base_url
        if s.dangerously_skip_permissions:
            own["IS_SANDBOX"] = "1"
        if s.scrub_subprocess_env:
            own["CLAUDE_CODE_SUBPROCESS_ENV_SCRUB"] = "1"
        return own

    def parse(self, lines: list[str]) -> ClaudeStream:
        """See :func:`parse_stream`."""
        return parse_stream(lines)

    def classify(self, stream: ClaudeStream, run: CliResult) -> ProviderError | None:
        """A crash before any output, else :func:`classify_failure`."""
        if stream.result is None:
            crashed = self.crashed(stream, run)
            if crashed is not None:
                return crashed
        return classify_failure(stream, run)

    def usage(self, stream: ClaudeStream, run: CliResult) -> CliUsage:
        """Tokens (cache reads and writes count as input), cost and turns of the result."""
        result = stream.result or {}
        usage = result.get("usage") or {}
        prompt_tokens = anthropic_input_tokens(usage)
        return CliUsage(
            model=stream.model or self.settings.model or "default",
            input_tokens=prompt_tokens,
            output_tokens=int(usage.get("output_tokens") or 0),
            cost_usd=float(result.get("total_cost_usd") or 0.0),
            n_steps=int(result.get("num_turns") or 0),
            extra={
                "stop_reason": str(result.get("subtype") or ""),
                "terminal_reason": str(result.get("terminal_reason") or ""),
                "num_turns": int(result.get("num_turns") or 0),
                "duration_api_ms": result.get("duration_api_ms"),
                "permission_denials": stream.denials,
            },
        )


@plugin("provider")
def create_claude_code(settings: Mapping[str, Any]) -> ClaudeCodeProvider:
    """Build the ``claude_code`` provider from ``--provider-opt`` settings."""
    return ClaudeCodeProvider(parse_settings(ClaudeCodeSettings, "claude_code", settings))
