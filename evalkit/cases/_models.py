"""Pydantic models for suites, cases, skills and conditions (everything read from disk)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from evalkit._paths import unsafe_component_reason
from evalkit._settings import SEED
from evalkit.cases._artifacts import ArtifactRequirement, BundleSpec

LANES = ("prompt", "execution", "evidence")
SPLITS = ("dev", "holdout", "test")
STANDARD_CONDITIONS = ("none", "self-load", "preloaded", "stale")
NO_SKILL = "none"

_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


class _Frozen(BaseModel):
    # Field docstrings become descriptions: in the JSON Schema and in docs/suites.md.
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


def _check_regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression '{pattern}': {exc}") from exc
    return pattern


#: A regular expression, checked when the file is loaded (errors point at the element).
Regex = Annotated[str, Field(min_length=1), AfterValidator(_check_regex)]


class Budgets(_Frozen):
    """Time and step budgets of one work item."""

    timeout_s: float = Field(default=120.0, gt=0)
    """Wall-clock limit of one agent invocation in seconds; past it the item is a timeout."""
    max_steps: int | None = Field(default=None, gt=0)
    """Ceiling on agent steps (turns / tool calls), passed to providers that support it."""


class AntiPatternRule(_Frozen):
    """A behaviour the agent must avoid, detected by a regex outside negation contexts."""

    id: str = Field(pattern=_ID_PATTERN)
    """Stable identifier of the rule, e.g. ``blind-sleep``."""
    pattern: Regex
    """Regular expression (case-insensitive) that detects the behaviour in the transcript."""
    severity: Literal["error", "warning"] = "error"
    """``error`` fails the item; ``warning`` only lowers the score."""
    description: str = ""
    """Why this is an anti-pattern, shown in reports."""


class WorkflowCheck(_Frozen):
    """A partial-order check on the transcript: a step that must appear (after another)."""

    id: str = Field(pattern=_ID_PATTERN)
    """Stable identifier of the check, e.g. ``wait-before-snapshot``."""
    pattern: Regex
    """Regular expression (case-insensitive) that marks the step in the transcript."""
    after: str | None = None
    """Id of another check whose first match must come before this one's."""
    description: str = ""
    """What the step is, shown in reports."""


class CommandCheck(_Frozen):
    """Run a shell command in the workspace; it passes on the expected exit code."""

    kind: Literal["command"]
    """Discriminator."""
    run: str = Field(min_length=1)
    """Shell command, run with ``bash -c`` in the workspace."""
    expect_exit: int = 0
    """Exit code that means success."""
    timeout_s: float = Field(default=30.0, gt=0)
    """Time limit of the command."""


class FileExistsCheck(_Frozen):
    """A file (or directory) must exist in the workspace."""

    kind: Literal["file_exists"]
    """Discriminator."""
    path: str = Field(min_length=1)
    """Path relative to the workspace."""


class FileMatchesCheck(_Frozen):
    """A workspace file's content must match a regular expression."""

    kind: Literal["file_matches"]
    """Discriminator."""
    path: str = Field(min_length=1)
    """Path relative to the workspace."""
    pattern: Regex
    """Regular expression searched (multiline) in the file's text."""


class JsonPathEqualsCheck(_Frozen):
    """A value inside a JSON file, addressed by a dotted path, must equal an expected value."""

    kind: Literal["json_path_equals"]
    """Discriminator."""
    path: str = Field(min_length=1)
    """JSON file path relative to the workspace."""
    json_path: str = Field(min_length=1)
    """Dotted path with integer indices, e.g. ``services.0.port``."""
    equals: Any
    """The expected value (compared after JSON decoding)."""


class Expectation(_Frozen):
    """A short statement about a good answer, graded pass/fail by the suite's judge."""

    text: str = Field(min_length=1)
    """The statement, e.g. ``Registers the cleanup with an EXIT trap``."""
    truth: Regex | None = None
    """Known truth: a regex (case-insensitive, outside negation contexts) that holds in an
    answer exactly when the statement does. Never shown to a judge; the ``simulated`` judge
    grades against it (else against the case's ``reference``)."""


