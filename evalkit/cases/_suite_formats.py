"""Suite formats: what ``evalkit cases import --from NAME`` turns into cases, one plugin kind.

A suite format is an instance of :class:`SuiteFormat`: a name, a one-line summary, an options
model of its own (a :class:`SuiteFormatOptions`, so a bad option is the one
``ConfigError``), a :meth:`~SuiteFormat.detect` that says whether a source is of the format
(``--from`` left out takes the first format that says yes) and a :meth:`~SuiteFormat.write`
that writes the suite or case file. The built-ins are ``skill-creator`` (a skill directory:
``SKILL.md`` and ``evals/evals.json``) and ``table`` (a CSV/JSONL dataset, one case per row);
others come from :func:`evalkit.register` (``register("suite_format", NAME, FORMAT)``) or an
installed package's ``evalkit.plugins`` entry point ``suite_format.NAME``, like every kind of
:mod:`evalkit._registry`. On the command line a format's options are its own flags for the
built-ins (``--prompt-col``) and ``--from-opt KEY=VALUE`` for any format.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from evalkit._options import Options
from evalkit._registry import Registry, not_an_instance
from evalkit.cases._loader import load_suite
from evalkit.cases._skill_creator import import_skill_dir, is_skill_dir
from evalkit.cases._table import TableColumns, import_case_table
from evalkit.errors import ConfigError, InputError


@dataclass(frozen=True)
class SuiteImported:
    """What a suite format wrote.

    Attributes:
        output: The suite directory or case file written.
        summary: One line saying what was written and what to do next.
        record: The ``evalkit cases import --json`` object.
        warnings: Things worth knowing that are not errors.
    """

    output: Path
    summary: str
    record: dict[str, Any]
    warnings: tuple[str, ...] = field(default_factory=tuple)


class SuiteFormatOptions(Options):
    """Base of a suite format's options model: one field per option, each with a docstring.

    A format without options uses this class itself. A bad value is the one ``ConfigError``
    (exit 2 on the command line, naming the option).

    Examples:
        >>> from evalkit.cases import SuiteFormatOptions
        >>> class LinesOptions(SuiteFormatOptions):
        ...     category: str = "should-not-trigger"
        >>> LinesOptions(category="should-trigger").category
        'should-trigger'
    """


class SuiteFormat(abc.ABC):
    """A kind of source that ``evalkit cases import`` turns into a suite or a case file.

    Subclass it, set :attr:`name`, :attr:`summary` and :attr:`options` (the format's own
    options model) and write :meth:`detect` and :meth:`write`; then register an instance
    (``evalkit.register("suite_format", NAME, MyFormat())``).
    """

    #: The name ``--from`` takes.
    name: ClassVar[str]
    #: One line for ``--help`` and the docs.
    summary: ClassVar[str]
    #: The format's options: one field per option, validated when the format is used.
    options: ClassVar[type[SuiteFormatOptions]]

    @abc.abstractmethod
    def detect(self, source: Path) -> bool:
        """Whether ``source`` is of this format (``--from`` left out takes the first that is)."""

    @abc.abstractmethod
    def write(self, source: Path, output: Path, options: Any) -> SuiteImported:
        """Write the suite (or case file) of ``source`` to ``output``.

        Args:
            source: What ``evalkit cases import`` was given.
            output: Its ``-o``.
            options: An instance of :attr:`options`.

        Returns:
            What was written.
        """

    def parse_options(self, values: Mapping[str, Any]) -> SuiteFormatOptions:
        """The format's options object from ``values`` (ConfigError naming a bad one)."""
        return self.options(**dict(values))


class SkillCreatorOptions(SuiteFormatOptions):
    """Options of the ``skill-creator`` format."""

    stale: str | None = None
    """An older ``SKILL.md`` (a file or a git revision): the ``stale`` condition."""
    bootstrap: str | None = None
    """A file shown under self-load before the skill is loaded."""
    triggers: tuple[str, ...] = ()
    """Trigger eval sets (``[{query, should_trigger}]``)."""
    evals: str | None = None
    """The ``evals.json`` to read (or a folder holding one) instead of searching."""
    skill: tuple[str, ...] = ()
    """Skill directories under the source to import (default: every ``SKILL.md`` found)."""


class SkillCreatorFormat(SuiteFormat):
    """A skill-creator skill directory (``SKILL.md``, ``evals/evals.json``) becomes a suite."""

    name = "skill-creator"
    summary = "a skill directory (SKILL.md, evals/evals.json), or a repository of skills"
    options = SkillCreatorOptions

    def detect(self, source: Path) -> bool:
        """A directory holding ``SKILL.md`` (or a repository with one below it)."""
        return is_skill_dir(source)

    def write(self, source: Path, output: Path, options: Any) -> SuiteImported:
        """Write the suite directory ``output``."""
        done = import_skill_dir(
            source, output, stale=options.stale, bootstrap=options.bootstrap,
            triggers=options.triggers, evals=options.evals, skills=options.skill,
        )
        summary = (
            f"wrote suite {done.suite_dir} for skill '{done.skill}' ({done.files_copied} files "
            f"copied, see skills.lock.json): {done.eval_cases} eval cases, "
            f"{done.trigger_cases} trigger cases, conditions {', '.join(done.conditions)}; "
            f"next: evalkit run {done.suite_dir}"
        )
        return SuiteImported(done.suite_dir, summary, done.to_dict(), tuple(done.warnings))


