"""Options of an ablation study: its own settings and the :class:`RunConfig` its runs use."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from evalkit._options import Options, nest_flat
from evalkit._settings import (
    ALPHA,
    N_RESAMPLES_QUICK,
    SEED,
    THRESHOLD,
    Alpha,
    Resamples,
    Seed,
    Threshold,
)
from evalkit.runner import RunConfig

#: The run settings an ablation study takes flat (``AblationConfig(skill=..., trials=2)``).
RUN_FIELDS = ("trials", "provider", "provider_options", "model", "case_ids", "lanes", "tags",
              "splits", "runs_dir", "run_id", "concurrency", "backend", "progress")


class AblationConfig(Options):
    """Everything that shapes ``evalkit ablate`` besides the suite.

    How the study's runs run (provider, trials, case filters, concurrency, backend, ...) and
    where the study lives (``runs_dir``, ``run_id``: the study id, default ``ablate-`` plus a
    timestamp) is one :class:`RunConfig`, :attr:`run`; each round runs it with its own
    conditions, cases and directory. Its fields of :data:`RUN_FIELDS` may also be given flat.
    With ``minimal``, the study runs on the ``dev`` split (``run.splits`` empty or ``dev``).
    """

    skill: str
    """The suite skill whose components are ablated."""
    components: tuple[str, ...] = ()
    """Component ids to ablate (default: every component; see ``--list``)."""
    mode: Literal["preloaded", "self-load"] = "preloaded"
    """How the full skill and each ablated copy reach the agent."""
    alpha: Alpha = ALPHA.default
    """Family-wise error over the components (Holm; Bonferroni split when sequential)."""
    threshold: Threshold = THRESHOLD.default
    """Smallest contribution (pass-rate scale) worth a component: a sequential study stops a
    component whose contribution is shown inside +-threshold, and ``minimal`` keeps the
    smaller skill only when it stays within threshold of the full one."""
    sequential: bool = False
    """Run in rounds of ``batch`` cases; each component stops at its own verdict."""
    batch: int = Field(default=8, ge=1)
    """Cases per round of a sequential study."""
    minimal: bool = False
    """Propose the smallest skill from the study (on ``dev``) and verify it on ``holdout``."""
    seed: Seed = SEED.default
    """Seed of the runs, the case order and the bootstrap."""
    n_resamples: Resamples = N_RESAMPLES_QUICK.default
    """Bootstrap replicates of each interval."""
    copies_quota_bytes: int = Field(default=2 << 30, ge=1)
    """Disk space the study's skill copies (the full skill and one without each component)
    may take; the study refuses to start, before writing any, when they would need more."""
    run: RunConfig = Field(default_factory=RunConfig)
    """How the study's runs run and where the study lives (default: the suite's provider and
    trials, ``runs/``)."""

    @model_validator(mode="before")
    @classmethod
    def _run_settings_given_flat(cls, data: Any) -> Any:
        """Flat :data:`RUN_FIELDS` become :attr:`run` (refused beside an explicit ``run``)."""
        return nest_flat(data, RUN_FIELDS)