VerifierCheck = Annotated[
    CommandCheck | FileExistsCheck | FileMatchesCheck | JsonPathEqualsCheck,
    Field(discriminator="kind"),
]


class Case(_Frozen):
    """One task with one clear end condition."""

    id: str = Field(pattern=_ID_PATTERN)
    """Unique id within the suite (letters, digits, ``_ . -``)."""
    lane: Literal["prompt", "execution", "evidence"] = "prompt"
    """``prompt``: plan-only answer scored on text; ``execution``: the agent acts in a
    workspace and a verifier checks the end state; ``evidence``: execution plus artifacts."""
    category: str = "general"
    """Free-form category used to break results down (e.g. ``trigger``, ``anti-pattern``)."""
    prompt: str = Field(min_length=1)
    """What the agent is asked."""
    expected_skill: str = NO_SKILL
    """The skill that should trigger, or ``none`` for should-not-trigger cases."""
    skills: tuple[str, ...] | None = None
    """Skills in scope for injected conditions; default: the expected skill, or every suite
    skill for should-not-trigger cases."""
    context: str | None = None
    """Extra context given to the agent with the prompt."""
    reference: str | None = None
    """A reference answer that satisfies the case (used by the simulated agent and judges;
    ``cases validate`` checks that it passes the case's own scorers)."""
    expected_patterns: tuple[Regex, ...] = ()
    """Regexes (case-insensitive) a good answer matches, outside negation contexts."""
    forbidden_patterns: tuple[Regex, ...] = ()
    """Regexes a good answer does not recommend (``instead of tmux`` does not count)."""
    rubric: tuple[str, ...] = ()
    """Human-readable grading notes (for reviewers and judges; not scored deterministically).
    With ``rubric_pass`` set, the judge grades each note like an expectation."""
    rubric_pass: float | None = Field(default=None, gt=0, le=1)
    """Share of the rubric notes the judge must pass for the item to pass (e.g. ``0.75``);
    unset: the rubric is not judged."""
    expectations: tuple[str | Expectation, ...] = ()
    """Statements about a good answer, each graded pass/fail by the suite's ``judge``; all
    must pass (plain text, or ``{text, truth}`` with a known-truth regex)."""
    workflow_checks: tuple[WorkflowCheck, ...] = ()
    """Partial-order checks on the transcript."""
    anti_patterns: tuple[AntiPatternRule, ...] = ()
    """Case-specific anti-pattern rules (added to the suite's)."""
    budgets: Budgets = Budgets()
    """Time and step budgets."""
    pass_threshold: float | None = Field(default=None, ge=0, le=1)
    """Score needed to pass; default: the suite's."""
    split: Literal["dev", "holdout", "test"] = "dev"
    """Data split, for optimisation with a sealed test split."""
    tags: tuple[str, ...] = ()
    """Tags for selecting tiers (``smoke``, ``safety``, ...)."""
    provenance: str | None = None
    """Where the case came from (an incident, a user report, a seed document)."""
    fixture: str | None = None
    """Execution lanes: a directory (relative to the suite) copied into the workspace."""
    setup: tuple[str, ...] = ()
    """Execution lanes: shell commands run in the workspace before the agent starts."""
    solution: tuple[str, ...] = ()
    """Execution lanes: reference shell commands that solve the task (used by the simulated
    agent, and by ``cases validate`` to check the verifier accepts a correct workspace)."""
    verifier: tuple[VerifierCheck, ...] = ()
    """Execution lanes: checks on the workspace after the agent ran; all must pass. A case
    with judged ``expectations`` may leave the verdict to the judge instead."""
    artifacts_required: tuple[str | ArtifactRequirement, ...] = ()
    """Evidence lane: artifacts the agent must leave in the workspace, each checked by its
    kind's validator (see "Evidence artifacts"); a plain path takes its kind from the
    extension."""
    bundle: BundleSpec | None = None
    """Evidence lane: a proof-bundle manifest that must list every artifact with its hash."""

    @model_validator(mode="after")
    def _check_lane_fields(self) -> Case:
        if self.lane in ("execution", "evidence") and not (self.verifier or self.is_judged):
            raise ValueError(
                f"lane '{self.lane}' needs a 'verifier' with at least one check, or "
                "'expectations' for the judge to grade"
            )
        if self.lane == "prompt" and (self.verifier or self.fixture or self.setup):
            raise ValueError("prompt-lane cases take no 'verifier', 'fixture' or 'setup'")
        if self.lane == "evidence" and not self.artifacts_required:
            raise ValueError("lane 'evidence' needs 'artifacts_required'")
        if self.bundle is not None and self.lane != "evidence":
            raise ValueError("'bundle' belongs to evidence-lane cases (set lane: evidence)")
        if self.rubric_pass is not None and not self.rubric:
            raise ValueError("'rubric_pass' needs a 'rubric' with at least one note to judge")
        return self

    @property
    def judged_expectations(self) -> tuple[Expectation, ...]:
        """The expectations as :class:`Expectation` objects (plain text has no ``truth``)."""
        return tuple(
            e if isinstance(e, Expectation) else Expectation(text=e) for e in self.expectations
        )

    @property
    def artifact_requirements(self) -> tuple[ArtifactRequirement, ...]:
        """The required artifacts as :class:`ArtifactRequirement` objects."""
        return tuple(
            a if isinstance(a, ArtifactRequirement) else ArtifactRequirement(path=a)
            for a in self.artifacts_required
        )

    @property
    def is_judged(self) -> bool:
        """Whether a judge grades this case (it has expectations or a judged rubric)."""
        return bool(self.expectations) or self.rubric_pass is not None


