"""``evalkit power --case-effect E``: trials per case at which the case screen names a case.

The planning question of "which cases moved": a case whose pass rate moves by ``E`` from the
baseline rate, among ``m`` case rows the screen corrects across (Benjamini-Hochberg by
default). The plan is made at the per-row level at which the correction names a row whatever
the other rows show (:func:`evalkit.analysis._step_cases.naming_level`: ``alpha / m`` for BH
and Holm), with the exact power of the case's Fisher test, the practical threshold binding
the observed change in both directions, as the screen's verdicts do.
"""

from __future__ import annotations

from evalkit._percent import percent
from evalkit._settings import CASE_CORRECTION
from evalkit.analysis._step_cases import NAMING_MAX_TRIALS, naming_level
from evalkit.errors import InputError
from evalkit.stats import PowerResult, VarianceComponents, trials_to_confirm

#: The corrections of the case rows, by name.
_WORDS = {
    "fdr_bh": "Benjamini-Hochberg",
    "fdr_by": "Benjamini-Yekutieli",
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "none": "No correction",
}


def case_naming_plan(
    case_effect: float,
    *,
    cases: int | None,
    baseline_rate: float | None,
    components: VarianceComponents | None,
    alpha: float,
    target_power: float,
    threshold: float,
    case_correction: str,
) -> PowerResult:
    """Trials per case and side at which the screen names a case that moves ``case_effect``.

    Args:
        case_effect: The case's change of pass rate to name (e.g. -0.4).
        cases: Case rows the screen corrects across (None: the pilot's cases).
        baseline_rate: The case's baseline pass rate (None: the pilot's, else 0.5).
        components: A pilot's variance components (its baseline rate and cases).
        alpha: The screen's level.
        target_power: Power to name the case.
        threshold: Practical threshold the observed change must reach.
        case_correction: A correction of :data:`evalkit._settings.CASE_CORRECTION`
            (``"fdr_bh"``, ``"fdr_by"``, ``"holm"``, ...; ``"bh"`` and ``"by"`` too).

    Returns:
        The plan: ``n_trials`` (None when no number up to 200 does it), ``n_cases`` the rows
        corrected across, ``power`` the exact power at ``n_trials``, ``note`` the rule.

    Raises:
        InputError: No number of case rows, an unknown correction, or a change the baseline
            rate leaves no room for.
    """
    correction = CASE_CORRECTION.check(case_correction)
    rows = cases if cases is not None else (components.n_cases if components else None)
    if rows is None or rows < 1:
        raise InputError("--case-effect needs the number of case rows the screen corrects "
                         "across: give --cases M or --from-run RUN")
    rate = baseline_rate if baseline_rate is not None else (
        components.baseline_rate if components is not None else 0.5)
    after = rate + float(case_effect)
    if case_effect == 0 or not 0.0 <= after <= 1.0:
        raise InputError(f"--case-effect {case_effect:g}: from a baseline rate of {rate:.3g} "
                         "the case's rate must stay within 0..1 and change; give a change "
                         f"between {-rate:.3g} and {1 - rate:.3g} (not 0)")
    level = naming_level(alpha, rows, correction)
    plan = trials_to_confirm(rate, after, alpha=level, power=target_power,
                             max_trials=NAMING_MAX_TRIALS, threshold=threshold)
    how = (f"{_WORDS[correction]} across {rows} case rows names a row whatever the others "
           f"show at p {level:.3g}; the case's exact Fisher test at that level, "
           f"{rate:.0%} -> {after:.0%}, its observed change at least {threshold * 100:g} pp")
    note = (how if not plan.capped else
            f"no number of trials up to {NAMING_MAX_TRIALS} per case names a change of "
            f"{percent(case_effect):+.1f} pp with power {target_power:.0%}: {how}")
    return PowerResult(
        n_cases=int(rows), n_trials=None if plan.capped else plan.trials,
        effect=float(case_effect), power=plan.power, alpha=alpha, baseline_rate=rate,
        var_between=float("nan") if components is None else components.var_between,
        var_within=float("nan") if components is None else components.var_within,
        correlation=float("nan") if components is None else components.correlation,
        se=float("nan"), method="fisher", threshold=threshold, note=note,
    )
