"""The provider registry: names to factories, imported only when a provider is asked for.

One :class:`evalkit._registry.Registry`, like the import formats' and the optimizers'. Three
sources, in this order of precedence:

1. factories registered at run time with :func:`register_provider` (one name each);
2. the built-in providers, a table of ``name -> "module:factory"`` strings (this module
   imports none of them, so nothing imports in a circle);
3. third-party providers, published by installed packages under the ``evalkit.providers``
   entry-point group (``name = "package.module:factory"``).

A name containing ``:`` that none of them knows is imported as ``package.module:factory``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from evalkit._registry import Registry
from evalkit.errors import ConfigError
from evalkit.providers._protocol import Provider
from evalkit.providers._settings import ProviderSettings

ProviderFactory = Callable[[Mapping[str, Any]], Provider]
"""Builds a provider from a mapping of settings (raises ``ConfigError`` on bad settings)."""

#: Entry-point group under which installed packages publish provider factories.
ENTRY_POINT_GROUP = "evalkit.providers"

#: The built-in providers, imported on first use.
BUILTIN_PROVIDERS: Mapping[str, str] = {
    "anthropic": "evalkit.providers._anthropic:create_anthropic",
    "claude_code": "evalkit.providers._claude_code:create_claude_code",
    "codex": "evalkit.providers._codex:create_codex",
    "openai_compat": "evalkit.providers._openai_compat:create_openai_compat",
    "recording": "evalkit.providers._recording:create_recording",
    "replay": "evalkit.providers._replay:create_replay",
    "simulated": "evalkit.providers._simulated:create_simulated",
}


def _unknown_provider(name: str) -> ConfigError:
    return ConfigError(
        f"--provider: unknown provider '{name}'; available: {', '.join(provider_names())} "
        f"(or 'package.module:factory' for your own, or a package publishing an "
        f"'{ENTRY_POINT_GROUP}' entry point)"
    )


#: Every provider factory by name (registered, built-in, installed).
PROVIDERS: Registry[ProviderFactory] = Registry(
    option="--provider",
    group=ENTRY_POINT_GROUP,
    builtins=BUILTIN_PROVIDERS,
    unknown=_unknown_provider,
)


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Register a provider factory under ``name``; every other name is left as it was.

    Registering a built-in's name overrides that one built-in in this process.

    Args:
        name: Registry name used by ``--provider``.
        factory: Builds the provider from a mapping of settings.
    """
    PROVIDERS.register(name, factory)


def provider_names() -> tuple[str, ...]:
    """Names of every available provider (registered, built-in and installed), sorted."""
    return tuple(sorted(PROVIDERS.names()))


def create_provider(name: str, settings: Mapping[str, Any] | None = None) -> Provider:
    """Build a provider by name.

    Args:
        name: Registry name, or ``package.module:factory``.
        settings: Provider settings (``--provider-opt`` values and suite settings).

    Returns:
        The provider.

    Raises:
        ConfigError: Unknown provider, a factory that cannot be imported, or invalid settings.
    """
    return _factory(name)(dict(settings or {}))


def _factory(name: str) -> ProviderFactory:
    found = PROVIDERS.find(name)
    if found is not None:
        return found
    if ":" in name:
        return PROVIDERS.load(name, name)
    raise PROVIDERS.unknown(name)


@lru_cache(maxsize=32)
def _cached(name: str, canonical: str) -> Provider:
    return create_provider(name, json.loads(canonical))


def cached_provider(name: str, settings: tuple[tuple[str, Any], ...]) -> Provider:
    """A per-process provider instance, reused across the work items a worker runs.

    Args:
        name: Registry name.
        settings: ``(option, value)`` pairs; values may be lists or mappings (JSON values).

    Returns:
        The provider built once per distinct (name, settings) in this process.
    """
    return _cached(name, settings_json(dict(settings)))


def settings_json(settings: Mapping[str, Any]) -> str:
    """The canonical JSON text of provider settings (sorted keys, no spaces).

    Examples:
        >>> settings_json({"b": (1, 2), "a": {"y": 1, "x": None}})
        '{"a":{"x":null,"y":1},"b":[1,2]}'
    """
    return json.dumps(dict(settings), sort_keys=True, separators=(",", ":"), default=str)


def canonical_settings(provider: Provider, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings that rebuild ``provider`` in a worker process, as JSON values.

    A provider whose ``settings`` attribute is a :class:`ProviderSettings` model gives that
    validated model's JSON form (the options that were set; the worker validates them again
    with the same model, so lists, mappings and normalized values arrive intact). Any other
    provider gives its settings mapping through a JSON round trip.

    Args:
        provider: The provider built from ``settings`` in the parent process.
        settings: The settings it was built from.

    Returns:
        A mapping whose values are JSON values (lists, dicts, strings, numbers, null).
    """
    model = getattr(provider, "settings", None)
    if isinstance(model, ProviderSettings):
        dumped: dict[str, Any] = model.model_dump(mode="json", exclude_unset=True)
        return dumped
    loaded: dict[str, Any] = json.loads(settings_json(settings))
    return loaded
