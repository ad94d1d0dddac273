"""The optimizer registry: ``--optimizer`` names to factories, imported only when one is used.

One :class:`evalkit._registry.Registry`, like the providers' and the import formats'. Three
sources, in this order of precedence:

1. factories registered at run time with :func:`register_optimizer` (one name each);
2. the built-in optimizers, ``command`` and ``provider``, a table of
   ``name -> "module:factory"`` strings;
3. third-party optimizers, published by installed packages under the ``evalkit.optimizers``
   entry-point group (``name = "package.module:factory"``).

``--optimizer NAME:ARG`` (or ``NAME``) calls the factory ``NAME`` with ``ARG`` (the empty
string without one) and the ``--optimizer-opt`` settings: ``command:CMD``, ``provider:NAME``.
``python:module:function`` names a function of your own directly
(:class:`~evalkit.optimize.CallableOptimizer`), without registering it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from evalkit._registry import Registry, import_attribute
from evalkit.errors import ConfigError
from evalkit.optimize._optimizers import CallableOptimizer, Optimizer

OptimizerFactory = Callable[[str, Mapping[str, Any]], Optimizer]
"""Builds an optimizer from the text after ``NAME:`` and the ``--optimizer-opt`` settings."""

#: Entry-point group under which installed packages publish optimizer factories.
ENTRY_POINT_GROUP = "evalkit.optimizers"

#: The built-in optimizers, imported on first use.
BUILTIN_OPTIMIZERS: Mapping[str, str] = {
    "command": "evalkit.optimize._optimizers:command_optimizer",
    "provider": "evalkit.optimize._optimizers:provider_optimizer",
}

#: The spelling that names a Python function directly: ``python:module:function``.
PYTHON_PREFIX = "python:"


def _unknown_optimizer(name: str) -> ConfigError:
    return ConfigError(
        f"--optimizer: unknown optimizer '{name}'; available: {', '.join(optimizer_names())} "
        "(as NAME:ARG, e.g. command:CMD or provider:claude_code), or python:module:function "
        f"for your own, or a package publishing an '{ENTRY_POINT_GROUP}' entry point"
    )


#: Every optimizer factory by name (registered, built-in, installed).
OPTIMIZERS: Registry[OptimizerFactory] = Registry(
    option="--optimizer",
    group=ENTRY_POINT_GROUP,
    builtins=BUILTIN_OPTIMIZERS,
    unknown=_unknown_optimizer,
)


def register_optimizer(name: str, factory: OptimizerFactory) -> None:
    """Register an optimizer factory under ``name``; every other name is left as it was.

    Registering a built-in's name overrides that one built-in in this process.

    Args:
        name: The name ``--optimizer NAME[:ARG]`` uses.
        factory: ``factory(arg, settings)`` builds the optimizer.
    """
    OPTIMIZERS.register(name, factory)


def optimizer_names() -> tuple[str, ...]:
    """Every available optimizer name: the built-ins, then the others sorted."""
    return OPTIMIZERS.names()


def load_optimizer(spec: str, settings: Mapping[str, Any] | None = None) -> Optimizer:
    """Build an optimizer from ``NAME[:ARG]`` or ``python:module:function``.

    Args:
        spec: The optimizer: ``command:CMD``, ``provider:NAME``, ``python:module:function``,
            or a registered or installed ``NAME`` / ``NAME:ARG``.
        settings: Its ``--optimizer-opt`` settings: a ``provider:`` optimizer's provider
            settings; a ``command:`` optimizer's ``read`` (comma-separated paths it may read),
            ``network`` and ``timeout_s``.

    Raises:
        ConfigError: Unknown name, a function or factory that cannot be imported, a bad
            setting of a ``command:`` optimizer, or a ``command:`` optimizer with the sandbox
            on and no ``bwrap`` (:class:`~evalkit.sandbox.SandboxUnavailableError`).
    """
    if spec.startswith(PYTHON_PREFIX) and ":" in spec.removeprefix(PYTHON_PREFIX):
        function = spec.removeprefix(PYTHON_PREFIX)
        return CallableOptimizer(function, import_attribute(function, "--optimizer"))
    name, _, argument = spec.partition(":")
    return OPTIMIZERS.get(name)(argument, dict(settings or {}))
