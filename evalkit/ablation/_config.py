"""Options of an ablation study."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from evalkit._options import Options
from evalkit._paths import unsafe_component_reason
from evalkit._settings import (
    ALPHA,
    CONCURRENCY,
    N_RESAMPLES_QUICK,
    RUNS_DIR,
    SEED,
    THRESHOLD,
    Alpha,
    Concurrency,
    Resamples,
    RunsDir,
    Seed,
    Threshold,
)
from evalkit.runner import Backend


class AblationConfig(Options):
    """Everything that shapes ``evalkit ablate`` besides the suite."""


    skill: str
    """The suite skill whose components are ablated."""
    components: tuple[str, ...] = ()
    """Component ids to ablate (default: every component; see ``--list``)."""
    mode: Literal["preloaded", "self-load"] = "preloaded"
    """How the full skill and each ablated copy reach the agent."""
    trials: int | None = Field(default=None, ge=1)
    """Trials per case and condition (default: the suite's)."""
    provider: str | None = None
    """Provider of the agent (default: the suite's)."""
    provider_options: dict[str, Any] = Field(default_factory=dict)
    """Settings of that provider."""
    model: str | None = None
    """Model override."""
    case_ids: tuple[str, ...] = ()
    """Only these cases."""
    lanes: tuple[str, ...] = ()
    """Only cases of these lanes."""
    tags: tuple[str, ...] = ()
    """Only cases carrying any of these tags."""
    splits: tuple[str, ...] = ()
    """Only cases of these splits (with ``minimal``: the study runs on ``dev``)."""
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
    runs_dir: RunsDir = RUNS_DIR.default
    """Where the study directory is created."""
    run_id: str | None = None
    """Study id (default: ``ablate-`` plus a timestamp)."""
    copies_quota_bytes: int = Field(default=2 << 30, ge=1)
    """Disk space the study's skill copies (the full skill and one without each component)
    may take; the study refuses to start, before writing any, when they would need more."""
    concurrency: Concurrency = CONCURRENCY.default
    """Work items in flight."""
    backend: Backend = "loky"
    """joblib backend of the runs."""
    progress: bool = True
    """Progress bars on stderr."""

    @field_validator("run_id")
    @classmethod
    def _run_id_is_one_component(cls, value: str | None) -> str | None:
        reason = None if value is None else unsafe_component_reason(value)
        if reason is not None:
            raise ValueError(f"run id {value!r} {reason}; use a plain name")
        return value
