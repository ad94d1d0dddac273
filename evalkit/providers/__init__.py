"""Providers: the agents evalkit runs (simulated, replay, and real CLIs and APIs)."""

from evalkit.providers._anthropic import AnthropicSettings
from evalkit.providers._claude_code import ClaudeCodeSettings
from evalkit.providers._codex import CodexSettings
from evalkit.providers._openai_compat import OpenAICompatSettings
from evalkit.providers._protocol import AgentRequest, Provider, ProviderInfo
from evalkit.providers._recording import RecordingSettings, restore_workspace
from evalkit.providers._redact import redact_response, redact_text
from evalkit.providers._registry import (
    cached_provider,
    create_provider,
    parse_settings,
    provider_names,
    register_provider,
)
from evalkit.providers._subprocess import AgentCrashed
from evalkit.providers._transcript import AgentResponse, Event

__all__ = [
    "AgentCrashed",
    "AgentRequest",
    "AgentResponse",
    "AnthropicSettings",
    "ClaudeCodeSettings",
    "CodexSettings",
    "Event",
    "OpenAICompatSettings",
    "Provider",
    "ProviderInfo",
    "RecordingSettings",
    "cached_provider",
    "create_provider",
    "parse_settings",
    "provider_names",
    "redact_response",
    "redact_text",
    "register_provider",
    "restore_workspace",
]
