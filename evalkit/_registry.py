"""One shape for evalkit's plugin registries: providers, import formats and optimizers.

A :class:`Registry` maps names to entries from three sources, in this order of precedence:

1. entries registered at run time with :meth:`Registry.register` (one name each);
2. the built-ins, a table whose values are ``"module:attribute"`` strings imported on first
   use (so the module holding the table imports none of them) or ready entries;
3. third-party entries, published by installed packages under the registry's entry-point group
   (``name = "package.module:attribute"``), read once per process.

Nothing is imported before its name is asked for, a name that none of the sources knows is
one error listing the names that exist, and a spec that cannot be imported or imports
something else is a :class:`~evalkit.errors.ConfigError` naming the option and the spec.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from evalkit.errors import ConfigError

T = TypeVar("T")


def import_attribute(spec: str, label: str) -> Any:
    """Import ``package.module:attribute``.

    Args:
        spec: ``package.module:attribute``.
        label: What asked for it, starting the error message (``--provider codex``).

    Returns:
        The attribute.

    Raises:
        ConfigError: The module or the attribute cannot be imported.
    """
    module_name, _, attribute = spec.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"{label}: cannot import '{spec}': {exc}") from None


class Registry(Generic[T]):
    """Names to entries: run-time registrations, lazy built-ins, entry-point plugins.

    Args:
        option: The command-line option the names are given to (``--provider``), starting
            the messages of entries that cannot be imported.
        group: The entry-point group installed packages publish entries under.
        builtins: The built-in entries, in the order :meth:`names` lists them: each a
            ``"module:attribute"`` string imported on first use, or the entry itself.
        validate: Checks an imported entry, ``validate(value, spec, name)``, and returns it
            (raises ``ConfigError`` for a value that is not an entry of this kind); by
            default an entry is a factory: anything callable.
        unknown: The error for a name that no source knows, ``unknown(name)`` (its message
            lists :meth:`names`).
    """

    def __init__(
        self,
        *,
        option: str,
        group: str,
        builtins: Mapping[str, T | str],
        unknown: Callable[[str], Exception],
        validate: Callable[[Any, str, str], T] | None = None,
    ) -> None:
        self.option = option
        self.group = group
        self.builtins = builtins
        self.registered: dict[str, T] = {}
        self._validate = validate or self._callable
        self._unknown = unknown
        self._plugins: dict[str, str] | None = None

    def register(self, name: str, entry: T) -> None:
        """Register ``entry`` under ``name``; every other name is left as it was.

        Registering a built-in's name overrides that one built-in in this process.
        """
        self.registered[name] = entry

    def plugin_specs(self) -> dict[str, str]:
        """``name -> "module:attribute"`` of the installed entry points of the group."""
        if self._plugins is None:
            self._plugins = {ep.name: ep.value for ep in entry_points(group=self.group)}
        return self._plugins

    def reload_plugins(self) -> None:
        """Read the installed entry points again at the next lookup (after an install)."""
        self._plugins = None

    def names(self) -> tuple[str, ...]:
        """Every available name: the built-ins in their order, then the others sorted."""
        others = sorted({*self.registered, *self.plugin_specs()} - set(self.builtins))
        return (*self.builtins, *others)

    def find(self, name: str) -> T | None:
        """The entry called ``name``, or None when no source knows it.

        Raises:
            ConfigError: Its spec cannot be imported, or imports something that is not an
                entry of this kind.
        """
        if name in self.registered:
            return self.registered[name]
        builtin = self.builtins.get(name)
        if builtin is not None and not isinstance(builtin, str):
            return builtin
        spec = builtin or self.plugin_specs().get(name)
        return None if spec is None else self.load(spec, name)

    def get(self, name: str) -> T:
        """The entry called ``name``.

        Raises:
            ConfigError: Its spec cannot be imported or is not an entry of this kind.
            Exception: The registry's ``unknown`` error when no source knows the name.
        """
        found = self.find(name)
        if found is None:
            raise self.unknown(name)
        return found

    def _callable(self, found: Any, spec: str, name: str) -> T:
        """The default check: a factory entry is anything callable."""
        if not callable(found):
            raise ConfigError(f"{self.option} {name}: '{spec}' is not callable")
        entry: T = found
        return entry

    def load(self, spec: str, name: str) -> T:
        """Import the entry ``spec`` (``package.module:attribute``) asked for as ``name``."""
        return self._validate(import_attribute(spec, f"{self.option} {name}"), spec, name)

    def unknown(self, name: str) -> Exception:
        """The error for a name that no source knows (it lists the names that exist)."""
        return self._unknown(name)