class CaseFile(_Frozen):
    """A YAML case file: a list of cases under ``cases``."""

    cases: tuple[Case, ...] = Field(min_length=1)
    """The cases in this file."""


class Skill(_Frozen):
    """A skill with its variants (canonical, bootstrap, stale and any others)."""

    description: str = Field(min_length=1)
    """One-line trigger description, shown to agents in skill indexes (self-load)."""
    path: str = Field(min_length=1)
    """Canonical SKILL.md, relative to the suite."""
    bootstrap: str | None = None
    """What the agent discovers under self-load (a short pointer to the canonical skill);
    default: the canonical file."""
    variants: dict[str, str] = Field(default_factory=dict)
    """Other named variants (e.g. ``stale``, ``candidate``) as paths relative to the suite."""
    resources: str | None = None
    """A directory (relative to the suite) that ships with the skill: its ``scripts/``,
    ``references/``, ``assets/`` (e.g. a skill-creator skill directory). Agents that read
    skills from disk get the whole directory with the condition's text as its ``SKILL.md``;
    API agents read its files through ``load_skill``. Changing a file reruns the skill's items."""


class Condition(_Frozen):
    """How skill text reaches the agent."""

    mode: Literal["none", "self-load", "preloaded"]
    """``none``: no skill; ``self-load``: discoverable, the agent decides to load it;
    ``preloaded``: injected up front."""
    variant: str = "canonical"
    """Which skill variant the condition uses (``canonical``, ``stale``, or a suite variant)."""
    description: str = ""
    """What the condition tests."""


DEFAULT_CONDITIONS: dict[str, Condition] = {
    "none": Condition(mode="none", description="no skill: the raw baseline"),
    "self-load": Condition(
        mode="self-load", description="skill discoverable; the agent must decide to load it"
    ),
    "preloaded": Condition(mode="preloaded", description="canonical skill injected: the oracle"),
    "stale": Condition(mode="preloaded", variant="stale", description="stale skill injected"),
}


