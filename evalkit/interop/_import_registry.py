"""The ``importer`` kind of the plugin registry: ``--format`` names to import formats.

One :class:`evalkit._registry.Registry`, like the providers' and the optimizers'. Three
sources, in this order of precedence:

1. importers registered at run time with ``evalkit.register("importer", name, importer)``;
2. the built-in formats, a table of :class:`Importer` entries whose reader is a
   ``"module:function"`` string (this module imports none of the readers);
3. third-party formats, published by installed packages as ``evalkit.plugins`` entry points
   named ``importer.NAME`` (``"package.module:IMPORTER"``, an :class:`Importer`), or, as
   before, in the ``evalkit.importers`` group.

As for every kind, ``--format package.module:IMPORTER`` that no source knows is imported; it
must name an :class:`Importer` (the kind's base: an instance declares itself), anything else
is refused before it is used.

A format declares its own options model (:attr:`Importer.options`, a subclass of
:class:`~evalkit.interop.ImportOptions`), as a provider declares its settings; the reader
finds them validated in :attr:`ImportRequest.options`.

A reader takes an :class:`ImportRequest` and returns a
:class:`~evalkit.interop._import_common.ParsedSource`; ``evalkit.import_results`` does the
rest (keys, hashes, the run directory), whatever the format.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from evalkit._registry import Registry, import_attribute, not_an_instance
from evalkit.errors import ConfigError
from evalkit.interop._import_common import ParsedSource
from evalkit.interop._import_options import (
    HarborOptions,
    ImportOptions,
    InspectOptions,
    PromptfooOptions,
    TerminalBenchOptions,
)

OptionsT = TypeVar("OptionsT", bound=ImportOptions)


@dataclass(frozen=True)
class ImportRequest:
    """What a reader is asked to read.

    Attributes:
        files: The files to read, in order (directories expanded by the format's suffixes).
        listed: The subset found by listing a directory (a reader may skip those that turn
            out to be something else).
        lane: Lane of rows that do not carry one.
        options: The format's own options, validated: an instance of its
            :attr:`Importer.options` model (read it with :meth:`options_as`).
    """

    files: list[Path]
    listed: set[Path]
    lane: str = "prompt"
    options: ImportOptions = field(default_factory=ImportOptions)

    def options_as(self, kind: type[OptionsT]) -> OptionsT:
        """The request's options as the format's model ``kind`` (its defaults if none given).

        Raises:
            TypeError: The options are another format's model.
        """
        if isinstance(self.options, kind):
            return self.options
        if type(self.options) is ImportOptions:
            return kind()
        raise TypeError(
            f"the request holds {type(self.options).__name__}, not {kind.__name__}"
        )


Reader = Callable[[ImportRequest], ParsedSource]
"""Reads the request's files into rows (raises ``InputError`` naming the file on bad input)."""


@dataclass(frozen=True)
class Importer:
    """One import format.

    Attributes:
        name: The ``--format`` name.
        reader: The reader, or ``"package.module:function"`` imported on first use.
        suffixes: File name endings read from a directory (``.csv``; ``result.json``).
        what: What the files are, for messages (``"CSV files"``).
        options: The format's options model (a subclass of :class:`ImportOptions`, one field
            per option; :class:`ImportOptions` itself for none): ``--format-opt KEY=VALUE``
            and ``import_results(options=...)`` are validated against it.
        condition_hint: Why ``--condition-from`` does not apply, when it does not.
    """

    name: str
    reader: Reader | str
    suffixes: tuple[str, ...]
    what: str
    options: type[ImportOptions] = ImportOptions
    condition_hint: str = ""

    def read(self, request: ImportRequest) -> ParsedSource:
        """Read the request with this format's reader."""
        reader = self.reader
        if isinstance(reader, str):
            reader = import_attribute(reader, f"--format {self.name}")
        return reader(request)

    def parse_options(
        self, given: Mapping[str, Any] | ImportOptions | None = None
    ) -> ImportOptions:
        """The format's options object from ``given`` (a mapping of its fields, or the object).

        Raises:
            ConfigError: An option the format does not have, or a bad value: the message
                names the format, the option and the fix.
        """
        if given is None:
            return self.options()
        if isinstance(given, ImportOptions):
            if not isinstance(given, self.options):
                raise ConfigError(
                    f"--format {self.name} takes {self.options.__name__} options, not "
                    f"{type(given).__name__}",
                    setting="options",
                )
            return given
        unknown = [key for key in given if key not in self.options.model_fields]
        if unknown:
            raise ConfigError(self._not_an_option(unknown[0]), setting=unknown[0])
        try:
            return self.options(**dict(given))
        except ConfigError as exc:
            field = exc.setting or next(iter(given), "")
            value = given.get(field, "")
            doc = self.options.model_fields[field].description if field in given else None
            raise ConfigError(
                f"--format {self.name}: option {field}={value}: {_problem(exc, field)}"
                + (f" ({_one_line(doc)})" if doc else "")
                + f"; see `evalkit import --list-options {self.name}`",
                setting=field,
            ) from None

    def option_lines(self) -> list[str]:
        """One line per option, ``NAME (default: VALUE): help``, for ``--list-options``."""
        lines = []
        for name, info in self.options.model_fields.items():
            default = info.get_default(call_default_factory=True)
            shown = "none" if default is None else str(default)
            text = _one_line(info.description or "").replace("``", "")
            lines.append(f"{name} (default: {shown}): {text}".rstrip(": "))
        return lines

    def _not_an_option(self, key: str) -> str:
        """Why ``key`` is refused: the formats it applies to, or this format's options."""
        takers = [n for n, i in BUILTIN_IMPORTERS.items() if key in i.options.model_fields]
        own = ", ".join(self.options.model_fields) or "none"
        if takers:
            hint = self.condition_hint if key == "condition_from" else ""
            return (
                f"--{key.replace('_', '-')} applies to {', '.join(takers)} imports, not "
                f"--format {self.name}" + (f"; {hint}" if hint else "")
                + f" (its options: {own})"
            )
        return (
            f"--format {self.name} has no option {key!r}; its options: {own} (see `evalkit "
            f"import --list-options {self.name}`)"
        )


def _problem(exc: ConfigError, field: str) -> str:
    """What is wrong with ``field``'s value, without the field name the message starts with."""
    message = str(exc)
    return message.removeprefix(f"{field}: ")


def _one_line(text: str) -> str:
    return " ".join(text.split())


_TABLE_HINT = "a CSV/JSONL gives the condition in its 'condition' column"

#: The built-in formats, in the order ``--format`` lists them.
BUILTIN_IMPORTERS: Mapping[str, Importer] = {
    "csv": Importer(
        "csv", "evalkit.interop._import_readers:read_csv", (".csv",), "CSV files",
        condition_hint=_TABLE_HINT,
    ),
    "jsonl": Importer(
        "jsonl", "evalkit.interop._import_readers:read_jsonl", (".jsonl", ".ndjson"),
        "JSONL files", condition_hint=_TABLE_HINT,
    ),
    "inspect": Importer(
        "inspect", "evalkit.interop._import_readers:read_inspect_logs", (".eval", ".json"),
        "Inspect AI logs (.eval or .json)", InspectOptions,
    ),
    "promptfoo": Importer(
        "promptfoo", "evalkit.interop._import_promptfoo:read_promptfoo", (".json",),
        "promptfoo results (.json)", PromptfooOptions,
    ),
    "skill-creator": Importer(
        "skill-creator", "evalkit.interop._import_skill_creator:read_skill_creator",
        ("benchmark.json", "grading.json"),
        "skill-creator benchmarks (benchmark.json) or workspaces (grading.json per run)",
        condition_hint="a skill-creator benchmark gives it in 'configuration'",
    ),
    "harbor": Importer(
        "harbor", "evalkit.interop._import_harbor:read_harbor", ("result.json", "results.json"),
        "Harbor trial results (result.json in a job or trial directory)",
        HarborOptions,
    ),
    "terminal-bench": Importer(
        "terminal-bench", "evalkit.interop._import_terminal_bench:read_terminal_bench",
        ("results.json",),
        "Terminal-Bench 1.0 results (a run directory, or its results.json files)",
        TerminalBenchOptions,
    ),
}


def _an_importer(found: Any, spec: str, name: str) -> Importer:
    """An :class:`Importer`, named as it is registered (``--format NAME`` finds it by NAME)."""
    if not isinstance(found, Importer):
        raise not_an_instance(found, spec, f"--format {name}", "an evalkit.interop.Importer")
    return found if found.name == name else dataclasses.replace(found, name=name)


#: Every import format by name (registered, built-in, installed).
IMPORTERS: Registry[Importer] = Registry(
    kind="importer",
    option="--format",
    field="format",
    builtins=BUILTIN_IMPORTERS,
    validate=_an_importer,
    bases=(Importer,),
)


def importer_names() -> tuple[str, ...]:
    """Every available format: built-in ones in their order, then the others sorted."""
    return IMPORTERS.names()


def get_importer(name: str) -> Importer:
    """The import format called ``name``.

    Args:
        name: A ``--format`` name.

    Returns:
        The :class:`Importer`.

    Raises:
        UnknownPluginError: No such format (the message lists the formats that exist).
        ConfigError: A plugin's entry point cannot be imported or is not an :class:`Importer`.
    """
    return IMPORTERS.get(name)
