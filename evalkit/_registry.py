"""evalkit's one plugin registry, keyed by kind: providers, import formats and optimizers.

Every kind is a :class:`Registry` of the same shape, found by :func:`registry` from the kind's
name (:data:`PLUGIN_KINDS`). A kind's names come from three sources, in this order of
precedence:

1. entries registered at run time with :func:`register` (``register(kind, name, entry)``);
2. the built-ins, a table whose values are ``"module:attribute"`` strings imported on first
   use (so the module holding the table imports none of them) or ready entries;
3. third-party entries, published by installed packages under the one entry-point group
   :data:`ENTRY_POINT_GROUP` with the name ``KIND.NAME`` (``provider.echo =
   "evalkit_echo:create_echo"``), read once per process.

One spec syntax: wherever a name is asked for (``--provider``, ``--format``, ``--optimizer``),
``package.module:attribute`` that no source knows is imported as an entry of that kind. One
error for a name nobody knows: :class:`~evalkit.errors.UnknownPluginError`, listing the names
that exist; a spec that cannot be imported, or imports something that is not an entry of the
kind, is a :class:`~evalkit.errors.ConfigError` naming the option and the spec.

Whatever is imported by a spec (a built-in's, an entry point's, one written on the command
line or in a suite) must **declare itself** a plugin of the kind before anything is called: a
factory marked with :func:`plugin` (``@evalkit.plugin("provider")``), a class deriving from
one of the kind's base classes (``Registry.bases``: the ``Provider`` and ``Optimizer``
protocols), or an instance of one (an :class:`evalkit.interop.Importer`). Anything else,
``subprocess:Popen``, ``os:system`` or ``builtins:eval``, is refused by
:func:`check_declared` with a ``ConfigError`` naming the spec and the kind (exit 2), and is
never called. Entries registered at run time with :func:`register` are the caller's own
objects and need no mark.

Examples:
    >>> import evalkit
    >>> "simulated" in evalkit.plugin_names("provider")
    True
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from evalkit.errors import ConfigError, UnknownPluginError

T = TypeVar("T")
EntryT = TypeVar("EntryT")

#: The attribute :func:`plugin` sets on a factory: the plugin kinds it declares itself for.
PLUGIN_MARK = "__evalkit_plugin__"

#: The entry-point group every kind of plugin is published under, named ``KIND.NAME``.
ENTRY_POINT_GROUP = "evalkit.plugins"

#: Each plugin kind and the registry that holds it (imported on first use of the kind).
PLUGIN_KINDS: Mapping[str, str] = {
    "provider": "evalkit.providers._registry:PROVIDERS",
    "importer": "evalkit.interop._import_registry:IMPORTERS",
    "optimizer": "evalkit.optimize._optimizer_registry:OPTIMIZERS",
    "suite_format": "evalkit.cases._suite_formats:SUITE_FORMATS",
    "compare_metric": "evalkit.analysis._compare_metrics:COMPARE_METRICS",
}


def plugin(kind: str) -> Callable[[EntryT], EntryT]:
    """Declare a factory (or class) a plugin of ``kind``, so that a spec may name it.

    A spec ``package.module:attribute`` resolves only to an object that declared itself a
    plugin of the kind asked for; this decorator is that declaration. It returns the object
    unchanged, marked with the kind (:data:`PLUGIN_MARK`); one object may declare several
    kinds by stacking the decorator.

    Args:
        kind: ``provider``, ``importer``, ``optimizer`` or ``suite_format`` (:data:`PLUGIN_KINDS`).

    Returns:
        The decorator.

    Raises:
        ConfigError: No such kind.

    Examples:
        >>> import evalkit
        >>> @evalkit.plugin("optimizer")
        ... def propose(context):
        ...     return None
        >>> sorted(propose.__evalkit_plugin__)
        ['optimizer']
    """
    if kind not in PLUGIN_KINDS:
        raise ConfigError(f"unknown plugin kind {kind!r}; kinds: {', '.join(PLUGIN_KINDS)}")

    def mark(entry: EntryT) -> EntryT:
        kinds = frozenset(_own_marks(entry)) | {kind}
        try:
            setattr(entry, PLUGIN_MARK, kinds)
        except (AttributeError, TypeError):
            raise ConfigError(
                f"evalkit.plugin({kind!r}) cannot mark {entry!r}: declare a function or a class "
                "of your own"
            ) from None
        return entry

    return mark


def _own_marks(entry: object) -> frozenset[str]:
    """The kinds ``entry`` itself was marked with (not a mark its class or a base carries)."""
    own = getattr(entry, "__dict__", None)
    marks = own.get(PLUGIN_MARK) if isinstance(own, Mapping) else None
    return marks if isinstance(marks, frozenset) else frozenset()


def declares(entry: object, kind: str, bases: tuple[type, ...] = ()) -> bool:
    """Whether ``entry`` declared itself a plugin of ``kind``.

    It did when it carries the mark of :func:`plugin` for that kind (on itself, not through
    its class), when it is a class deriving from one of ``bases`` by name (``class
    Mine(Provider)``, not a class that happens to have the same methods), or when it is an
    instance of such a class (an ``Importer``). Nothing is called to decide it.

    Args:
        entry: What a spec imported.
        kind: The plugin kind asked for.
        bases: The kind's base classes (``Registry.bases``).

    Returns:
        True when ``entry`` may be used as a plugin of ``kind``.
    """
    if kind in _own_marks(entry):
        return True
    klass = entry if isinstance(entry, type) else type(entry)
    return any(base in klass.__mro__ for base in bases)


def check_declared(
    entry: object, spec: str, kind: str, label: str, bases: tuple[type, ...] = ()
) -> None:
    """Refuse an imported ``entry`` that did not declare itself a plugin of ``kind``.

    Args:
        entry: What ``spec`` imported (it is not called).
        spec: ``package.module:attribute``.
        kind: The plugin kind asked for.
        label: What asked for it, starting the message (``--provider subprocess:Popen``).
        bases: The kind's base classes.

    Raises:
        ConfigError: ``entry`` is not a declared plugin of ``kind`` (exit 2).
    """
    if declares(entry, kind, bases):
        return
    what = type(entry).__name__ if not isinstance(entry, type) else "class"
    named = " or ".join(b.__name__ for b in bases)
    derive = f", or derive its class from {named}" if bases else ""
    article = "an" if kind[0] in "aeiou" else "a"
    raise ConfigError(
        f"{label}: '{spec}' is a {what} that is not declared {article} {kind} plugin, so "
        f"evalkit does not call it; declare one with @evalkit.plugin({kind!r}){derive} (see "
        "docs/architecture.md, 'Plugins')"
    )


def not_an_instance(found: Any, spec: str, label: str, public: str) -> ConfigError:
    """The error for an entry of an instance kind that is not an instance of the kind's type.

    Args:
        found: What a registration or a spec gave.
        spec: Where it came from (``package.module:attribute``).
        label: What asked for it, starting the message (``--format NAME``).
        public: The type as a user imports it (``an evalkit.interop.Importer``).

    Returns:
        The :class:`ConfigError` to raise (exit 2).
    """
    return ConfigError(f"{label}: '{spec}' is a {type(found).__name__}, not {public}")


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


def names_a_module(spec: str) -> bool:
    """Whether ``spec`` reads as ``package.module:attribute`` rather than a mistyped name.

    A dotted module path always does (importing it then says what is missing); a bare word
    before the colon does only when such a module exists, so ``comand:CMD`` is an unknown
    name listing the names that exist, not a failed import.
    """
    module, colon, attribute = spec.partition(":")
    if not (colon and module and attribute):
        return False
    if "." in module:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


class Registry(Generic[T]):
    """The names of one plugin kind: run-time registrations, lazy built-ins, entry points.

    Args:
        kind: The plugin kind (``provider``), a key of :data:`PLUGIN_KINDS`.
        option: The command-line option the names are given to (``--provider``), starting
            the messages of entries that cannot be imported.
        field: The Python parameter or configuration field they are given to (``provider``).
        builtins: The built-in entries, in the order :meth:`names` lists them: each a
            ``"module:attribute"`` string imported on first use, or the entry itself.
        validate: Checks an entry, ``validate(value, spec, name)``, and returns it (raises
            ``ConfigError`` for a value that is not an entry of this kind); by default an
            entry is a factory: anything callable.
        hint: Text added after the list of names in the unknown-name error (how to spell a
            name with an argument, for instance).
        bases: The kind's base classes: a class deriving from one (or an instance of one)
            declares itself an entry of the kind (:func:`declares`); any other entry imported
            by a spec must carry the mark of :func:`plugin`.
    """

    def __init__(
        self,
        *,
        kind: str,
        option: str,
        field: str,
        builtins: Mapping[str, T | str],
        validate: Callable[[Any, str, str], T] | None = None,
        hint: str = "",
        bases: tuple[type, ...] = (),
    ) -> None:
        self.kind = kind
        self.option = option
        self.field = field
        self.group = ENTRY_POINT_GROUP
        self.builtins = builtins
        self.hint = hint
        self.bases = bases
        self.registered: dict[str, T] = {}
        self._validate = validate or self._callable
        self._plugins: dict[str, str] | None = None

    def register(self, name: str, entry: T) -> None:
        """Register ``entry`` under ``name``; every other name is left as it was.

        Registering a built-in's name overrides that one built-in in this process.

        Raises:
            ConfigError: ``entry`` is not an entry of this kind.
        """
        label = getattr(entry, "__qualname__", type(entry).__name__)
        self.registered[name] = self._validate(entry, label, name)

    def plugin_specs(self) -> dict[str, str]:
        """``name -> "module:attribute"`` of the installed entry points of this kind."""
        if self._plugins is None:
            found: dict[str, str] = {}
            prefix = f"{self.kind}."
            for ep in entry_points(group=ENTRY_POINT_GROUP):
                if ep.name.startswith(prefix):
                    found[ep.name.removeprefix(prefix)] = ep.value
            self._plugins = found
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
        """The entry called ``name``, or imported from ``name`` written ``package.module:attr``.

        Raises:
            UnknownPluginError: No source knows the name and it is not a spec.
            ConfigError: Its spec cannot be imported or is not an entry of this kind.
        """
        found = self.find(name)
        if found is not None:
            return found
        if names_a_module(name):
            return self.load(name, name)
        raise self.unknown(name)

    def _callable(self, found: Any, spec: str, name: str) -> T:
        """The default check: a factory entry is anything callable."""
        if not callable(found):
            raise ConfigError(f"{self.option} {name}: '{spec}' is not callable")
        entry: T = found
        return entry

    def load(self, spec: str, name: str) -> T:
        """Import the entry ``spec`` (``package.module:attribute``) asked for as ``name``.

        The imported object must declare itself an entry of this kind (:func:`declares`)
        before it is checked further or called.

        Raises:
            ConfigError: ``spec`` cannot be imported, or names an object that is not a
                declared entry of this kind.
        """
        label = f"{self.option} {name}"
        found = import_attribute(spec, label)
        check_declared(found, spec, self.kind, label, self.bases)
        return self._validate(found, spec, name)

    def unknown(self, name: str) -> UnknownPluginError:
        """The error for a name that no source knows (it lists the names that exist)."""
        return UnknownPluginError(
            self.kind, name, self.names(), self.option, self.field, self.hint
        )


def registry(kind: str) -> Registry[Any]:
    """The registry of one plugin kind.

    Args:
        kind: ``provider``, ``importer``, ``optimizer`` or ``suite_format`` (:data:`PLUGIN_KINDS`).

    Raises:
        ConfigError: No such kind.
    """
    if kind not in PLUGIN_KINDS:
        raise ConfigError(f"unknown plugin kind {kind!r}; kinds: {', '.join(PLUGIN_KINDS)}")
    found: Registry[Any] = import_attribute(PLUGIN_KINDS[kind], f"plugin kind {kind}")
    return found


def register(kind: str, name: str, entry: Any) -> None:
    """Register a plugin: a provider, an import format or an optimizer, by name.

    The one registration call of every kind. The entry is what the kind's entry points name:
    a provider factory ``create(settings) -> Provider``, an :class:`evalkit.interop.Importer`,
    an optimizer factory ``create(arg, settings) -> Optimizer``. Registering a built-in's name
    overrides that one built-in in this process; every other name is left as it was.

    Args:
        kind: ``provider``, ``importer``, ``optimizer`` or ``suite_format``.
        name: The name ``--provider``, ``--format`` or ``--optimizer`` takes.
        entry: The plugin.

    Raises:
        ConfigError: No such kind, or ``entry`` is not a plugin of that kind.
    """
    registry(kind).register(name, entry)


def plugin_names(kind: str) -> tuple[str, ...]:
    """Every available name of a plugin kind: the built-ins in order, then the others sorted.

    Args:
        kind: ``provider``, ``importer``, ``optimizer`` or ``suite_format``.

    Raises:
        ConfigError: No such kind.
    """
    return registry(kind).names()
