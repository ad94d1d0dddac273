"""Run configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator

from evalkit._options import Options
from evalkit._paths import unsafe_component_reason
from evalkit._settings import CONCURRENCY, RETRIES, RUNS_DIR, Concurrency, Retries, RunsDir, Seed

Backend = Literal["loky", "threading", "dask", "ray"]


class SkillOverride(BaseModel):
    """A skill variant's text replaced by a file (``--skill NAME[:VARIANT]=PATH``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    skill: str
    """Skill name."""
    variant: str = "canonical"
    """Variant to replace."""
    path: Path
    """File holding the new text."""


class DescriptionOverride(BaseModel):
    """A skill's trigger description replaced (``--description NAME=TEXT`` or ``NAME=@FILE``).

    The description is what self-load shows the agent in its skill index, so a description
    variant changes when the skill triggers and nothing else.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    skill: str
    """Skill name."""
    text: str = Field(min_length=1)
    """The new description."""


class RunConfig(Options):
    """Everything that shapes a run besides the suite. ``None`` means "the suite's default".

    Only ``provider``, ``provider_options``, ``model``, ``conditions``, the case filters,
    ``trials``, ``case_trials``, ``seed``, ``skills`` and ``descriptions`` can change the
    agent's outcomes, and the ``judge_*`` options the verdicts on expectations; concurrency,
    backend, paths and progress never do.
    """


    provider: str | None = None
    """Provider name (default: the suite's, else ``simulated``)."""
    provider_options: dict[str, Any] = Field(default_factory=dict)
    """Provider settings (``--provider-opt KEY=VALUE``), over the suite's ``providers``."""
    model: str | None = None
    """Model override, passed to the provider as its ``model`` setting."""
    judge_provider: str | None = None
    """Judge of the suite's expectations (default: the suite's ``judge``)."""
    judge_model: str | None = None
    """Judge model override."""
    judge_options: dict[str, Any] = Field(default_factory=dict)
    """Judge settings (``--judge-opt KEY=VALUE``), over the suite's ``judge.settings``."""
    conditions: tuple[str, ...] | None = None
    """Conditions to run (default: the suite's)."""
    lanes: tuple[str, ...] = ()
    """Only cases of these lanes."""
    case_ids: tuple[str, ...] = ()
    """Only these cases."""
    tags: tuple[str, ...] = ()
    """Only cases carrying any of these tags."""
    splits: tuple[str, ...] = ()
    """Only cases of these splits."""
    trials: int | None = Field(default=None, ge=1)
    """Trials per (case, condition, provider) (default: the suite's)."""
    case_trials: dict[str, PositiveInt] = Field(default_factory=dict)
    """Trials of particular cases (case id to trials), over ``trials``: adaptive trials of
    ``run --until-verdict --adaptive-trials`` run a case's first trials, then the rest when
    it needs them."""
    seed: Seed | None = None
    """Run seed (default: the suite's)."""
    skills: tuple[SkillOverride, ...] = ()
    """Skill texts replaced for this run only."""
    descriptions: tuple[DescriptionOverride, ...] = ()
    """Skill descriptions replaced for this run only (the trigger mechanism under self-load)."""
    concurrency: Concurrency = CONCURRENCY.default
    """Work items in flight at once (at least 1)."""
    backend: Backend = "loky"
    """joblib backend: ``loky`` (processes), ``threading``, ``dask`` or ``ray``."""
    scheduler: str | None = None
    """Dask scheduler address (``tcp://host:port``) for ``backend="dask"``."""
    runs_dir: RunsDir = RUNS_DIR.default
    """Where run directories and the cache live."""
    run_id: str | None = None
    """Run id (default: a timestamp plus a random suffix)."""
    resume: bool = False
    """Continue the run ``run_id``, keeping every finished item (starts it if it does not exist)."""
    extend: bool = False
    """With ``resume``: the plan may have grown (more cases, as a sequential design adds them
    round by round); every finished item must be an item of the new plan, same item hash."""
    use_cache: bool = True
    """Reuse outcomes of identical items (same item hash) from earlier runs."""
    retries: Retries = RETRIES.default
    """Retries of infrastructure errors (never of wrong answers)."""
    retry_backoff_s: float = Field(default=1.0, ge=0)
    """Base of the exponential backoff between retries (with jitter)."""
    workspace_quota_bytes: int = Field(default=2 << 30, ge=1)
    """Disk space one item's workspace may use (default 2 GiB). An item that used more is an
    error row of class ``workspace_quota`` (its own failure), also when it filled the disk."""
    progress: bool = True
    """Show a progress bar on stderr."""
    verbose: bool = False
    """Echo per-item logs (prefixed with the item key) to stderr."""
    command_line: str = ""
    """The command line that started the run (recorded in the manifest)."""

    @field_validator("run_id")
    @classmethod
    def _run_id_is_one_component(cls, value: str | None) -> str | None:
        reason = None if value is None else unsafe_component_reason(value)
        if reason is not None:
            raise ValueError(
                f"run id {value!r} {reason}; use a plain name that names a directory inside "
                "runs_dir"
            )
        return value
