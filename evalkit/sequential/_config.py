r"""The design settings of a sequential run (``evalkit run --until-verdict``), validated once.

:class:`SequentialConfig` holds what :func:`~evalkit.sequential.run_until_verdict` decides
with besides the :class:`~evalkit.runner.RunConfig`: the round size, the verdict's threshold
and level, the tuning, the budgets, adaptive trials and the planned-effect futility boundary.
It checks every value when it is built; a bad one is a :class:`~evalkit.errors.ConfigError`
naming the parameter (``\`max_items\` must be a positive number, got 0``, with ``setting``
the parameter, which the command line shows as its flag; the shared settings
``round_cases``, ``confidence`` and ``threshold`` are checked by their entries of
:mod:`evalkit._settings`, whose message names both the flag and the parameter:
``--round-cases / round_cases must be an integer >= 1, but 0 was passed``).

The design half of a run's manifest record (:class:`~evalkit.results.SequentialRecord`) is
written from it, with the same keys and values as the record always had.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import model_validator

from evalkit._options import Options
from evalkit._settings import (
    CONFIDENCE,
    ROUND_CASES,
    THRESHOLD,
    Confidence,
    RoundCases,
    Threshold,
)
from evalkit.errors import ConfigError
from evalkit.stats import FUTILITY_BETA


class SequentialConfig(Options):
    """How a sequential run draws, looks, spends and stops.

    A budget given again when a run is resumed replaces the recorded one (a run stopped by
    its budget can be continued with a larger one); the other settings of a resumed run are
    those of its manifest, and another ``plan_effect`` is refused.

    Raises:
        ConfigError: A value out of its range, naming the parameter (or the name the
            validation context's ``names`` gives it).
    """


    round_cases: RoundCases = ROUND_CASES.default
    """Cases per round (one look after each round)."""
    threshold: Threshold = THRESHOLD.default
    """Practical threshold of "improved"."""
    confidence: Confidence = CONFIDENCE.default
    """Level of the confidence sequence."""
    plan_cases: int | None = None
    """Cases the bets are tuned for (None: untuned)."""
    max_items: int | None = None
    """Budget of items (a round that would pass it is not started)."""
    max_usd: float | None = None
    """Budget of agent cost (a round whose expected cost would pass it is not started)."""
    max_rounds: int | None = None
    """Budget of rounds."""
    adaptive_trials: bool = False
    """Adaptive trials (:class:`~evalkit.stats.AdaptiveTrials`): each new case runs 1 trial
    per condition, and the run's other trials only when its outcomes differ or its seeded
    draw says so; the looks use the corrected estimator."""
    stage_two_probability: float | None = None
    """With ``adaptive_trials``: stage-2 probability of a case whose first outcomes agree
    (default ``(K - 1) / K``)."""
    allocate_trials: bool = False
    """Neyman allocation of paired trials (:class:`~evalkit.stats.NeymanAllocation`): each
    round draws ``round_cases`` *pairs* (a baseline and a candidate trial of one case) from
    all the selected cases, more of those whose pairs differ; the looks use the weighted
    increments (docs/statistics.md, "Neyman allocation of paired trials")."""
    plan_effect: float | None = None
    """The planned effect (in (0, 1)): a look also stops the run as ``futile-planned`` when
    the futility e-process against "the difference is at least ``plan_effect``" reaches
    ``1 / futility_beta`` (None: no such boundary)."""
    futility_beta: float = FUTILITY_BETA
    """Error rate of that boundary (in (0, 1))."""

    @model_validator(mode="after")
    def _check_ranges(self) -> SequentialConfig:
        def name(parameter: str) -> str:
            return f"`{parameter}`"

        for parameter in ("max_items", "max_usd", "max_rounds", "plan_cases"):
            value = getattr(self, parameter)
            if value is not None and (not math.isfinite(value) or value <= 0):
                raise ConfigError(
                    f"{name(parameter)} must be a positive number, got {value!r}",
                    setting=parameter,
                )
        effect = self.plan_effect
        if effect is not None and not (math.isfinite(effect) and 0 < effect < 1):
            raise ConfigError(
                f"{name('plan_effect')} must be a difference of pass rates in (0, 1), e.g. 0.1 "
                f"for 10 pp, got {effect!r}",
                setting="plan_effect",
            )
        beta = self.futility_beta
        if not (math.isfinite(beta) and 0 < beta < 1):
            raise ConfigError(
                f"{name('futility_beta')} must be in (0, 1), e.g. 0.2, got {beta!r}",
                setting="futility_beta",
            )
        probability = self.stage_two_probability
        if probability is not None and not self.adaptive_trials:
            raise ConfigError(
                f"{name('stage_two_probability')}: only with {name('adaptive_trials')}",
                setting="stage_two_probability",
            )
        if probability is not None and not 0 < probability <= 1:
            raise ConfigError(
                f"{name('stage_two_probability')} must be in (0, 1], got {probability}",
                setting="stage_two_probability",
            )
        if self.allocate_trials and self.adaptive_trials:
            raise ConfigError(
                f"{name('allocate_trials')} and {name('adaptive_trials')} are two designs of "
                "the trials: pass one of them"
            )
        return self

    def budgets(self) -> dict[str, Any]:
        """The budgets given (``max_items``, ``max_usd``, ``max_rounds`` that are not None).

        Returns:
            ``{budget: value}``, what replaces a resumed run's recorded budgets.
        """
        return self.model_dump(include={"max_items", "max_usd", "max_rounds"}, exclude_none=True)
