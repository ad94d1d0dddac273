"""Providers: the agents evalkit runs (simulated, replay, and real CLIs and APIs).

Each provider is built by a factory from a mapping of settings (see
:func:`create_provider`); built-ins are imported on first use, third-party ones are the
``provider`` plugins of :func:`evalkit.register` and of the ``evalkit.plugins`` entry-point
group.
"""

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit._redact import (
        redact_text as redact_text,
        register_secret_env,
    )
    from evalkit.errors import AgentCrashed
    from evalkit.providers._anthropic import AnthropicSettings
    from evalkit.providers._claude_code import ClaudeCodeSettings
    from evalkit.providers._cli_agent import CliAgentProvider, CliSettings
    from evalkit.providers._codex import CodexSettings
    from evalkit.providers._http import HttpProvider, HttpSettings
    from evalkit.providers._limiter import (
        Limiter as Limiter,
    )
    from evalkit.providers._openai_compat import OpenAICompatSettings
    from evalkit.providers._protocol import AgentRequest, Provider, ProviderInfo
    from evalkit.providers._recording import RecordingSettings, restore_workspace
    from evalkit.providers._redact import (
        redact_response as redact_response,
    )
    from evalkit.providers._registry import (
        BUILTIN_PROVIDERS,
        ProviderFactory,
        cached_provider as cached_provider,
        canonical_settings as canonical_settings,
        create_provider,
        provider_names,
    )
    from evalkit.providers._settings import (
        OUTCOME,
        RUNTIME,
        AgentSettings,
        ProviderSettings,
        parse_settings,
    )
    from evalkit.providers._transcript import AgentResponse, Event
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)

__all__ = [
    "BUILTIN_PROVIDERS",
    "OUTCOME",
    "RUNTIME",
    "AgentCrashed",
    "AgentRequest",
    "AgentResponse",
    "AgentSettings",
    "AnthropicSettings",
    "ClaudeCodeSettings",
    "CliAgentProvider",
    "CliSettings",
    "CodexSettings",
    "Event",
    "HttpProvider",
    "HttpSettings",
    "OpenAICompatSettings",
    "Provider",
    "ProviderFactory",
    "ProviderInfo",
    "ProviderSettings",
    "RecordingSettings",
    "create_provider",
    "parse_settings",
    "provider_names",
    "register_secret_env",
    "restore_workspace",
]
