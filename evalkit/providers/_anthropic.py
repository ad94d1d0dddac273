"""``anthropic``: Claude over the Anthropic Messages API (``POST {base_url}/v1/messages``).

Non-streaming requests with ``x-api-key`` and ``anthropic-version`` headers; the agent loop,
skills index, ``load_skill`` and ``bash`` tools are shared with the other API providers
(:mod:`evalkit.providers._http`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from evalkit._registry import plugin
from evalkit.errors import ServerError
from evalkit.providers._http import (
    Conversation,
    HttpProvider,
    HttpSettings,
    ModelTurn,
    Poster,
    WireConversation,
    parse_arguments,
)
from evalkit.providers._prompting import Toolbox, ToolSpec, ToolUse
from evalkit.providers._settings import OUTCOME, RUNTIME, parse_settings
from evalkit.providers._transcript import anthropic_input_tokens

ANTHROPIC_VERSION = "2023-06-01"


class AnthropicSettings(HttpSettings):
    """Settings of ``anthropic`` (see :class:`HttpSettings` for the shared ones)."""

    api_key_env: Annotated[str, RUNTIME] = "ANTHROPIC_API_KEY"
    """Environment variable holding the key."""
    max_tokens: Annotated[int | None, OUTCOME, Field(ge=1)] = 4096
    """Output token limit per request (the Messages API requires one)."""


class _Messages(WireConversation["AnthropicProvider"]):
    """A Messages API conversation."""

    _last: list[dict[str, Any]]
    """The content blocks of the last call."""

    def wire_tool(self, tool: ToolSpec) -> dict[str, Any]:
        return {"name": tool.name, "description": tool.description,
                "input_schema": tool.parameters}

    def call(self, deadline: float) -> ModelTurn:
        body: dict[str, Any] = {
            "model": self.provider.model,
            "max_tokens": self.provider.settings.max_tokens or 4096,
            "system": self.system,
            "messages": self.messages,
        }
        body.update(self.optional_fields(max_tokens=None, effort=("output_config", "effort")))
        data = self.post(self.provider.messages_path, body, deadline)
        content = data.get("content")
        if not isinstance(content, list):
            raise ServerError("anthropic: malformed response: no content list")
        self._last = [block for block in content if isinstance(block, dict)]
        texts = [str(b.get("text", "")) for b in self._last if b.get("type") == "text"]
        uses = tuple(
            ToolUse(str(b.get("id", "")), str(b.get("name", "")), parse_arguments(b.get("input")))
            for b in self._last
            if b.get("type") == "tool_use"
        )
        usage = data.get("usage") or {}
        prompt_tokens = anthropic_input_tokens(usage)
        return ModelTurn(
            text="\n".join(t for t in texts if t),
            tool_uses=uses,
            input_tokens=prompt_tokens,
            output_tokens=int(usage.get("output_tokens") or 0),
            model=str(data.get("model") or ""),
            stop_reason=str(data.get("stop_reason") or ""),
        )

    def add_results(self, turn: ModelTurn, results: list[tuple[ToolUse, str]]) -> None:
        self.messages.append({"role": "assistant", "content": self._last})
        self.messages.append({
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": use.id, "content": output}
                for use, output in results
            ],
        })


class AnthropicProvider(HttpProvider):
    """An agent on the Anthropic Messages API."""

    name = "anthropic"
    default_base_url = "https://api.anthropic.com"
    settings: AnthropicSettings

    @property
    def messages_path(self) -> str:
        """``/v1/messages``, or ``/messages`` when the base URL already ends in ``/v1``."""
        return "/messages" if self.base_url.endswith("/v1") else "/v1/messages"

    def headers(self) -> dict[str, str]:
        """``x-api-key`` and ``anthropic-version``."""
        return {"x-api-key": self.api_key, "anthropic-version": ANTHROPIC_VERSION}

    def conversation(self, post: Poster, system: str, user: str, toolbox: Toolbox) -> Conversation:
        """A Messages API conversation."""
        return _Messages(self, post, system, user, toolbox.specs)


@plugin("provider")
def create_anthropic(settings: Mapping[str, Any]) -> AnthropicProvider:
    """Build the ``anthropic`` provider from ``--provider-opt`` settings."""
    return AnthropicProvider(parse_settings(AnthropicSettings, "anthropic", settings))
