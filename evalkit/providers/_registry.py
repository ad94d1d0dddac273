"""The provider registry: names to factories, settings validated by pydantic."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from evalkit.errors import ConfigError
from evalkit.providers._protocol import Provider

S = TypeVar("S", bound=BaseModel)

ProviderFactory = Callable[[Mapping[str, Any]], Provider]

_REGISTRY: dict[str, ProviderFactory] = {}


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Register a provider factory under ``name`` (the extension point for new agents).

    Args:
        name: Registry name used by ``--provider``.
        factory: Builds the provider from a mapping of settings.
    """
    _REGISTRY[name] = factory


def provider_names() -> tuple[str, ...]:
    """Names of every registered provider, sorted."""
    _load_builtin()
    return tuple(sorted(_REGISTRY))


def create_provider(name: str, settings: Mapping[str, Any] | None = None) -> Provider:
    """Build a provider by name.

    Args:
        name: Registry name.
        settings: Provider settings (``--provider-opt`` values and suite settings).

    Returns:
        The provider.

    Raises:
        ConfigError: Unknown provider or invalid settings.
    """
    _load_builtin()
    factory = _REGISTRY.get(name)
    if factory is None and ":" in name:
        factory = _import_factory(name)
    if factory is None:
        known = ", ".join(sorted(_REGISTRY))
        raise ConfigError(
            f"--provider: unknown provider '{name}'; available: {known} "
            "(or 'package.module:factory' for your own)"
        )
    return factory(dict(settings or {}))


@lru_cache(maxsize=32)
def cached_provider(name: str, settings: tuple[tuple[str, Any], ...]) -> Provider:
    """A per-process provider instance, reused across the work items a worker runs."""
    return create_provider(name, dict(settings))


def parse_settings(model: type[S], provider: str, settings: Mapping[str, Any]) -> S:
    """Validate provider settings, with errors naming the option and the fix.

    Raises:
        ConfigError: An unknown option or a value of the wrong type.
    """
    try:
        return model.model_validate(dict(settings))
    except ValidationError as exc:
        allowed = ", ".join(sorted(model.model_fields))
        lines = []
        for err in exc.errors():
            option = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                lines.append(f"unknown option '{option}' (allowed: {allowed})")
            else:
                lines.append(f"option '{option}': {err['msg']}")
        raise ConfigError(f"--provider-opt for '{provider}': " + "; ".join(lines)) from None


def _import_factory(spec: str) -> ProviderFactory:
    """Import ``package.module:factory`` (a provider outside evalkit)."""
    import importlib

    module_name, _, attr = spec.partition(":")
    try:
        factory: ProviderFactory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"--provider: cannot import '{spec}': {exc}") from None
    return factory


def _load_builtin() -> None:
    if "simulated" not in _REGISTRY:
        from evalkit.providers import _builtin  # noqa: F401  (registers on import)
