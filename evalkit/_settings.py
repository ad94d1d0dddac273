"""The settings many functions, configurations and commands share, each declared once.

A shared setting (the confidence level, the significance level, the bootstrap replicates,
the retries, the concurrency, the seed, the practical threshold, the target power, the
multiplicity corrections, the power method, the runs directory and the cases per round of a
sequential design) is one :class:`Setting` of :data:`SETTINGS`: its Python name, its
command-line flag, its default, its limits or choices, its help text and the kind of its
value (a number, one of named choices, or a path). Everything else takes them from here:

* a function's signature takes the default (``confidence: float = CONFIDENCE.default``) and
  checks a value with :meth:`Setting.check`;
* a pydantic configuration types the field with the entry (``concurrency: Concurrency =
  CONCURRENCY.default``): :data:`Concurrency` is ``Annotated[int, CONCURRENCY]``, and an entry
  used as ``Annotated`` metadata validates with the same check;
* a command adds the flag with :meth:`Setting.add_argument` (its help text and default), and
  the flag's value is checked as the command line is parsed.

A bad value gets one message wherever it was given, naming both the flag and the field
(``--confidence / confidence must be a number in (0, 1), e.g. 0.95, but 1.5 was passed``,
``--correction / correction must be one of holm, bonferroni, fdr_bh, fdr_by, none, but 'x'
was passed``), so a user of the command line and a user of the library both recognise their
own name.

The bootstrap replicates are two entries with one flag, one name and one lower bound but two
defaults: :data:`N_RESAMPLES` (10 000) for a paired analysis a user reads once (compare, the
gate, lift, the evidence, and the report notebooks that show them, which read it as
``evalkit.stats.DEFAULT_RESAMPLES``), and :data:`N_RESAMPLES_QUICK` (2 000) for the loops
that compute an interval many times over (per pairwise case, per ablated component, per
optimiser candidate, per run of a trend, per simulated study), where the cost is multiplied
and the intervals are screens rather than the reported verdict.

This module imports only the standard library and :mod:`evalkit.errors` at import time
(pydantic's core is imported when a configuration class is built), so ``evalkit --version``
stays light.
"""

from __future__ import annotations

import dataclasses
import operator
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeVar, cast, get_args

from evalkit.errors import ConfigError

if TYPE_CHECKING:
    import argparse

    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema

T = TypeVar("T")

#: JSON Schema keyword of each limit of a :class:`Setting`.
_SCHEMA_LIMITS = {
    "gt": "exclusiveMinimum",
    "ge": "minimum",
    "lt": "exclusiveMaximum",
    "le": "maximum",
}

