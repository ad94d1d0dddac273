"""Power and planning for paired comparisons (Miller 2024, "Adding Error Bars to Evals").

Model (Miller sec. 2-5, in evalkit's words). A case has a true pass rate ``x`` in each arm;
its observed rate averages ``K`` trials. For the paired difference of one case,

    omega^2 = Var(x_B - x_A) + (E[sigma_A^2] + E[sigma_B^2]) / K
            = 2 * var_between * (1 - correlation) + 2 * var_within / K,

where ``var_between`` is the between-case variance of the true rates of an arm,
``correlation`` the correlation of the two arms' true rates across cases and ``var_within``
the mean trial-to-trial variance of a case (``E[p (1 - p)]`` for pass bits); both arms are
assumed to share the baseline's variances. With ``n`` cases the paired estimate has standard
error ``sqrt(omega^2 / n)``, and Miller's eq. 9-10 (normal approximation, two-sided level
alpha) read

    minimum detectable effect  delta = (z_{1-alpha/2} + z_{power}) * sqrt(omega^2 / n)
    required cases             n     = (z_{1-alpha/2} + z_{power})^2 * omega^2 / delta^2

and the required trials solve the first equation for ``K`` (impossible when the between-case
term alone exceeds the budget: more trials cannot fix too few cases).

Default ``method="t"``: the same equations solved with the power of the two-sided one-sample
t-test on ``n - 1`` degrees of freedom (noncentral t, as statsmodels ``TTestPower``; checked
against it in the tests), because evalkit's interval is t-calibrated (Hesterberg's expanded
percentile bootstrap). Measured under Miller's model (+15 pp, K = 3, 3,000 simulations of the
real procedure): the normal formula prescribes 49 cases, which give 78.5 % power, not 80 %;
the t version prescribes 51 cases, which give 80.0 %. ``method="normal"`` is Miller's formula
as printed.

Defaults when nothing is known: ``baseline_rate = 0.5``; ``var_between`` of a Beta
distribution with concentration 4 at that mean (``p (1 - p) / 5``: Beta(2, 2) at 0.5, the
model of the tests); ``var_within = p (1 - p) - var_between`` (exact for pass bits); and
``correlation = 0.5``. Better: estimate them from a pilot run with
:func:`estimate_variance_components`.

:func:`simulate_power` checks the formulas against the procedure evalkit actually runs:
it simulates Miller's model and applies :func:`paired_compare`'s overall verdict
(paired cluster bootstrap + docs/architecture.md verdict, including the practical threshold).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, cast, get_args

from pydantic import model_validator
from scipy import optimize, stats

from evalkit._display import RichDisplay
from evalkit._options import Options
from evalkit._percent import percent
from evalkit._settings import ALPHA, METHOD, POWER, Alpha, Power, PowerMethod, PowerMethodChoice
from evalkit.errors import InputError
from evalkit.stats._frame import check_positive_int, json_ready
from evalkit.stats._settings import check_threshold
from evalkit.stats._variance import VarianceComponents

DEFAULT_CORRELATION = 0.5
DEFAULT_CONCENTRATION = 4.0
POWER_METHODS: tuple[PowerMethod, ...] = get_args(PowerMethod)


@dataclass(frozen=True)
class PowerResult(RichDisplay):
    """A power calculation or simulation.

    Attributes:
        n_cases: Number of cases of the design (None when unreachable).
        n_trials: Trials per case and arm (None when no number of trials suffices).
        effect: Effect size (difference of pass rates); for :func:`minimum_detectable_effect`
            the minimum detectable effect.
        power: Power of the design (noncentral-t or normal power for ``method="t"`` /
            ``"normal"``; the share of simulations reaching the verdict for
            ``method="simulation"``).
        alpha: Two-sided significance level (1 - confidence of the verdict's interval).
        baseline_rate: Baseline pass rate.
        var_between: Between-case variance of an arm's true rates.
        var_within: Mean within-case variance of one trial.
        correlation: Correlation of the two arms' true per-case rates.
        se: Standard error of the paired difference at this design (NaN if unreachable).
        method: ``"t"`` (Miller eq. 9-10 with Student t), ``"normal"`` (as printed) or
            ``"simulation"``.
        ci_low: Simulation only: lower Wilson bound of the power estimate.
        ci_high: Simulation only: upper Wilson bound of the power estimate.
        n_sims: Simulation only: number of simulated comparisons.
        threshold: Practical threshold of the verdict "improved" the plan accounts for.
        note: Plain-language caveat, e.g. why no number of cases can show "improved".
        sequential: With ``evalkit power --sequential``: the simulated sequential design for
            the same effect and alpha (``SequentialPlan.to_dict()`` plus ``ratio_to_fixed``,
            its expected cases over the fixed design's ``n_cases``); None otherwise.
        model: With ``--sequential``: the one simulation model both designs were planned
            under (``PlanModel.parameters()``: ``name``, ``baseline_rate``,
            ``concentration``, ``effect``, ``n_trials``, ``coupling``,
            ``stated_correlation``, ``note``); None otherwise.
        components: With ``--sequential``: that model's exact variance components, which
            the fixed design's ``n_cases`` was planned from (``baseline_rate``,
            ``var_between``, ``var_within``, ``correlation``, ``var_difference``); None
            otherwise.
    """

    n_cases: int | None
    n_trials: int | None
    effect: float
    power: float
    alpha: float
    baseline_rate: float
    var_between: float
    var_within: float
    correlation: float
    se: float
    method: str
    ci_low: float | None = None
    ci_high: float | None = None
    n_sims: int | None = None
    threshold: float | None = None
    note: str = ""
    sequential: dict[str, Any] | None = None
    model: dict[str, Any] | None = None
    components: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict of every field (NaN → None).

        Returns:
            The fields as a dict.
        """
        return dict(json_ready(asdict(self)))


class PowerDesign(Options):
    """The inputs of a power calculation, validated once (the model of the module doc).

    :func:`minimum_detectable_effect`, :func:`required_cases` and :func:`required_trials`
    take it as ``design=``; :meth:`from_components` builds one from a pilot's estimates. A
    variance left as None takes its default at ``baseline_rate`` when the design is built,
    so after construction every field holds the value the calculation uses.

    Attributes:
        baseline_rate: Baseline pass rate, in [0, 1].
        var_between: Between-case variance of an arm's true rates (None: a Beta
            distribution of concentration 4 at ``baseline_rate``).
        var_within: Mean within-case variance of one trial (None: ``p (1 - p)`` minus
            ``var_between``, exact for pass bits).
        correlation: Correlation of the arms' true per-case rates, in [-1, 1].
        alpha: Two-sided significance level, in (0, 1).
        power: Target power, in (0, 1).
        method: ``"t"`` (noncentral t) or ``"normal"`` (Miller's formula as printed).
        var_difference: A pilot's measured variance of a case's paired difference, used
            as it is at ``difference_trials`` trials when the pilot could not split it into
            between- and within-case parts (one trial per case): then no model is needed
            at the pilot's own design, and none could be fitted (None: the model's).
        difference_trials: The trials per case ``var_difference`` was measured at.

    Examples:
        >>> design = PowerDesign(baseline_rate=0.5)
        >>> design.var_between, design.var_within
        (0.05, 0.2)
    """

    baseline_rate: float = 0.5
    var_between: float | None = None
    var_within: float | None = None
    correlation: float = DEFAULT_CORRELATION
    alpha: Alpha = ALPHA.default
    power: Power = POWER.default
    method: PowerMethodChoice = METHOD.default
    var_difference: float | None = None
    difference_trials: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _resolved(cls, data: Any) -> Any:
        """Check every input (the first bad one raises, named) and resolve the variances."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        data["method"] = METHOD.check(data.get("method", METHOD.default))
        rate = _number(data.get("baseline_rate", 0.5), "baseline_rate", 0.0, 1.0)
        spread = rate * (1.0 - rate)
        given = data.get("var_between")
        between = spread / (DEFAULT_CONCENTRATION + 1.0) if given is None else given
        between = _number(between, "var_between", 0.0, math.inf)
        within = data.get("var_within")
        within = max(spread - between, 0.0) if within is None else within
        data.update({
            "baseline_rate": rate,
            "var_between": between,
            "var_within": _number(within, "var_within", 0.0, math.inf),
            "correlation": _number(
                data.get("correlation", DEFAULT_CORRELATION), "correlation", -1.0, 1.0
            ),
            "alpha": ALPHA.check(data.get("alpha", ALPHA.default)),
            "power": POWER.check(data.get("power", POWER.default)),
        })
        return data

    @classmethod
    def from_components(
        cls,
        components: VarianceComponents | None = None,
        *,
        baseline_rate: float | None = None,
        var_between: float | None = None,
        var_within: float | None = None,
        correlation: float | None = None,
        alpha: float = ALPHA.default,
        power: float = POWER.default,
        method: str = METHOD.default,
    ) -> PowerDesign:
        """A design from explicit inputs, then a pilot's ``components``, then the defaults.

        Args:
            components: Estimates from :func:`estimate_variance_components` (undefined
                estimates are ignored), or None.
            baseline_rate: Baseline pass rate (None: the components', else 0.5).
            var_between: Between-case variance (None: the components', else the default).
            var_within: Within-case variance (None: the components', else the default).
            correlation: Correlation of the arms (None: the components', else 0.5).
            alpha: Two-sided significance level.
            power: Target power.
            method: ``"t"`` or ``"normal"``.

        Returns:
            The validated design.

        Raises:
            InputError: An input out of range (named).
        """
        measured: dict[str, Any] = {}
        if components is not None:
            split = math.isfinite(components.var_between) and math.isfinite(
                components.var_within
            )
            stated = var_between is not None or var_within is not None or correlation is not None
            if not split and not stated and math.isfinite(components.var_difference):
                measured = {
                    "var_difference": components.var_difference,
                    "difference_trials": components.n_trials,
                }
            baseline_rate = components.baseline_rate if baseline_rate is None else baseline_rate
            if var_between is None and math.isfinite(components.var_between):
                var_between = components.var_between
            if var_within is None and math.isfinite(components.var_within):
                var_within = components.var_within
            if correlation is None and math.isfinite(components.correlation):
                correlation = components.correlation
        return cls(
            baseline_rate=0.5 if baseline_rate is None else baseline_rate,
            var_between=var_between,
            var_within=var_within,
            correlation=DEFAULT_CORRELATION if correlation is None else correlation,
            alpha=alpha,
            power=power,
            method=method,
            **measured,
        )

    @property
    def between(self) -> float:
        """``var_between`` as resolved when the design was built."""
        return cast(float, self.var_between)

    @property
    def within(self) -> float:
        """``var_within`` as resolved when the design was built."""
        return cast(float, self.var_within)

    def omega2(self, n_trials: float) -> float:
        """Variance of one case's paired difference with ``n_trials`` trials per arm."""
        if self.var_difference is not None and n_trials == self.difference_trials:
            return self.var_difference
        return self.between_diff + 2.0 * self.within / n_trials

    @property
    def between_diff(self) -> float:
        """Between-case variance of the paired difference of true rates."""
        return 2.0 * self.between * (1.0 - self.correlation)

    def power_at(self, standardized: float, n_cases: float) -> float:
        """Two-sided power for a standardized effect ``delta / omega`` with ``n_cases`` cases.

        Normal: ``Phi(d sqrt(n) - z) + Phi(-d sqrt(n) - z)``; t: the noncentral-t power of
        the one-sample t-test on ``n - 1`` degrees of freedom (statsmodels ``TTestPower``).
        """
        shift = abs(standardized) * math.sqrt(n_cases)
        if self.method == "normal":
            z = float(stats.norm.isf(self.alpha / 2))
            return float(stats.norm.sf(z - shift) + stats.norm.cdf(-z - shift))
        if shift > 60.0:
            return 1.0
        df = n_cases - 1.0
        crit = float(stats.t.isf(self.alpha / 2, df))
        upper = float(stats.nct.sf(crit, df, shift))
        lower = float(stats.nct.cdf(-crit, df, shift))  # far tail; scipy gives NaN when ~0
        if not math.isfinite(upper):
            upper = float(stats.norm.sf(crit - shift))
        return min(1.0, upper + (lower if math.isfinite(lower) else 0.0))

    def verdict_power(self, size: float, omega: float, n_cases: float, threshold: float) -> float:
        """Probability of the verdict "improved": interval above 0 *and* estimate >= threshold.

        The first event has the test's power (:meth:`power_at`); the second, with the estimate
        approximately normal around ``size`` with standard error ``omega / sqrt(n)``, has
        probability ``Phi((size - threshold) / se)``. Whichever is binding dominates (far from
        the threshold the interval, near it the threshold), so the joint probability is taken
        as the smaller of the two; simulations of the real procedure confirm the plans (tests).
        """
        se = omega / math.sqrt(n_cases)
        reach = float(stats.norm.cdf((size - threshold) / se)) if se > 0 else 1.0
        return min(self.power_at(size / omega, n_cases), reach)

    def verdict_cases(self, size: float, omega: float, threshold: float) -> int:
        """Smallest number of cases whose :meth:`verdict_power` reaches the target power."""
        low = self.cases_for(size / omega)
        if self.verdict_power(size, omega, low, threshold) >= self.power:
            return low
        high = low
        while self.verdict_power(size, omega, high, threshold) < self.power:
            low, high = high, high * 2
        while high - low > 1:
            middle = (low + high) // 2
            if self.verdict_power(size, omega, middle, threshold) >= self.power:
                high = middle
            else:
                low = middle
        return high

    def normal_multiplier(self) -> float:
        """``z_{1-alpha/2} + z_{power}`` (Miller eq. 9-10)."""
        return float(stats.norm.isf(self.alpha / 2) + stats.norm.ppf(self.power))

    def cases_for(self, standardized: float) -> int:
        """Smallest number of cases (>= 2) reaching the target power."""
        guess = (self.normal_multiplier() / standardized) ** 2
        if self.method == "normal":
            return max(2, math.ceil(guess - 1e-9))
        cases = max(2, math.floor(guess))
        while self.power_at(standardized, cases) < self.power:
            cases += 1
        return cases

    def detectable(self, n_cases: int) -> float:
        """Standardized effect detected with the target power by ``n_cases`` cases."""
        guess = self.normal_multiplier() / math.sqrt(n_cases)
        if self.method == "normal":
            return guess
        high = 2.0 * guess
        while self.power_at(high, n_cases) < self.power:
            high *= 2.0
        root: float = optimize.brentq(
            lambda d: self.power_at(d, n_cases) - self.power, 1e-12, high, xtol=1e-12
        )
        return root

    def result(self, **fields: Any) -> PowerResult:
        """Build a PowerResult carrying this design's inputs."""
        return PowerResult(
            alpha=self.alpha,
            baseline_rate=self.baseline_rate,
            var_between=self.between,
            var_within=self.within,
            correlation=self.correlation,
            method=self.method,
            **fields,
        )


def _number(value: Any, name: str, low: float, high: float, *, open_low: bool = False) -> float:
    """Validate a float in ``[low, high]`` (or ``(low, high]``)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not math.isfinite(number) or number > high or number < low or (open_low and number == low):
        bracket = "(" if open_low else "["
        raise InputError(
            f"The value for `{name}` must be a number in {bracket}{low}, {high}], "
            f"but {value!r} was passed."
        )
    return number


def minimum_detectable_effect(
    n_cases: int,
    n_trials: int = 1,
    *,
    design: PowerDesign | None = None,
    threshold: float | None = None,
) -> PowerResult:
    """Smallest paired effect a design detects with the given power (Miller eq. 9).

    "Detects" means evalkit's verdict "improved": besides Miller's eq. 9 (interval above 0),
    the estimate must reach the practical ``threshold``, which needs an effect of at least
    ``threshold + z_power * se``; the larger of the two is returned.

    Args:
        n_cases: Cases in the comparison (>= 2).
        n_trials: Trials per case and arm.
        design: The model's inputs, alpha, power and method (None: the defaults; a pilot's
            estimates through :meth:`PowerDesign.from_components`).
        threshold: Practical threshold of "improved" (default 0.05; 0 gives Miller's eq. 9).

    Returns:
        :class:`PowerResult` whose ``effect`` is the minimum detectable effect.

    Raises:
        InputError: Arguments out of range.

    Examples:
        >>> mde = minimum_detectable_effect(100, 3)
        >>> round(mde.effect, 3), round(mde.se, 4)
        (0.121, 0.0428)
    """
    cases = check_positive_int(n_cases, "n_cases", 2)
    trials = check_positive_int(n_trials, "n_trials")
    design = design or PowerDesign()
    omega = math.sqrt(design.omega2(trials))
    se = omega / math.sqrt(cases)
    limit = check_threshold(threshold)
    effect = max(design.detectable(cases) * omega, limit + float(stats.norm.ppf(design.power)) * se)
    return design.result(
        n_cases=cases,
        n_trials=trials,
        effect=effect,
        power=design.power,
        se=se,
        threshold=limit,
    )


def required_cases(
    effect: float,
    n_trials: int = 1,
    *,
    design: PowerDesign | None = None,
    threshold: float | None = None,
) -> PowerResult:
    """Number of cases needed to detect ``effect`` with the given power (Miller eq. 10).

    The plan is for evalkit's own verdict rule: "improved" needs the interval above 0
    (Miller's eq. 10) *and* the estimate at or above the practical ``threshold`` (default
    0.05), so for effects near the threshold many more cases are needed than Miller's formula
    says. When ``|effect|`` is at or below the threshold no number of cases reaches the target
    power (the estimate falls below the threshold about half the time or more): ``n_cases`` is
    None and ``note`` says why. A negative effect is planned as a regression, which needs no
    threshold.

    Args:
        effect: Difference of pass rates to detect (sign ignored; non-zero).
        n_trials: Trials per case and arm.
        design: The model's inputs, alpha, power and method (None: the defaults; a pilot's
            estimates through :meth:`PowerDesign.from_components`).
        threshold: Practical threshold of "improved" (default 0.05; 0 plans for the interval
            alone, as Miller's formula does).

    Returns:
        :class:`PowerResult` with ``n_cases`` rounded up (at least 2) and the power of the
        verdict achieved at that number (None and a ``note`` when unreachable).

    Raises:
        InputError: Arguments out of range.

    Examples:
        >>> plan = required_cases(0.10, n_trials=3)
        >>> plan.n_cases, round(plan.power, 3)
        (146, 0.8)
    """
    size = _effect(effect)
    trials = check_positive_int(n_trials, "n_trials")
    design = design or PowerDesign()
    omega = math.sqrt(design.omega2(trials))
    limit = check_threshold(threshold) if float(effect) > 0 else 0.0
    if size <= limit + 1e-12:
        return design.result(
            n_cases=None,
            n_trials=trials,
            effect=float(effect),
            power=0.5 if size == limit else 0.0,
            se=float("nan"),
            threshold=limit,
            note=(
                f"no number of cases will show 'improved' for an effect of {percent(size):.1f} pp: "
                f"the verdict needs the estimate to reach the practical threshold of "
                f"{limit * 100:g} pp, and an estimate centred at or below it reaches it at most "
                "half the time; plan for a larger effect or lower the threshold"
            ),
        )
    if omega <= 0.0:
        return design.result(
            n_cases=None,
            n_trials=trials,
            effect=float(effect),
            power=float("nan"),
            se=0.0,
            threshold=limit,
            note=(
                "the variance components are zero (no outcome varied between or within "
                "cases), so no number of cases can be planned from them; estimate them from "
                "a run with more cases or trials, or give var_between / var_within"
            ),
        )
    cases = design.verdict_cases(size, omega, limit)
    return design.result(
        n_cases=cases,
        n_trials=trials,
        effect=float(effect),
        power=design.verdict_power(size, omega, cases, limit),
        se=omega / math.sqrt(cases),
        threshold=limit,
    )


def _effect(effect: Any) -> float:
    """Validate a non-zero effect in [-1, 1] and return its size (absolute value)."""
    size = abs(_number(effect, "effect", -1.0, 1.0))
    if size == 0.0:
        raise InputError("The value for `effect` must be non-zero (e.g. 0.05 for 5 pp).")
    return size
