"""No practical difference: when the whole interval lies within the practical threshold.

``compare``'s verdict is three-way (improved, regressed, inconclusive). An inconclusive verdict
can mean two things a researcher must tell apart: *we cannot tell yet* (the interval is wide)
and *it does not matter* (the interval is narrow and sits inside +-threshold). The second is
an equivalence claim: the change is smaller than anything that matters in practice, with the
same confidence as the verdict. evalkit makes it on the interval the verdict prints, so
nothing new has to be read: "no practical difference" holds when ``-threshold < ci_low`` and
``ci_high < threshold``. With a 95 % interval this is two one-sided tests (TOST) at 2.5 % each,
so an effect exactly at the threshold is called equivalent at most 2.5 % of the time.

Planning an equivalence claim (:func:`equivalence_cases`): with the paired difference's
standard error ``se = omega / sqrt(n)`` and the interval's half-width ``h = t(1 - alpha/2, n-1)
se``, the estimate must land in ``(-threshold + h, threshold - h)``; with the estimate normal
around the true effect ``delta`` the chance of that is
``Phi((threshold - h - delta) / se) - Phi((-threshold + h - delta) / se)``, and the plan is
the smallest ``n`` that reaches the target power.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from scipy import stats

from evalkit._percent import percent
from evalkit._settings import ALPHA, POWER
from evalkit.stats._interval import Interval
from evalkit.stats._power import PowerDesign, PowerResult
from evalkit.stats._variance import VarianceComponents

#: Most cases an equivalence plan searches (beyond it the plan says "not reachable").
_MAX_CASES = 10_000_000


class Compared(Protocol):
    """What :func:`equivalence` reads of a :class:`~evalkit.stats.PairedComparison`."""

    @property
    def delta(self) -> Interval:
        """The overall interval."""

    @property
    def threshold(self) -> float:
        """The practical threshold."""


def equivalence(comparison: Compared) -> dict[str, Any]:
    """Whether a comparison shows no practical difference, and the sentence that says so.

    Args:
        comparison: A comparison (its ``delta`` interval and ``threshold``).

    Returns:
        ``{"equivalent": bool, "margin": threshold, "note": str}``; the note says either
        "no practical difference (within +-5 pp): ..." or why not ("" when undefined).

    Examples:
        >>> from evalkit.stats._interval import Interval
        >>> class C:
        ...     delta = Interval(0.01, -0.02, 0.03, 0.95, "bootstrap")
        ...     threshold = 0.05
        >>> equivalence(C())["equivalent"]
        True
    """
    margin = float(comparison.threshold)
    d = comparison.delta
    low, high = float(d.ci_low), float(d.ci_high)
    if not (math.isfinite(low) and math.isfinite(high)) or margin <= 0:
        return {"equivalent": False, "margin": margin, "note": ""}
    level = round(float(d.confidence) * 100)
    span = f"[{percent(low):+.1f}, {percent(high):+.1f}] pp"
    if -margin < low and high < margin:
        unsettled = _cases_moved(comparison, margin)
        if unsettled:
            return {
                "equivalent": False,
                "margin": margin,
                "note": (
                    f"no practical difference cannot be claimed: the average's {level} % "
                    f"interval {span} lies inside ±{margin * 100:g} pp, but {unsettled}"
                ),
            }
        return {
            "equivalent": True,
            "margin": margin,
            "note": (
                f"no practical difference (within ±{margin * 100:g} pp): the whole {level} % "
                f"interval {span} lies inside the practical threshold"
                + _average_only(comparison, margin)
            ),
        }
    return {
        "equivalent": False,
        "margin": margin,
        "note": (
            f"not shown to be within ±{margin * 100:g} pp: the {level} % interval {span} "
            "reaches past the practical threshold"
        ),
    }


def _cases_moved(comparison: Compared, margin: float) -> str:
    """Why the cases forbid an equivalence claim ("" when they do not).

    A named case (its estimate beyond the threshold, its adjusted p below alpha), a provider
    or condition row with a direction (:mod:`evalkit.stats._row_family`) or a change that
    differs between cases (the case x condition interaction rejects) means the average is not
    the whole story, whatever its interval: no comparison prints a direction beside "no
    practical difference".
    """
    rows = getattr(comparison, "case_rows", None)
    interaction = getattr(comparison, "case_interaction", None)
    said = []
    if rows is not None and not rows.empty and "verdict" in rows:
        named = rows[rows["verdict"].isin(["regressed", "improved"])]
        if len(named):
            ids = ", ".join(dict.fromkeys(str(c) for c in named["case_id"]))
            said.append(
                f"{named['case_id'].nunique()} case(s) moved beyond ±{margin * 100:g} pp "
                f"({ids})"
            )
    for family in ("provider", "condition"):
        parts = getattr(comparison, f"by_{family}", ()) or ()
        moved = [f"{name} {part.verdict}" for name, part in parts
                 if len(parts) > 1 and part.verdict in ("improved", "regressed")]
        if moved:
            said.append(f"{len(moved)} {family}(s) moved beyond ±{margin * 100:g} pp "
                        f"({', '.join(moved)})")
    if interaction is not None and interaction.differs:
        said.append(f"the change differs between cases (interaction {interaction.text()})")
    return " and ".join(said)


def _average_only(comparison: Compared, margin: float) -> str:
    """The claim's scope when single cases are not settled ("" when every case is).

    The claim is about the average: no case was named and the change does not differ between
    cases, but a case whose own interval reaches past the threshold may still have moved by
    more than it (two cases of forty can drop 40 pp and stay unnamed at 10 trials). The note
    says so rather than let the claim read as one about every case.
    """
    rows = getattr(comparison, "case_rows", None)
    if rows is None or rows.empty or "ci_low" not in rows or "ci_high" not in rows:
        return ""
    low, high = rows["ci_low"].astype(float), rows["ci_high"].astype(float)
    reaching = rows.loc[(low <= -margin) | (high >= margin), "case_id"].nunique()
    if not reaching:
        return ""
    return (
        f"; this speaks for the average only: the own intervals of {reaching} of "
        f"{rows['case_id'].nunique()} cases reach past ±{margin * 100:g} pp, so a single case "
        "may still have moved that far (evalkit confirm settles single cases)"
    )


def equivalence_power(
    true_effect: float, margin: float, omega: float, n_cases: float, alpha: float
) -> float:
    """Chance that the ``1 - alpha`` interval lies within ``+-margin`` (see the module doc).

    Examples:
        >>> round(equivalence_power(0.0, 0.05, 0.3, 400, 0.05), 3)
        0.829
    """
    se = omega / math.sqrt(n_cases)
    if se <= 0:
        return 1.0 if abs(true_effect) < margin else 0.0
    half = float(stats.t.isf(alpha / 2, max(n_cases - 1.0, 1.0))) * se
    if half >= margin:
        return 0.0
    upper = stats.norm.cdf((margin - half - true_effect) / se)
    lower = stats.norm.cdf((-margin + half - true_effect) / se)
    return float(max(0.0, upper - lower))


def equivalence_cases(
    margin: float,
    n_trials: int = 1,
    *,
    true_effect: float = 0.0,
    alpha: float = ALPHA.default,
    power: float = POWER.default,
    components: VarianceComponents | None = None,
    design: PowerDesign | None = None,
) -> PowerResult:
    """Cases needed to show "no practical difference (within +-margin)" with ``power``.

    The claim needs the whole interval within the margin *and* the case x condition
    interaction test not to reject, which a uniform change passes with chance ``1 - alpha``:
    the power planned for is the product.

    Args:
        margin: The practical threshold (e.g. 0.05 for 5 pp).
        n_trials: Trials per case and arm.
        true_effect: The effect assumed true (0: the edit changes nothing).
        alpha: 1 - the interval's confidence.
        power: Target chance of the claim.
        components: Variance components from a pilot (:func:`estimate_variance_components`).
        design: A :class:`PowerDesign` instead of ``components`` and ``alpha``/``power``.

    Returns:
        :class:`PowerResult` (``effect`` is ``true_effect``, ``threshold`` the margin); its
        ``n_cases`` is None with a note when ``|true_effect| >= margin``.

    Examples:
        >>> equivalence_cases(0.05, 3).n_cases > equivalence_cases(0.10, 3).n_cases
        True
    """
    if not margin > 0:
        raise ValueError(f"the equivalence margin must be > 0, not {margin!r}")
    if design is None:
        design = PowerDesign.from_components(components, alpha=alpha, power=power)
    omega = math.sqrt(design.omega2(n_trials))
    common = {"n_trials": n_trials, "effect": float(true_effect), "threshold": float(margin)}
    if abs(true_effect) >= margin:
        return design.result(
            n_cases=None, power=0.0, se=float("nan"), **common,
            note=(f"no number of cases shows the change within ±{margin * 100:g} pp when it "
                  f"is {true_effect * 100:+g} pp"),
        )

    # The claim also needs the case x condition interaction test not to reject (a change that
    # differs between cases is no "no practical difference"): a uniform change passes it with
    # chance 1 - alpha, so that is the most any number of cases reaches.
    guard = 1.0 - design.alpha
    if design.power >= guard:
        return design.result(
            n_cases=None, power=0.0, se=float("nan"), **common,
            note=(f"the claim also needs the test of whether the change differs between cases "
                  f"not to reject, which a uniform change passes {guard:.0%} of the time: a "
                  f"power of {design.power:.0%} is out of reach"),
        )

    def reach(n: int) -> float:
        return guard * equivalence_power(true_effect, margin, omega, n, design.alpha)

    low, high = 2, 2
    while reach(high) < design.power:
        low, high = high, high * 2
        if high > _MAX_CASES:
            return design.result(n_cases=None, power=0.0, se=float("nan"), **common,
                                 note="not reachable within 10 million cases")
    while high - low > 1:
        middle = (low + high) // 2
        if reach(middle) >= design.power:
            high = middle
        else:
            low = middle
    cases = high if reach(low) < design.power else low
    return design.result(
        n_cases=cases, power=reach(cases), se=omega / math.sqrt(cases), **common,
        note=(f"cases for the whole {round((1 - design.alpha) * 100)} % interval to lie "
              f"within ±{margin * 100:g} pp when the true change is "
              f"{true_effect * 100:+g} pp (no practical difference)"),
    )
