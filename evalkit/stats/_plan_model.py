"""The one simulation model a sequential plan uses for its fixed and its sequential design.

``evalkit power --sequential`` compares two designs. Both must be planned under the same
model, or the ratio between them measures the difference of two models, not of two designs.
The sequential design can only be simulated, so the model is the one the simulations draw
from (:func:`~evalkit.stats._simulate.simulate_arms`, the "headroom" model): case difficulty
``p ~ Beta(mu kappa, (1 - mu) kappa)``, the candidate moving a case by the same share of its
headroom, and a share ``1 - coupling`` of the cases moved from an independent difficulty so
that the arms' correlation is the stated one. The fixed design's number of cases is then
planned from this model's exact variance components (:func:`model_components`), which a
simulation of the same model confirms (tests).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from evalkit.errors import InputError
from evalkit.stats._frame import json_ready
from evalkit.stats._power import DEFAULT_CONCENTRATION, DEFAULT_CORRELATION
from evalkit.stats._simulate import coupling_for, headroom_slope, model_components
from evalkit.stats._variance import VarianceComponents

HEADROOM_MODEL = "headroom"


@dataclass(frozen=True)
class PlanModel:
    """The headroom model of a plan, its parameters and its exact variance components.

    Attributes:
        name: ``"headroom"`` (:func:`~evalkit.stats._simulate.simulate_arms`).
        baseline_rate: Mean baseline pass rate ``mu``.
        concentration: Beta concentration ``kappa`` of case difficulty.
        effect: True difference of mean pass rates.
        n_trials: Trials per case and arm.
        coupling: Share of cases whose candidate rate follows their own difficulty.
        stated_correlation: The arm correlation the model was asked to reproduce.
        components: The model's exact variance components (averaged over the two arms).
        note: Plain-language caveat when the stated correlation cannot be reproduced.
    """

    name: str
    baseline_rate: float
    concentration: float
    effect: float
    n_trials: int
    coupling: float
    stated_correlation: float
    components: VarianceComponents
    note: str = ""

    @property
    def var_difference(self) -> float:
        """Variance of one case's observed paired difference (``omega^2``) at ``n_trials``."""
        parts = self.components
        return 2.0 * parts.var_between * (1.0 - parts.correlation) + (
            2.0 * parts.var_within / self.n_trials
        )

    def parameters(self) -> dict[str, Any]:
        """The model's name and parameters as plain JSON values."""
        return dict(
            json_ready(
                {
                    "name": self.name,
                    "baseline_rate": self.baseline_rate,
                    "concentration": self.concentration,
                    "effect": self.effect,
                    "n_trials": self.n_trials,
                    "coupling": self.coupling,
                    "stated_correlation": self.stated_correlation,
                    "note": self.note,
                }
            )
        )

    def components_dict(self) -> dict[str, Any]:
        """The variance components both designs were planned with, as plain JSON values."""
        parts = self.components
        return dict(
            json_ready(
                {
                    "baseline_rate": parts.baseline_rate,
                    "var_between": parts.var_between,
                    "var_within": parts.var_within,
                    "correlation": parts.correlation,
                    "var_difference": self.var_difference,
                }
            )
        )


def headroom_model(
    effect: float,
    n_trials: int,
    *,
    baseline_rate: float = 0.5,
    var_between: float | None = None,
    correlation: float | None = None,
) -> PlanModel:
    """The headroom model reproducing a baseline's spread and the arms' stated correlation.

    Args:
        effect: True difference of mean pass rates.
        n_trials: Trials per case and arm.
        baseline_rate: Mean baseline pass rate (in (0, 1)).
        var_between: Between-case variance of the true rates averaged over the two arms, as
            :func:`~evalkit.stats.estimate_variance_components` reports it; the model's
            concentration reproduces it (None, NaN, 0 or beyond what a Beta distribution
            allows: the default concentration 4, Beta(2, 2) at 0.5).
        correlation: Stated correlation of the arms' true per-case rates (None or NaN: 0.5,
            the planning default).

    Returns:
        The :class:`PlanModel`.

    Raises:
        InputError: A baseline rate outside (0, 1), or an effect that would move the
            candidate's pass rate out of [0, 1].

    Examples:
        >>> model = headroom_model(0.2, 3)
        >>> model.concentration, round(model.coupling, 3), round(model.components.correlation, 3)
        (4.0, 0.567, 0.5)
    """
    if not 0.0 < baseline_rate < 1.0:
        raise InputError(
            f"The value for `baseline_rate` must lie in (0, 1) to simulate a plan, but "
            f"{baseline_rate!r} was passed."
        )
    if not -baseline_rate <= effect <= 1.0 - baseline_rate:
        raise InputError(
            f"The value for `effect` must lie in [{-baseline_rate:g}, {1.0 - baseline_rate:g}] "
            f"with a baseline rate of {baseline_rate:g} (the candidate's pass rate cannot "
            f"leave [0, 1]), but {effect!r} was passed; lower --effect or "
            f"the baseline rate."
        )
    spread = baseline_rate * (1.0 - baseline_rate)
    concentration = DEFAULT_CONCENTRATION
    if var_between is not None and math.isfinite(var_between) and var_between > 0:
        # the model's arm-averaged variance is var_a (1 + shrink^2) / 2: solve for var_a
        baseline_var = 2.0 * var_between / (1.0 + headroom_slope(baseline_rate, effect) ** 2)
        if baseline_var < spread:
            concentration = spread / baseline_var - 1.0
    stated = (
        DEFAULT_CORRELATION
        if correlation is None or not math.isfinite(correlation)
        else float(correlation)
    )
    coupling = coupling_for(baseline_rate, effect, concentration, stated)
    components = model_components(baseline_rate, effect, concentration, coupling)
    note = ""
    if abs(components.correlation - stated) > 1e-9:
        coupled = model_components(baseline_rate, effect, concentration).correlation
        note = (
            f"the stated arm correlation {stated:.3g} is outside what the headroom model "
            f"reaches at this effect (0 to {coupled:.3g}); both designs are planned with "
            f"{components.correlation:.3g}"
        )
    return PlanModel(
        name=HEADROOM_MODEL,
        baseline_rate=baseline_rate,
        concentration=concentration,
        effect=effect,
        n_trials=n_trials,
        coupling=coupling,
        stated_correlation=stated,
        components=components,
        note=note,
    )
