"""A provider that counts its invocations (wraps the simulated agent) for cache tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import evalkit
from evalkit.providers import AgentRequest, AgentResponse, ProviderInfo
from evalkit.providers._simulated import create_simulated
from evalkit.results import append_line


class CountingProvider:
    name = "counting"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        settings = dict(settings)
        self.count_file = settings.pop("count_file")
        self.inner = create_simulated(settings)

    def info(self) -> ProviderInfo:
        return self.inner.info()

    def outcome_settings(self) -> dict[str, Any]:
        return self.inner.outcome_settings()

    def invoke(self, request: AgentRequest) -> AgentResponse:
        append_line(self.count_file, request.item_key)
        return self.inner.invoke(request)


@evalkit.plugin("provider")
def create(settings: Mapping[str, Any]) -> CountingProvider:
    return CountingProvider(settings)
