"""The ``provider`` kind of the plugin registry: names to factories, imported when asked for.

One :class:`evalkit._registry.Registry`, like the import formats' and the optimizers'. Three
sources, in this order of precedence:

1. factories registered at run time with ``evalkit.register("provider", name, factory)``;
2. the built-in providers, a table of ``name -> "module:factory"`` strings (this module
   imports none of them, so nothing imports in a circle);
3. third-party providers, published by installed packages as ``evalkit.plugins`` entry points
   named ``provider.NAME`` (or, as before, in the ``evalkit.providers`` group).

A name containing ``:`` that none of them knows is imported as ``package.module:factory``.
Whatever a spec imports must declare itself a provider: a factory marked
``@evalkit.plugin("provider")`` or a class deriving from :class:`Provider`; anything else
(``subprocess:Popen``) is refused before it is called.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from evalkit._registry import Registry
from evalkit.providers._protocol import Provider
from evalkit.providers._settings import ProviderSettings

ProviderFactory = Callable[[Mapping[str, Any]], Provider]
"""Builds a provider from a mapping of settings (raises ``ConfigError`` on bad settings)."""

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


#: Every provider factory by name (registered, built-in, installed).
PROVIDERS: Registry[ProviderFactory] = Registry(
    kind="provider",
    option="--provider",
    field="provider",
    builtins=BUILTIN_PROVIDERS,
    bases=(Provider,),
)


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
        UnknownPluginError: No provider has that name.
        ConfigError: A factory that cannot be imported, or invalid settings.
    """
    return PROVIDERS.get(name)(dict(settings or {}))


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