class SuiteDefaults(_Frozen):
    """Defaults applied to every run of the suite unless overridden."""

    trials: int = Field(default=1, ge=1)
    """Trials per (case, condition, provider)."""
    conditions: tuple[str, ...] = STANDARD_CONDITIONS
    """Conditions run by default."""
    pass_threshold: float = Field(default=0.6, ge=0, le=1)
    """Score needed to pass."""
    provider: str = "simulated"
    """Default provider."""
    seed: int = SEED.default
    """Default seed."""


class JudgeSpec(_Frozen):
    """The model that grades expectations and judged rubrics (``--judge-*`` override it)."""

    provider: str = Field(default="simulated", min_length=1)
    """A provider name (``anthropic``, ``openai_compat``, ``claude_code``), or ``simulated``:
    the offline judge that grades against each expectation's known truth."""
    model: str | None = None
    """Judge model (passed to the provider as its ``model`` setting)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """Provider settings of the judge (as under ``providers``); for ``simulated``:
    ``error_rate``, ``malformed_rate``, ``seed``."""
    timeout_s: float = Field(default=120.0, gt=0)
    """Wall-clock limit of one judge call in seconds."""
    min_kappa: float = Field(default=0.6, ge=-1, le=1)
    """Smallest lower confidence bound of Cohen's kappa (judge vs human labels, from
    ``evalkit judge calibrate``) at which the judge's verdicts may decide a gate; below it, or
    without a calibration, ``compare`` and the reports flag the verdict and ``gate`` blocks."""
    max_follow_rate: float = Field(default=0.2, ge=0, le=1)
    """Pairwise judges: largest upper confidence bound of the share of labelled pairs in which
    the judge obeys an instruction planted in the worse answer (the robustness probe of
    ``evalkit judge calibrate --pairwise``) at which its verdicts may decide a gate."""


class PairwiseSpec(_Frozen):
    """Blind pairwise comparisons (``evalkit compare A B --pairwise``): what "better" means."""

    rubric: str = ""
    """What makes one answer better than another (``--rubric FILE`` overrides it); empty: a
    generic rubric (correct, complete, fewer mistakes; length is no merit)."""
    judge: JudgeSpec | None = None
    """The comparator (default: the suite's ``judge``, else the offline ``simulated`` one,
    whose settings are ``error_rate``, ``position_bias``, ``tie_margin``, ``seed``)."""
    transcripts: bool = False
    """Also show the comparator each answer's bounded transcript excerpt."""


class SuiteFile(_Frozen):
    """The ``suite.yaml`` file."""

    name: str = Field(pattern=_ID_PATTERN)
    """Suite name, recorded in every result row."""
    description: str = ""
    """What the suite measures."""
    skills: dict[str, Skill] = Field(default_factory=dict)
    """Skills by name."""
    conditions: dict[str, Condition] = Field(default_factory=dict)
    """Extra or overriding conditions (the four standard ones are always defined)."""
    defaults: SuiteDefaults = SuiteDefaults()
    """Run defaults."""
    cases: tuple[str, ...] = ("cases/**/*.yaml", "cases/**/*.yml")
    """Glob patterns (relative to the suite) of case files."""
    anti_patterns: tuple[AntiPatternRule, ...] = ()
    """Anti-pattern rules applied to every case."""
    providers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Provider settings by provider name (overridden by ``--provider-opt``)."""
    judge: JudgeSpec | None = None
    """The judge of the suite's expectations (needed when a case has ``expectations`` or a
    ``rubric_pass``)."""
    pairwise: PairwiseSpec | None = None
    """Rubric and comparator of blind pairwise comparisons (``compare --pairwise``)."""

    @field_validator("skills")
    @classmethod
    def _skill_names_are_directory_names(cls, skills: dict[str, Skill]) -> dict[str, Skill]:
        # a skill is installed as <skills dir>/<name>/SKILL.md: the name must be one component
        for name in skills:
            reason = unsafe_component_reason(name)
            if reason is not None:
                raise ValueError(
                    f"skill name {name!r} {reason}; rename the skill to a plain name such as "
                    "'shell-scripts' (it becomes a directory name)"
                )
        return skills
