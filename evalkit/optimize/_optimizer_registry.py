"""The ``optimizer`` kind of the plugin registry: ``--optimizer`` names to factories.

One :class:`evalkit._registry.Registry`, like the providers' and the import formats'. Three
sources, in this order of precedence:

1. factories registered at run time with ``evalkit.register("optimizer", name, factory)``;
2. the built-in optimizers, ``command`` and ``provider``, a table of
   ``name -> "module:factory"`` strings;
3. third-party optimizers, published by installed packages as ``evalkit.plugins`` entry points
   named ``optimizer.NAME`` (or, as before, in the ``evalkit.optimizers`` group).

``--optimizer NAME:ARG`` (or ``NAME``) calls the factory ``NAME`` with ``ARG`` (the empty
string without one) and the ``--optimizer-opt`` settings: ``command:CMD``, ``provider:NAME``.
As for every kind, ``package.module:factory`` that no source knows is imported as a factory
(``package.module:factory:ARG`` passes it ``ARG``). ``python:module:function`` names a plain
function of your own (:class:`~evalkit.optimize.CallableOptimizer`), without a factory.
Whatever a spec imports must declare itself an optimizer: a factory or function marked
``@evalkit.plugin("optimizer")``, or a class deriving from :class:`Optimizer`; anything else
(``python:os:system``) is refused before it is called.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from evalkit._registry import Registry, check_declared, import_attribute, names_a_module
from evalkit.errors import ConfigError
from evalkit.optimize._optimizers import CallableOptimizer, Optimizer

OptimizerFactory = Callable[[str, Mapping[str, Any]], Optimizer]
"""Builds an optimizer from the text after ``NAME:`` and the ``--optimizer-opt`` settings."""

#: The built-in optimizers, imported on first use.
BUILTIN_OPTIMIZERS: Mapping[str, str] = {
    "command": "evalkit.optimize._optimizers:command_optimizer",
    "provider": "evalkit.optimize._optimizers:provider_optimizer",
}

#: The spelling that names a Python function directly: ``python:module:function``.
PYTHON_PREFIX = "python:"


#: Every optimizer factory by name (registered, built-in, installed).
OPTIMIZERS: Registry[OptimizerFactory] = Registry(
    kind="optimizer",
    option="--optimizer",
    field="optimizer",
    builtins=BUILTIN_OPTIMIZERS,
    hint=" (as NAME:ARG, e.g. command:CMD or provider:claude_code; python:module:function "
    "for a plain function)",
    bases=(Optimizer,),
)


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
        UnknownPluginError: No optimizer has that name.
        ConfigError: A function or factory that cannot be imported or is not declared
            ``@evalkit.plugin("optimizer")``, a bad
            setting of a ``command:`` optimizer, or a ``command:`` optimizer with the sandbox
            on and no ``bwrap`` (:class:`~evalkit.sandbox.SandboxUnavailableError`).
    """
    if spec.startswith(PYTHON_PREFIX) and ":" in spec.removeprefix(PYTHON_PREFIX):
        function = spec.removeprefix(PYTHON_PREFIX)
        found = import_attribute(function, "--optimizer")
        check_declared(found, function, "optimizer", f"--optimizer {spec}")
        if not callable(found):
            raise ConfigError(f"--optimizer {spec}: '{function}' is not callable")
        return CallableOptimizer(function, found)
    name, _, argument = spec.partition(":")
    factory = OPTIMIZERS.find(name)
    if factory is None:
        attribute, _, argument = argument.partition(":")
        if not names_a_module(f"{name}:{attribute}"):
            raise OPTIMIZERS.unknown(name)
        factory = OPTIMIZERS.load(f"{name}:{attribute}", name)
    return factory(argument, dict(settings or {}))
