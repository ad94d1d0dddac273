"""The provider protocol: how evalkit talks to any agent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from evalkit.cases import Case, SkillExposure
from evalkit.providers._transcript import AgentResponse


@dataclass(frozen=True)
class AgentRequest:
    """Everything a provider needs to run one work item.

    Attributes:
        item_key: The work item's stable key (for logs and recordings).
        case: The case.
        condition: Condition name.
        exposure: What skill text the condition exposes (injected or discoverable).
        workspace: The item's hermetic workspace directory.
        seed: The item's seed (spawned from the run seed).
        timeout_s: Wall-clock budget of the invocation.
        max_steps: Step ceiling, when the case sets one.
        log: Buffered, item-prefixed logger.
    """

    item_key: str
    case: Case
    condition: str
    exposure: tuple[SkillExposure, ...]
    workspace: Path
    seed: int
    timeout_s: float
    max_steps: int | None = None
    log: Callable[[str], None] = print

    @property
    def injected(self) -> tuple[SkillExposure, ...]:
        """Skills injected up front (``preloaded`` mode)."""
        return tuple(e for e in self.exposure if e.mode == "preloaded")

    @property
    def discoverable(self) -> tuple[SkillExposure, ...]:
        """Skills the agent may decide to load (``self-load`` mode)."""
        return tuple(e for e in self.exposure if e.mode == "self-load")


@dataclass(frozen=True)
class ProviderInfo:
    """Identity of a provider, detected once per run.

    Attributes:
        name: Registry name, e.g. ``simulated``.
        model: Model identifier.
        version: Provider or CLI version.
    """

    name: str
    model: str
    version: str


@runtime_checkable
class Provider(Protocol):
    """An agent evalkit can run a work item against.

    Providers are created per worker process from their name and settings, so they need not be
    picklable; ``invoke`` must be safe to call from several threads.
    """

    name: str

    def info(self) -> ProviderInfo:
        """Identity of the provider (name, model, version)."""
        ...

    def outcome_settings(self) -> dict[str, Any]:
        """Settings that can change an outcome; they enter the item hash."""
        ...

    def invoke(self, request: AgentRequest) -> AgentResponse:
        """Run the agent on one work item.

        Raises:
            evalkit.errors.InfraError: A retryable infrastructure failure.
            evalkit.errors.ProviderError: A non-retryable failure.
        """
        ...
