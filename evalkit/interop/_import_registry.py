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

A reader takes an :class:`ImportRequest` and returns a
:class:`~evalkit.interop._import_common.ParsedSource`; ``evalkit.import_results`` does the
rest (keys, hashes, the run directory), whatever the format.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._registry import Registry, import_attribute
from evalkit.errors import ConfigError
from evalkit.interop._import_common import ParsedSource


@dataclass(frozen=True)
class ImportRequest:
    """What a reader is asked to read.

    Attributes:
        files: The files to read, in order (directories expanded by the format's suffixes).
        listed: The subset found by listing a directory (a reader may skip those that turn
            out to be something else).
        lane: Lane of rows that do not carry one.
        condition_from: Where the condition comes from (format-specific), or None.
        scorer: The scorer that gives ``passed`` (Inspect), or None.
        pass_threshold: A reward at or above it passes (Harbor), or None for the default.
        timeout_policy: What a timed-out trial its tests still graded becomes (Harbor,
            Terminal-Bench: ``graded``, ``failed`` or ``error``), or None for the format's
            default.
    """

    files: list[Path]
    listed: set[Path]
    lane: str = "prompt"
    condition_from: str | None = None
    scorer: str | None = None
    pass_threshold: float | None = None
    timeout_policy: str | None = None


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
        options: The options that apply (``condition_from``, ``scorer``, ``pass_threshold``,
            ``timeout_policy``);
            passing another is an error that says so.
        condition_hint: Why ``--condition-from`` does not apply, when it does not.
    """

    name: str
    reader: Reader | str
    suffixes: tuple[str, ...]
    what: str
    options: frozenset[str] = frozenset()
    condition_hint: str = ""

    def read(self, request: ImportRequest) -> ParsedSource:
        """Read the request with this format's reader."""
        reader = self.reader
        if isinstance(reader, str):
            reader = import_attribute(reader, f"--format {self.name}")
        return reader(request)


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
        "Inspect AI logs (.eval or .json)", frozenset({"condition_from", "scorer"}),
    ),
    "promptfoo": Importer(
        "promptfoo", "evalkit.interop._import_readers:read_promptfoo_results", (".json",),
        "promptfoo results (.json)", frozenset({"condition_from"}),
    ),
    "skill-creator": Importer(
        "skill-creator", "evalkit.interop._import_readers:read_skill_creator_benchmark",
        ("benchmark.json", "grading.json"),
        "skill-creator benchmarks (benchmark.json) or workspaces (grading.json per run)",
        condition_hint="a skill-creator benchmark gives it in 'configuration'",
    ),
    "harbor": Importer(
        "harbor", "evalkit.interop._import_harbor:read_harbor", ("result.json", "results.json"),
        "Harbor trial results (result.json in a job or trial directory)",
        frozenset({"condition_from", "pass_threshold", "timeout_policy"}),
    ),
    "terminal-bench": Importer(
        "terminal-bench", "evalkit.interop._import_terminal_bench:read_terminal_bench",
        ("results.json",),
        "Terminal-Bench 1.0 results (a run directory, or its results.json files)",
        frozenset({"condition_from", "timeout_policy"}),
    ),
}


def _an_importer(found: Any, spec: str, name: str) -> Importer:
    """An :class:`Importer`, named as it is registered (``--format NAME`` finds it by NAME)."""
    if not isinstance(found, Importer):
        raise ConfigError(
            f"--format {name}: '{spec}' is a {type(found).__name__}, not an "
            "evalkit.interop.Importer"
        )
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
