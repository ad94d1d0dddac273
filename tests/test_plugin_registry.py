"""evalkit._registry: the one registry shape of providers, import formats and optimizers."""

from __future__ import annotations

import os
from typing import Any

import pytest

from evalkit._registry import Registry
from evalkit.errors import ConfigError
from evalkit.interop import _import_registry
from evalkit.optimize import _optimizer_registry
from evalkit.providers import _registry as _provider_registry


def _text(found: Any, spec: str, name: str) -> str:
    if not isinstance(found, str):
        raise ConfigError(f"--thing {name}: '{spec}' is not a string")
    return found


def _registry() -> Registry[str]:
    return Registry(
        option="--thing",
        group="evalkit.no-such-group",
        builtins={"sep": "os:sep", "pathsep": "os:pathsep"},
        validate=_text,
        unknown=lambda name: ConfigError(f"unknown thing {name!r}; available: {_names()}"),
    )


def _names() -> str:
    return ", ".join(_registry().names())


def test_precedence_order_and_lazy_builtins() -> None:
    things = _registry()
    assert things.names() == ("sep", "pathsep")
    assert things.get("sep") == os.sep
    things.register("sep", "|")
    things.register("dash", "-")
    assert things.get("sep") == "|" and things.names() == ("sep", "pathsep", "dash")
    assert things.find("nope") is None


def test_one_error_for_an_unknown_name_and_for_a_bad_spec() -> None:
    things = _registry()
    with pytest.raises(ConfigError, match="unknown thing 'nope'; available: sep, pathsep"):
        things.get("nope")
    with pytest.raises(ConfigError, match="--thing x: cannot import 'no_such_module:y'"):
        things.load("no_such_module:y", "x")
    with pytest.raises(ConfigError, match="--thing x: 'os:getcwd' is not a string"):
        things.load("os:getcwd", "x")


def test_the_three_plugin_kinds_share_it() -> None:
    groups = {
        registry.group
        for registry in (
            _provider_registry.PROVIDERS, _import_registry.IMPORTERS, _optimizer_registry.OPTIMIZERS
        )
        if isinstance(registry, Registry)
    }
    assert groups == {"evalkit.providers", "evalkit.importers", "evalkit.optimizers"}
