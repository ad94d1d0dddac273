"""The options of an optimisation run: its own settings and the :class:`RunConfig` it runs with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
from evalkit.optimize._state import OptimizeTarget
from evalkit.runner import RunConfig

#: Trials per case of every evaluation unless the run settings say otherwise.
DEFAULT_TRIALS = 3

#: The run settings an optimisation was always configured with as fields of its own: they are
#: accepted flat (``OptimizeConfig(trials=5, concurrency=4)``) and recorded flat.
RUN_FIELDS = (
    "trials",
    "provider",
    "provider_options",
    "runs_dir",
    "run_id",
    "resume",
    "concurrency",
    "backend",
)

#: The order of the recorded configuration in ``optimize.json`` (:meth:`OptimizeConfig.record`).
RECORD_ORDER = (
    "skill",
    "target",
    "optimizer",
    "optimizer_settings",
    "seed_skill",
    "condition",
    "trials",
    "provider",
    "provider_options",
    "max_iterations",
    "stall",
    "max_metric_calls",
    "max_usd",
    "parallel",
    "threshold",
    "alpha",
    "derive_splits",
    "split_seed",
    "seed",
    "runs_dir",
    "run_id",
    "resume",
    "concurrency",
    "backend",
    "n_resamples",
)


class OptimizeConfig(Options):
    """Options of an optimisation run.

    How the evaluations run (provider, trials, concurrency, backend, ...) and where the
    optimisation run lives (``runs_dir``, ``run_id``, ``resume``) is one :class:`RunConfig`,
    :attr:`run`; each evaluation runs it with its own conditions, cases, seed and skill
    variant. Its fields of :data:`RUN_FIELDS` may also be given flat, as keywords of their own.
    """


    skill: str
    """Name of the suite skill whose canonical text (or description) is optimised."""
    target: OptimizeTarget = "text"
    """What is optimised: ``text`` (the skill text; the gate compares pass rates) or
    ``description`` (its one-line trigger description, evaluated under a self-load condition
    plus ``none``; the gate compares trigger F1)."""
    optimizer: str
    """``command:CMD``, ``python:module:function`` or ``provider:NAME``."""
    optimizer_settings: dict[str, Any] = Field(default_factory=dict)
    """Settings of a ``provider:`` optimizer."""
    seed_skill: Path | None = None
    """Starting text or description (default: the suite's canonical text or description)."""
    condition: str = "preloaded"
    """Condition the candidate is evaluated under (default ``preloaded``, and ``self-load`` in
    description mode, which needs a self-load condition)."""
    max_iterations: int | None = Field(default=10, ge=1)
    """Candidates to propose at most."""
    stall: int | None = Field(default=5, ge=1)
    """Stop after this many consecutive rejects."""
    max_metric_calls: int | None = Field(default=None, ge=1)
    """Work items (evaluations of one case trial) to spend at most."""
    max_usd: float | None = Field(default=None, gt=0)
    """Money to spend at most (evaluations plus optimizer)."""
    parallel: int = Field(default=1, ge=1)
    """Sibling candidates per round (a breadth-first search when > 1)."""
    threshold: Threshold = THRESHOLD.default
    """Practical threshold of the paired gate, in [0, 1]."""
    alpha: Alpha = ALPHA.default
    """Family-wise chance of accepting at least one noise-only candidate over the whole run:
    each gate uses a one-sided level of ``alpha / max_iterations`` (Bonferroni), because a hill
    climb tests many candidates and would otherwise bank noise sooner or later."""
    derive_splits: tuple[float, float, float] | None = None
    """Derive dev/holdout/test from a seeded hash with these shares instead of case fields."""
    split_seed: int = 0
    """Seed of derived splits."""
    seed: Seed = SEED.default
    """Base seed of evaluations (each evaluation gets its own, derived from it)."""
    n_resamples: Resamples = N_RESAMPLES_QUICK.default
    """Bootstrap replicates of the gate."""
    run: RunConfig = Field(default_factory=lambda: RunConfig(trials=DEFAULT_TRIALS))
    """How evaluations run and where the optimisation run lives (default: 3 trials per case,
    the suite's provider, ``runs/``)."""

    @model_validator(mode="before")
    @classmethod
    def _condition_of_the_target(cls, data: Any) -> Any:
        """An unset (None) condition is ``preloaded`` for text, ``self-load`` for descriptions."""
        if isinstance(data, dict) and data.get("condition") is None:
            data = dict(data)
            data["condition"] = (
                "self-load" if data.get("target") == "description" else "preloaded"
            )
        return data

    @model_validator(mode="before")
    @classmethod
    def _run_settings_given_flat(cls, data: Any) -> Any:
        """Flat :data:`RUN_FIELDS` become :attr:`run` (refused beside an explicit ``run``)."""
        return nest_flat(data, RUN_FIELDS, defaults={"trials": DEFAULT_TRIALS})

    def record(self) -> dict[str, Any]:
        """The options as ``optimize.json`` records them: every field flat, in one order.

        Returns:
            The fields of :data:`RECORD_ORDER` as JSON values (the run settings of
            :data:`RUN_FIELDS` taken from :attr:`run`).
        """
        own = self.model_dump(mode="json", exclude={"run"})
        run = self.run.model_dump(mode="json", include=set(RUN_FIELDS))
        values = own | run
        return {name: values[name] for name in RECORD_ORDER}