#: How each limit reads in a message.
_LIMIT_WORDS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One shared setting: its names, default, limits or choices, help text and kind of value.

    Three kinds of value: a number (``int`` or ``float``, within the limits), one of named
    choices (``str`` with :attr:`choices`), or a path (``Path``: any non-empty ``str`` or
    path-like, returned as a ``Path``).

    Attributes:
        name: The Python name (a parameter or a configuration field).
        flag: The command-line flag (empty: the setting has none; the message names the
            field alone).
        default: The default value.
        kind: The kind of value: ``int``, ``float``, ``str`` (a choice) or ``Path``.
        help: What the setting is, for ``--help`` (the default is added).
        gt: Values must be greater than this (None: no such limit).
        ge: Values must be at least this.
        lt: Values must be less than this.
        le: Values must be at most this.
        example: A value to show in an error message (empty: none).
        choices: The values a ``str`` setting takes.
        aliases: Other spellings a ``str`` setting accepts, as ``(alias, choice)`` pairs;
            :meth:`check` returns the choice.

    Examples:
        >>> CONFIDENCE.check(0.9)
        0.9
        >>> CONFIDENCE.rule
        'a number in (0, 1)'
        >>> CONCURRENCY.message(0)
        '--concurrency / concurrency must be an integer >= 1, but 0 was passed'
        >>> CASE_CORRECTION.check("bh")
        'fdr_bh'
        >>> METHOD.message("x")
        "method must be one of t, normal, but 'x' was passed"
        >>> RUNS_DIR.check("elsewhere") == Path("elsewhere")
        True
    """

    name: str
    flag: str
    default: T
    kind: type[Any]
    help: str
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    example: str = ""
    choices: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()

    def limits(self) -> dict[str, float]:
        """The limits that are set, as ``{"gt": 0, "lt": 1}``."""
        return {
            limit: value
            for limit in _LIMIT_WORDS
            if (value := getattr(self, limit)) is not None
        }

    @property
    def rule(self) -> str:
        """What a value must be, in words: ``"an integer >= 1"``, ``"one of t, normal"``."""
        if self.kind is str:
            return f"one of {', '.join(self.choices)}"
        if self.kind is Path:
            return "a path"
        noun = "an integer" if self.kind is int else "a number"
        low = self.ge if self.gt is None else self.gt
        high = self.le if self.lt is None else self.lt
        if low is not None and high is not None:  # an interval: (0, 1), [0, 1]
            opening = "[" if self.gt is None else "("
            closing = "]" if self.lt is None else ")"
            return f"{noun} in {opening}{low:g}, {high:g}{closing}"
        limits = self.limits().items()
        bounds = " and ".join(f"{_LIMIT_WORDS[limit]} {value:g}" for limit, value in limits)
        return f"{noun} {bounds}" if bounds else noun

    def message(self, value: object) -> str:
        """The one message of a bad value: the flag, the field, the rule and the value.

        Args:
            value: The value passed.

        Returns:
            ``"--flag / name must be RULE, e.g. EXAMPLE, but VALUE was passed"``.
        """
        example = f", e.g. {self.example}" if self.example else ""
        named = f"{self.flag} / {self.name}" if self.flag else self.name
        return f"{named} must be {self.rule}{example}, but {value!r} was passed"

    def error(self, value: object) -> ConfigError:
        """The :class:`ConfigError` of a bad value: :meth:`message`, ``setting`` the name."""
        return ConfigError(self.message(value), setting=self.name)

    def check(self, value: Any) -> T:
        """The value, checked against the kind and the limits or choices.

        An ``int`` setting takes any integer (a numpy integer too) but no bool and no float;
        a ``float`` setting takes anything ``float()`` reads, except a bool; a ``str``
        setting takes one of its choices or aliases (an alias becomes its choice); a ``Path``
        setting takes a non-empty ``str`` or path-like.

        Args:
            value: The value passed.

        Returns:
            The value as :attr:`kind`.

        Raises:
            ConfigError: Not of the kind, outside the limits (NaN is outside any limit), or
                not one of the choices.
        """
        checked: Any
        if self.kind is str:
            checked = dict(self.aliases).get(value, value) if isinstance(value, str) else value
            if checked not in self.choices:
                raise self.error(value)
            return cast("T", checked)
        if self.kind is Path:
            text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
            if not isinstance(text, str) or not text:
                raise self.error(value)
            checked = Path(text)
            return cast("T", checked)
        number: float
        try:
            if isinstance(value, bool):
                raise TypeError("a bool is not a number")
            number = operator.index(value) if self.kind is int else float(value)
        except (TypeError, ValueError):
            raise self.error(value) from None
        if not self._within(number):
            raise self.error(value)
        checked = self.kind(number)
        return cast("T", checked)

    def _within(self, number: float) -> bool:
        gt, ge, lt, le = self.gt, self.ge, self.lt, self.le
        return (
            (gt is None or number > gt)
            and (ge is None or number >= ge)
            and (lt is None or number < lt)
            and (le is None or number <= le)
        )

    def parse(self, text: str) -> T:
        """A command-line value of the flag, converted and checked (argparse's ``type``).

        Args:
            text: The text given after the flag.

        Returns:
            The value as :attr:`kind`.

        Raises:
            ConfigError: Not a value of the kind, or outside the limits or choices; the
                command line exits with code 2 and the message.
        """
        if self.kind in (str, Path):
            return self.check(text)
        try:
            value = self.kind(text)
        except ValueError:
            raise self.error(text) from None
        return self.check(value)

    def add_argument(
        self,
        parser: argparse._ActionsContainer,
        *,
        when: str = "",
        what: str = "",
        **overrides: Any,
    ) -> argparse.Action:
        """Add the flag to ``parser``: its help text, default, type and check from the table.

        Args:
            parser: The command's parser (or an argument group of it).
            when: A prefix of the help text saying when the flag applies
                (``"calibrate: "``).
            what: The help text in place of the table's, for a command that says more
                precisely what the setting does there (the default is still added).
            **overrides: Arguments of :meth:`argparse.ArgumentParser.add_argument` that
                replace the table's (``default=None`` where None means "the library's
                default", ``dest=...``, ``help=...``).

        Returns:
            The argparse action.
        """
        options: dict[str, Any] = {
            "type": self.parse,
            "default": self.default,
            "help": f"{when}{what or self.help} (default {self.default})",
        }
        if self.choices:
            options["metavar"] = "{" + ",".join(self.choices) + "}"
        options.update(overrides)
        return parser.add_argument(self.flag, **options)

    def _validated(self, value: Any) -> T:
        """:meth:`check` for pydantic, which reports a ``ValueError`` under the field's name.

        A configuration read from a file takes a number as pydantic's lax mode does: a
        numeric string (``"0.9"``, ``"3"``) and, for an integer, a float without a
        fractional part (``2000.0``).
        """
        try:
            if self.kind in (int, float) and isinstance(value, str):
                return self.parse(value)
            if self.kind is int and isinstance(value, float) and value.is_integer():
                value = int(value)
            return self.check(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        """As ``Annotated`` metadata: :meth:`check`, then the field's type.

        The check comes first, so a value of the wrong kind (``seed="x"``) gets this message
        too rather than the type's.
        """
        from pydantic_core import core_schema

        return core_schema.no_info_before_validator_function(self._validated, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """As ``Annotated`` metadata: the field's JSON Schema with the limits."""
        json_schema = handler(schema)
        json_schema.update(
            {_SCHEMA_LIMITS[limit]: value for limit, value in self.limits().items()}
        )
        if self.choices:
            json_schema["enum"] = list(self.choices)
        return json_schema


CONFIDENCE: Setting[float] = Setting(
    name="confidence",
    flag="--confidence",
    default=0.95,
    kind=float,
    help="confidence level of the intervals",
    gt=0,
    lt=1,
    example="0.95",
)

ALPHA: Setting[float] = Setting(
    name="alpha",
    flag="--alpha",
    default=0.05,
    kind=float,
    help="significance level",
    gt=0,
    lt=1,
    example="0.05",
)

N_RESAMPLES: Setting[int] = Setting(
    name="n_resamples",
    flag="--resamples",
    default=10_000,
    kind=int,
    help="bootstrap replicates",
    ge=100,
)

#: The cheaper default of the loops that compute an interval many times (see the module's
#: docstring); the same flag, name and lower bound as :data:`N_RESAMPLES`.
N_RESAMPLES_QUICK: Setting[int] = dataclasses.replace(N_RESAMPLES, default=2_000)

RETRIES: Setting[int] = Setting(
    name="retries",
    flag="--retries",
    default=2,
    kind=int,
    help="retries of a call that failed for infrastructure reasons, never of a wrong answer",
    ge=0,
)

CONCURRENCY: Setting[int] = Setting(
    name="concurrency",
    flag="--concurrency",
    default=2,
    kind=int,
    help="work items (agent or judge calls) in flight at once",
    ge=1,
)

SEED: Setting[int] = Setting(
    name="seed",
    flag="--seed",
    default=0,
    kind=int,
    help="seed of the random draws",
)

THRESHOLD: Setting[float] = Setting(
    name="threshold",
    flag="--threshold",
    default=0.05,
    kind=float,
    help="practical threshold of 'improved', a difference of pass rates or scores",
    ge=0,
    le=1,
    example="0.05 for 5 pp",
)

POWER: Setting[float] = Setting(
    name="power",
    flag="--power",
    default=0.8,
    kind=float,
    help="target power of a design",
    gt=0,
    lt=1,
    example="0.8",
)

#: Multiplicity correction across cases (statsmodels ``multipletests`` names, or none).
Correction = Literal["holm", "bonferroni", "fdr_bh", "fdr_by", "none"]

#: How a power calculation solves the design: the noncentral t, or the normal approximation.
PowerMethod = Literal["t", "normal"]

CORRECTION: Setting[Correction] = Setting(
    name="correction",
    flag="--correction",
    default="holm",
    kind=str,
    help="multiplicity correction across the per-case rows",
    choices=get_args(Correction),
)

CASE_CORRECTION: Setting[Correction] = Setting(
    name="case_correction",
    flag="--case-correction",
    default="fdr_bh",
    kind=str,
    help="correction across the pooled case rows (which cases moved): fdr_bh "
    "(Benjamini-Hochberg, a false discovery rate), fdr_by, or holm (family-wise); bh and by "
    "are accepted for fdr_bh and fdr_by",
    choices=get_args(Correction),
    aliases=(("bh", "fdr_bh"), ("by", "fdr_by")),
)

METHOD: Setting[PowerMethod] = Setting(
    name="method",
    flag="",
    default="t",
    kind=str,
    help="how a power calculation solves the design: t (noncentral t) or normal",
    choices=get_args(PowerMethod),
)

RUNS_DIR: Setting[Path] = Setting(
    name="runs_dir",
    flag="--runs-dir",
    default=Path("runs"),
    kind=Path,
    help="where runs live",
    example="runs",
)

ROUND_CASES: Setting[int] = Setting(
    name="round_cases",
    flag="--round-cases",
    default=10,
    kind=int,
    help="cases per round of a sequential design (a look after each round)",
    ge=1,
)

#: Every shared setting.
SETTINGS: tuple[Setting[Any], ...] = (
    CONFIDENCE,
    ALPHA,
    N_RESAMPLES,
    N_RESAMPLES_QUICK,
    RETRIES,
    CONCURRENCY,
    SEED,
    THRESHOLD,
    POWER,
    CORRECTION,
    CASE_CORRECTION,
    METHOD,
    RUNS_DIR,
    ROUND_CASES,
)

#: The Python names of the shared settings (no other module gives one a literal default).
SETTING_NAMES: frozenset[str] = frozenset(setting.name for setting in SETTINGS)

#: The pydantic field types of the settings with limits or a path: ``Annotated[kind, entry]``.
Confidence = Annotated[float, CONFIDENCE]
Alpha = Annotated[float, ALPHA]
Resamples = Annotated[int, N_RESAMPLES]
Retries = Annotated[int, RETRIES]
Concurrency = Annotated[int, CONCURRENCY]
Seed = Annotated[int, SEED]
Threshold = Annotated[float, THRESHOLD]
Power = Annotated[float, POWER]
RoundCases = Annotated[int, ROUND_CASES]
RunsDir = Annotated[Path, RUNS_DIR]
#: The pydantic field types of the settings with choices: ``Annotated[Literal, entry]``.
CorrectionChoice = Annotated[Correction, CORRECTION]
CaseCorrectionChoice = Annotated[Correction, CASE_CORRECTION]
PowerMethodChoice = Annotated[PowerMethod, METHOD]
