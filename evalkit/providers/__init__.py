"""Providers: the agents evalkit runs (simulated, replay, and real CLIs and APIs).

Each provider is built by a factory from a mapping of settings (see
:func:`create_provider`); built-ins are imported on first use, third-party ones are the
``provider`` plugins of :func:`evalkit.register` and of the ``evalkit.plugins`` entry-point
group.
"""

__all__ = [
    "OUTCOME",
    "RUNTIME",
    "AgentRequest",
    "AgentResponse",
    "AgentSettings",
    "CliAgentProvider",
    "CliSettings",
    "Event",
    "HttpProvider",
    "HttpSettings",
    "Provider",
    "ProviderInfo",
    "ProviderSettings",
    "create_provider",
    "parse_settings",
    "register_secret_env",
    "restore_workspace",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit._redact import (
        redact_text as redact_text,
        register_secret_env,
    )
    from evalkit.errors import AgentCrashed as AgentCrashed
    from evalkit.providers._anthropic import AnthropicSettings as AnthropicSettings
    from evalkit.providers._claude_code import ClaudeCodeSettings as ClaudeCodeSettings
    from evalkit.providers._cli_agent import CliAgentProvider, CliSettings
    from evalkit.providers._codex import CodexSettings as CodexSettings
    from evalkit.providers._http import HttpProvider, HttpSettings
    from evalkit.providers._limiter import (
        Limiter as Limiter,
    )
    from evalkit.providers._openai_compat import OpenAICompatSettings as OpenAICompatSettings
    from evalkit.providers._protocol import AgentRequest, Provider, ProviderInfo
    from evalkit.providers._recording import (
        RecordingSettings as RecordingSettings,
        restore_workspace,
    )
    from evalkit.providers._redact import (
        redact_response as redact_response,
    )
    from evalkit.providers._registry import (
        BUILTIN_PROVIDERS as BUILTIN_PROVIDERS,
        ProviderFactory as ProviderFactory,
        cached_provider as cached_provider,
        canonical_settings as canonical_settings,
        create_provider,
        provider_names as provider_names,
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