class TableOptions(SuiteFormatOptions):
    """Options of the ``table`` format: which column feeds which case field."""

    prompt_col: str = Field(default="", validate_default=False)
    """The column holding the prompt (required)."""
    id_col: str | None = None
    """The column holding the case id (default: ``<file>-<line>``)."""
    expected_skill_col: str | None = None
    """The column naming the skill that should trigger."""
    expectations_col: str | None = None
    """The column of judged expectations (a list, or one per line)."""
    pattern_col: str | None = None
    """The column of regexes the answer must match."""
    category_col: str | None = None
    """The column holding the category."""
    split_col: str | None = None
    """The column holding the split (dev, holdout, test)."""
    force: bool = False
    """Replace an existing case file."""


class TableFormat(SuiteFormat):
    """A CSV/JSONL dataset becomes prompt-lane cases, one per row."""

    name = "table"
    summary = "a CSV or JSONL dataset, one case per row (needs --prompt-col)"
    options = TableOptions

    def detect(self, source: Path) -> bool:
        """A ``.csv`` or ``.jsonl`` file."""
        return source.suffix.lower() in (".csv", ".jsonl") and source.is_file()

    def write(self, source: Path, output: Path, options: Any) -> SuiteImported:
        """Write the case file; then validate the suite it landed in, when it is in one."""
        if not options.prompt_col:
            raise ConfigError(
                f"{source}: a table needs --prompt-col (the column holding the prompt); for "
                "a skill directory, pass the directory holding SKILL.md",
                setting="prompt_col",
            )
        columns = TableColumns(
            prompt=options.prompt_col, id=options.id_col,
            expected_skill=options.expected_skill_col, expectations=options.expectations_col,
            pattern=options.pattern_col, category=options.category_col, split=options.split_col,
        )
        done = import_case_table(source, output, columns, overwrite=options.force)
        suite_dir = done.output.parent.parent
        if (suite_dir / "suite.yaml").is_file():
            try:
                load_suite(suite_dir)
            except InputError:
                done.output.unlink()
                raise
        parts = ", ".join(f"{n} {category}" for category, n in sorted(done.by_category.items()))
        summary = f"wrote {done.cases} cases ({parts}) from {done.source} to {done.output}"
        return SuiteImported(done.output, summary, done.to_dict())


SKILL_CREATOR = SkillCreatorFormat()
TABLE = TableFormat()


def _a_suite_format(found: Any, spec: str, name: str) -> SuiteFormat:
    """A :class:`SuiteFormat` instance (the kind's entries are instances, as importers are)."""
    if not isinstance(found, SuiteFormat):
        raise not_an_instance(
            found, spec, f"--from {name}", "an instance of evalkit.cases.SuiteFormat"
        )
    return found


#: Every suite format by name (registered, built-in, installed).
SUITE_FORMATS: Registry[SuiteFormat] = Registry(
    kind="suite_format",
    option="--from",
    field="source_format",
    builtins={
        "skill-creator": "evalkit.cases._suite_formats:SKILL_CREATOR",
        "table": "evalkit.cases._suite_formats:TABLE",
    },
    validate=_a_suite_format,
    bases=(SuiteFormat,),
)


def suite_format_names() -> tuple[str, ...]:
    """Every available suite format: the built-ins, then the others sorted."""
    return SUITE_FORMATS.names()


def detect_suite_format(source: str | os.PathLike[str]) -> SuiteFormat:
    """The first format (in :func:`suite_format_names` order) that recognises ``source``.

    Raises:
        InputError: No format does (the message lists them and ``--from``).
    """
    path = Path(source)
    for name in suite_format_names():
        found = SUITE_FORMATS.get(name)
        if found.detect(path):
            return found
    raise InputError(
        f"{source}: no suite format recognises it ({', '.join(suite_format_names())}); a "
        "skill directory holds SKILL.md, a table ends in .csv or .jsonl; or name one with --from"
    )


def import_suite(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    source_format: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> SuiteImported:
    """Write a suite or case file from ``source`` with its format (``evalkit cases import``).

    Args:
        source: A skill directory, a dataset, or whatever a registered format reads.
        output: Where the format writes (a suite directory or a case file).
        source_format: The format's name (``--from``); None: the first that recognises it.
        options: The format's options (the fields of its :attr:`SuiteFormat.options`).

    Returns:
        What was written.

    Raises:
        UnknownPluginError: No format has that name.
        ConfigError: An option the format does not have, or a bad value.
    """
    chosen = detect_suite_format(source) if source_format is None else SUITE_FORMATS.get(
        source_format
    )
    parsed = chosen.parse_options(options or {})
    return chosen.write(Path(source), Path(output), parsed)
