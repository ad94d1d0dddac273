"""Trials per case a paired comparison needs at a given number of cases (Miller eq. 9 for K).

The model and the verdict rule are those of :mod:`evalkit.stats._power`: the trials are the
fewest that reach evalkit's verdict with the target power, practical threshold included, and
none are planned where the spread between cases alone keeps the interval too wide.
"""

from __future__ import annotations

import math

from evalkit._percent import percent
from evalkit.stats._frame import check_positive_int
from evalkit.stats._power import PowerDesign, PowerResult, _effect
from evalkit.stats._settings import check_threshold


def required_trials(
    effect: float,
    n_cases: int,
    *,
    design: PowerDesign | None = None,
    threshold: float | None = None,
) -> PowerResult:
    """Trials per case and arm needed to detect ``effect`` with ``n_cases`` cases.

    Solves Miller's eq. 9 for ``K``: ``K = 2 var_within / ((delta / d_n)^2 - between)``, with
    ``d_n`` the standardized effect detectable with ``n_cases`` cases, then, as
    :func:`required_cases` does, raises ``K`` until evalkit's verdict "improved" is reached
    with the target power: the interval above 0 *and* the estimate at or above the practical
    ``threshold`` (:meth:`PowerDesign.verdict_power`); a negative effect is planned as a
    regression, which needs no threshold. When the between-case variance alone already
    exceeds the budget (more trials cannot narrow the interval enough), no number of trials
    suffices: ``n_trials`` is None, ``power`` is the limit as trials grow without bound and
    ``note`` says so.

    Args:
        effect: Difference of pass rates to detect (non-zero).
        n_cases: Cases in the comparison (>= 2).
        design: The model's inputs, alpha, power and method (None: the defaults; a pilot's
            estimates through :meth:`PowerDesign.from_components`).
        threshold: Practical threshold of "improved" (default 0.05; 0 plans for the interval
            alone, as Miller's formula does).

    Returns:
        :class:`PowerResult` with ``n_trials`` rounded up (or None when unreachable).

    Raises:
        InputError: Arguments out of range.

    Examples:
        >>> required_trials(0.10, n_cases=200).n_trials
        2
        >>> required_trials(0.05, n_cases=50).n_trials is None
        True
    """
    size = _effect(effect)
    cases = check_positive_int(n_cases, "n_cases", 2)
    design = design or PowerDesign()
    limit = check_threshold(threshold) if float(effect) > 0 else 0.0
    floor = math.sqrt(design.between_diff)  # omega with unboundedly many trials
    best = design.verdict_power(size, floor, cases, limit) if floor > 0 else (
        1.0 if size > limit else 0.5 if size == limit else 0.0
    )
    needed = design.detectable(cases)  # standardized effect needed: omega <= size / needed
    budget = (size / needed) ** 2 - design.between_diff
    if budget <= 0 or best < design.power:
        return design.result(
            n_cases=cases,
            n_trials=None,
            effect=float(effect),
            power=best,
            se=float("nan"),
            threshold=limit,
            note=_trials_cannot(size, limit, floor, cases),
        )
    trials = max(1, math.ceil(2.0 * design.within / budget - 1e-9))

    def reach(k: int) -> float:
        return design.verdict_power(size, math.sqrt(design.omega2(k)), cases, limit)

    if reach(trials) < design.power:  # the threshold binds: search upwards
        low, high = trials, trials * 2
        while reach(high) < design.power:
            low, high = high, high * 2
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if reach(middle) >= design.power else (middle, high)
        trials = high
    omega = math.sqrt(design.omega2(trials))
    return design.result(
        n_cases=cases,
        n_trials=trials,
        effect=float(effect),
        power=reach(trials),
        se=omega / math.sqrt(cases),
        threshold=limit,
    )


def _trials_cannot(size: float, limit: float, floor: float, cases: int) -> str:
    """Why no number of trials at ``cases`` cases reaches the target power."""
    if size <= limit + 1e-12:
        return (f"no number of trials will show 'improved' for an effect of "
                f"{percent(size):.1f} pp: the estimate must reach the practical threshold of "
                f"{limit * 100:g} pp, which an estimate centred at or below it does at most "
                "half the time")
    return (f"more trials cannot narrow the interval enough at {cases} cases: the spread "
            f"between cases (standard deviation {percent(floor):.1f} pp of a case's true "
            "change) stays however many trials run; add cases instead")
