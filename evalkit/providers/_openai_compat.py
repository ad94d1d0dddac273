"""``openai_compat``: any OpenAI-compatible server over httpx (OpenAI, vLLM, Ollama, llama.cpp).

Two wire formats (``api`` setting): ``chat`` (Chat Completions, ``POST {base_url}/chat/
completions``; the one every compatible server speaks) and ``responses`` (the Responses API,
``POST {base_url}/responses``, ``store: false``). The agent loop, skills index, ``load_skill``
and ``bash`` tools are shared with the other API providers (:mod:`evalkit.providers._http`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

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


class OpenAICompatSettings(HttpSettings):
    """Settings of ``openai_compat`` (see :class:`HttpSettings` for the shared ones)."""

    api: Annotated[Literal["chat", "responses"], OUTCOME] = "chat"
    """Wire format: ``chat`` (Chat Completions) or ``responses`` (Responses API)."""
    api_key_env: Annotated[str, RUNTIME] = "OPENAI_API_KEY"
    """Environment variable holding the key; optional when ``base_url`` is a local server."""


class _Chat(WireConversation["OpenAICompatProvider"]):
    """A Chat Completions conversation."""

    _last: dict[str, Any]
    """The assistant message of the last call."""

    def wire_tool(self, tool: ToolSpec) -> dict[str, Any]:
        return {"type": "function", "function": {"name": tool.name,
                                                 "description": tool.description,
                                                 "parameters": tool.parameters}}

    def call(self, deadline: float) -> ModelTurn:
        body: dict[str, Any] = {
            "model": self.provider.model,
            "messages": [{"role": "system", "content": self.system}, *self.messages],
        }
        body.update(self.optional_fields(max_tokens="max_tokens", effort=("reasoning_effort",)))
        data = self.post("/chat/completions", body, deadline)
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise _malformed("chat completion without choices[0].message") from exc
        self._last = message
        uses = tuple(
            ToolUse(str(c.get("id", "")), str(c["function"].get("name", "")),
                    parse_arguments(c["function"].get("arguments")))
            for c in message.get("tool_calls") or []
            if isinstance(c, dict) and isinstance(c.get("function"), dict)
        )
        usage = data.get("usage") or {}
        return ModelTurn(
            text=str(message.get("content") or ""),
            tool_uses=uses,
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            model=str(data.get("model") or ""),
            stop_reason=str(choice.get("finish_reason") or ""),
        )

    def add_results(self, turn: ModelTurn, results: list[tuple[ToolUse, str]]) -> None:
        assistant = {"role": "assistant", "content": self._last.get("content"),
                     "tool_calls": self._last.get("tool_calls")}
        self.messages.append(assistant)
        for use, output in results:
            self.messages.append({"role": "tool", "tool_call_id": use.id, "content": output})


class _Responses(WireConversation["OpenAICompatProvider"]):
    """A Responses API conversation (``store: false``; the whole input is resent)."""

    _last: list[dict[str, Any]]
    """The output items of the last call."""

    def wire_tool(self, tool: ToolSpec) -> dict[str, Any]:
        return {"type": "function", "name": tool.name, "description": tool.description,
                "parameters": tool.parameters}

    def call(self, deadline: float) -> ModelTurn:
        body: dict[str, Any] = {
            "model": self.provider.model,
            "instructions": self.system,
            "input": self.messages,
            "store": False,
        }
        body.update(
            self.optional_fields(max_tokens="max_output_tokens", effort=("reasoning", "effort"))
        )
        data = self.post("/responses", body, deadline)
        output = data.get("output")
        if not isinstance(output, list):
            raise _malformed("response without an output list")
        self._last = [item for item in output if isinstance(item, dict)]
        texts, uses = [], []
        for item in self._last:
            if item.get("type") == "message":
                texts += [
                    str(part.get("text", "")) for part in item.get("content") or []
                    if isinstance(part, dict) and part.get("type") == "output_text"
                ]
            elif item.get("type") == "function_call":
                uses.append(ToolUse(str(item.get("call_id", "")), str(item.get("name", "")),
                                    parse_arguments(item.get("arguments"))))
        usage = data.get("usage") or {}
        return ModelTurn(
            text="\n".join(t for t in texts if t),
            tool_uses=tuple(uses),
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            model=str(data.get("model") or ""),
            stop_reason=str(data.get("status") or ""),
        )

    def add_results(self, turn: ModelTurn, results: list[tuple[ToolUse, str]]) -> None:
        # reasoning items cannot be resent without server-side storage: keep the rest
        self.messages += [
            item for item in self._last if item.get("type") in ("message", "function_call")
        ]
        self.messages += [
            {"type": "function_call_output", "call_id": use.id, "output": output}
            for use, output in results
        ]


def _malformed(what: str) -> ServerError:
    return ServerError(f"openai_compat: malformed response: {what}")


class OpenAICompatProvider(HttpProvider):
    """An agent on an OpenAI-compatible server (Chat Completions or Responses)."""

    name = "openai_compat"
    default_base_url = "https://api.openai.com/v1"
    settings: OpenAICompatSettings

    def __init__(self, settings: OpenAICompatSettings) -> None:
        # a local server (vLLM, Ollama, llama.cpp) usually needs no key
        self.key_required = not settings.base_url
        super().__init__(settings)

    def headers(self) -> dict[str, str]:
        """Bearer authentication when a key is set."""
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def conversation(self, post: Poster, system: str, user: str, toolbox: Toolbox) -> Conversation:
        """A Chat Completions or Responses conversation, per the ``api`` setting."""
        kind = _Chat if self.settings.api == "chat" else _Responses
        return kind(self, post, system, user, toolbox.specs)


@plugin("provider")
def create_openai_compat(settings: Mapping[str, Any]) -> OpenAICompatProvider:
    """Build the ``openai_compat`` provider from ``--provider-opt`` settings."""
    return OpenAICompatProvider(
        parse_settings(OpenAICompatSettings, "openai_compat", settings)
    )
