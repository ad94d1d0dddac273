"""Providers: the agents evalkit runs (simulated, replay, and real CLIs and APIs)."""

from evalkit.providers._protocol import AgentRequest, Provider, ProviderInfo
from evalkit.providers._registry import (
    cached_provider,
    create_provider,
    parse_settings,
    provider_names,
    register_provider,
)
from evalkit.providers._transcript import AgentResponse, Event

__all__ = [
    "AgentRequest",
    "AgentResponse",
    "Event",
    "Provider",
    "ProviderInfo",
    "cached_provider",
    "create_provider",
    "parse_settings",
    "provider_names",
    "register_provider",
]
