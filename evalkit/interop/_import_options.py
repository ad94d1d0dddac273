"""An import format's own options: one model per format, declared with the format.

As a provider declares its settings model, an :class:`~evalkit.interop.Importer` declares
its options model, a subclass of :class:`ImportOptions` (an :class:`evalkit._options.Options`:
frozen, no unknown field, a bad value is the one ``ConfigError``). ``evalkit import`` offers
every field of it as ``--format-opt KEY=VALUE`` and lists them with ``--list-options``, and
``import_results(..., options={...})`` takes them as a mapping; the reader finds the validated
object in :attr:`~evalkit.interop.ImportRequest.options`. Nothing shared (the request, the
signature of ``import_results``, the command) names a format's option, so a new format's
option is one field of its own model.

The built-in formats' models are here: ``inspect`` (condition source, scorer), ``promptfoo``
(condition source), ``harbor`` (condition source, pass threshold, timeout policy) and
``terminal-bench`` (condition source, timeout policy). The tables (``csv``, ``jsonl``) and
``skill-creator`` take none (:class:`ImportOptions` itself).
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from evalkit._options import Options

#: What a timed-out trial that its tests still graded becomes (Harbor, Terminal-Bench).
TimeoutPolicy = Literal["graded", "failed", "error"]

#: The values of :data:`TimeoutPolicy`, in the order messages list them.
TIMEOUT_POLICIES: tuple[str, ...] = ("graded", "failed", "error")


class ImportOptions(Options):
    """Base of an import format's options model: one field per option, each with a docstring.

    A format without options uses this class itself. A field's docstring is its help text
    (``evalkit import --list-options``); its default is the format's default.

    Examples:
        >>> from evalkit.interop import ImportOptions
        >>> class PairsOptions(ImportOptions):
        ...     separator: str = " "
        ...     \"\"\"What separates the columns of a line.\"\"\"
        >>> PairsOptions(separator=";").separator
        ';'
    """

    model_config = ConfigDict(use_attribute_docstrings=True)


class InspectOptions(ImportOptions):
    """Options of ``--format inspect`` (Inspect AI logs)."""

    condition_from: str = "model"
    """Where the condition comes from: ``model``, ``task_arg:NAME`` (or ``task_args.NAME``)
    or ``metadata:NAME``."""
    scorer: str | None = None
    """The scorer whose value gives ``passed`` and ``score`` (default: the log's first)."""


class PromptfooOptions(ImportOptions):
    """Options of ``--format promptfoo``."""

    condition_from: str = "prompt"
    """Where the condition comes from: ``prompt`` (the prompt's label) or ``provider``."""


class HarborOptions(ImportOptions):
    """Options of ``--format harbor`` (Harbor trial results)."""

    condition_from: str = "skills"
    """Where the condition comes from: ``skills``, ``job`` or ``task-path:REGEX``."""
    pass_threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    """A verifier reward at or above it passes (in [0, 1])."""
    timeout_policy: TimeoutPolicy = "failed"
    """What an agent timeout its tests still graded becomes: ``failed`` (a timeout row),
    ``graded`` (its verdict stands) or ``error``."""


class TerminalBenchOptions(ImportOptions):
    """Options of ``--format terminal-bench`` (Terminal-Bench 1.0 runs)."""

    condition_from: str = "run"
    """Where the condition comes from: ``run`` (the run directory's name) or
    ``agent-kwarg:NAME``."""
    timeout_policy: TimeoutPolicy = "graded"
    """What an agent timeout its tests still graded becomes: ``graded`` (its verdict stands,
    as the leaderboard counts it), ``failed`` or ``error``."""
