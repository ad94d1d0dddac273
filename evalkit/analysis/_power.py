"""Planning a comparison: cases, trials and minimum detectable effect (``evalkit power``)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from evalkit._settings import ALPHA, CASE_CORRECTION, POWER, ROUND_CASES, RUNS_DIR, SEED
from evalkit.analysis._power_cases import case_naming_plan
from evalkit.analysis._power_ties import pilot_tied_pairs, tied_equivalence_plan
from evalkit.errors import InputError
from evalkit.results import load_results
from evalkit.stats import (
    DEFAULT_CONCENTRATION,
    DEFAULT_THRESHOLD,
    FUTILITY_BETA,
    AdaptivePlan,
    AdaptiveTrials,
    PlanModel,
    PowerDesign,
    PowerResult,
    VarianceComponents,
    check_threshold,
    equivalence_cases,
    estimate_variance_components,
    headroom_model,
    minimum_detectable_effect,
    proportion_ci,
    required_cases,
    required_trials,
    simulate_power,
    simulate_sequential,
)


def power(
    *,
    cases: int | None = None,
    trials: int | None = None,
    effect: float | None = None,
    baseline_rate: float | None = None,
    alpha: float = ALPHA.default,
    power: float = POWER.default,
    threshold: float | None = None,
    from_run: pd.DataFrame | str | os.PathLike[str] | None = None,
    conditions: Sequence[str] | None = None,
    n_sims: int = 500,
    seed: int | None = SEED.default,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    sequential: bool = False,
    max_cases: int | None = None,
    round_cases: int = ROUND_CASES.default,
    adaptive_trials: bool = False,
    plan_effect: float | None = None,
    futility_beta: float | None = None,
    providers: int = 1,
    provider_correlation: float = 1.0,
    equivalence: bool = False,
    case_effect: float | None = None,
    case_correction: str = CASE_CORRECTION.default,
) -> PowerResult:
    """Answer the planning question the given numbers leave open (Miller 2024, eq. 9-10).

    With ``equivalence=True`` the question is instead how many cases show "no practical
    difference": the whole interval within +-``threshold`` (default 5 pp) when the true
    change is ``effect`` (default 0), at ``trials`` trials (:func:`~evalkit.stats.
    equivalence_cases`).

    - ``effect`` (and ``trials``), no ``cases``: how many cases are needed;
    - ``cases`` (and ``trials``), no ``effect``: the minimum detectable effect;
    - ``effect`` and ``cases``, no ``trials``: how many trials per case are needed;
    - all three: the power of evalkit's exact verdict procedure, by simulation.

    Variance components default to Miller's model around ``baseline_rate`` (0.5); with
    ``from_run`` they are estimated from an existing run (two of its ``conditions`` as the
    arms, or its only condition), for the simulation too (its baseline rate and case
    spread). Numbers of cases are planned for evalkit's verdict "improved", practical
    threshold included; ``note`` explains a plan that cannot succeed.

    Args:
        cases: Number of cases.
        trials: Trials per case and arm (default: with ``from_run`` the pilot's median
            trials per case, said in ``note``; else 1, or 3 for the simulation).
        effect: Difference of pass rates to detect (e.g. 0.1 for 10 pp).
        baseline_rate: Baseline pass rate.
        alpha: Two-sided significance level.
        power: Desired power (``evalkit power --power``).
        threshold: Practical threshold of the verdict "improved" (default 0.05).
        from_run: A run (or tidy frame) to read variance estimates from.
        conditions: Conditions of ``from_run`` used as the two arms.
        n_sims: Simulations when all three numbers are given.
        seed: Simulation seed.
        runs_dir: Where run ids are looked up.
        sequential: With ``effect`` and no ``cases``: plan the fixed design and the
            sequential design (``evalkit run --until-verdict`` with its bets tuned for the
            fixed design's number of cases) under ONE simulation model, the headroom model
            (:func:`~evalkit.stats.headroom_model`) with the baseline's spread and the arms'
            correlation as stated (defaults, or ``from_run``'s estimates), and report the
            sequential design's expected number of cases to a verdict beside the fixed
            design's (``sequential`` of the result; ``n_sims`` simulations, at most 200,
            seeded by ``seed``). The fixed ``n_cases`` is then planned from the model's exact
            variance components (``model`` and ``components`` of the result), which can
            differ a little from the plan without ``sequential``; ``note`` gives both.
        max_cases: Budget of cases of the simulated sequential design (default: four times
            the fixed design's number, or 1,000 when it has none).
        round_cases: Cases per round of the simulated sequential design (one look each).
        adaptive_trials: With ``sequential``: simulate it with adaptive trials
            (``run --until-verdict --adaptive-trials``: 1 trial per condition first, the
            other ``trials - 1`` for cases whose outcomes differ or whose draw says so);
            ``sequential`` then also holds ``expected_items`` and ``items_ratio_to_fixed``.
        plan_effect: With ``sequential``: simulate it with the planned-effect futility
            boundary for this effect (``run --until-verdict --plan-effect``); ``sequential``
            then also holds ``plan_effect``, ``futility_beta`` and ``futile_planned``.
        futility_beta: Its ``beta`` (default 0.2).
        providers: Providers (models, harnesses) that answer the same cases; the verdict is
            then the pooled one, each case counting once (its per-provider differences
            averaged). Plans the number of cases or the minimum detectable effect.
        provider_correlation: Share ``rho`` of the between-case variance of the paired
            difference that every provider shares (a case the skill helps helps them all).
            The pooled difference of a case has variance ``B (rho + (1 - rho) / k) + 2 s2 /
            (K k)`` for ``k`` providers with ``K`` trials each (``B`` between-case variance
            of the difference, ``s2`` within-case variance): more providers average the
            trial noise and the provider-specific part away, never the shared part. Default
            1.0, the cautious assumption (providers add only trials).
        equivalence: Plan the cases for "no practical difference" instead (see above).
        case_effect: Plan instead the trials per case at which the case screen names a case
            whose pass rate moves by this much (``cases``: the case rows it corrects across,
            default the pilot's cases; ``baseline_rate``: the case's, default the pilot's):
            the exact Fisher power at the level the correction names a row whatever the
            other rows show (:mod:`._power_cases`).
        case_correction: The screen's correction of ``case_effect``: ``"fdr_bh"``
            (default), ``"fdr_by"``, ``"holm"``, ``"bonferroni"`` or ``"none"`` (``"bh"`` and
            ``"by"`` are read as ``"fdr_bh"`` and ``"fdr_by"``).

    Returns:
        A :class:`~evalkit.stats.PowerResult`.

    Raises:
        InputError: Too few numbers to answer anything.

    Examples:
        >>> result = power(effect=0.15, trials=3)
        >>> result.n_cases is not None and result.n_cases > 10
        True
    """
    pilot = load_results(from_run, runs_dir, what="from_run") if from_run is not None else None
    components = (
        estimate_variance_components(pilot, conditions=conditions) if pilot is not None else None
    )
    if case_effect is not None:
        if equivalence or sequential or effect is not None:
            raise InputError("--case-effect plans the trials that name one case: leave out "
                             "--effect, --equivalence and --sequential")
        return case_naming_plan(
            case_effect, cases=cases, baseline_rate=baseline_rate, components=components,
            alpha=alpha, target_power=power, case_correction=case_correction,
            threshold=check_threshold(threshold) if threshold is not None else DEFAULT_THRESHOLD,
        )
    if equivalence:
        tied = None if pilot is None else pilot_tied_pairs(pilot, conditions, alpha)
        return _equivalence_plan(components, cases=cases, trials=trials, effect=effect,
                                 alpha=alpha, target_power=power, threshold=threshold,
                                 sequential=sequential, tied=tied)
    pilot_note = ""
    if components is not None and trials is None and (cases is None or effect is None):
        # plan at the pilot's design: its variance components were measured at its trials
        trials = max(1, components.n_trials)
        pilot_note = (
            f"planned at the pilot's {trials} trial{'s' if trials != 1 else ''} per case (its "
            "median); --trials plans another number"
        )
    result = _plan(
        components, cases=cases, trials=trials, effect=effect, baseline_rate=baseline_rate,
        alpha=alpha, target_power=power, threshold=threshold, n_sims=n_sims, seed=seed,
        sequential=sequential, max_cases=max_cases, round_cases=round_cases,
        adaptive_trials=adaptive_trials, plan_effect=plan_effect, futility_beta=futility_beta,
        providers=providers, provider_correlation=provider_correlation,
    )
    scope = _pilot_scope(pilot, conditions) if pilot is not None else ""
    pilot_note = "; ".join(part for part in (pilot_note, scope) if part)
    if not pilot_note:
        return result
    return replace(result, note=f"{result.note}; {pilot_note}" if result.note else pilot_note)


def _equivalence_plan(
    components: VarianceComponents | None,
    *,
    cases: int | None,
    trials: int | None,
    effect: float | None,
    alpha: float,
    target_power: float,
    threshold: float | None,
    sequential: bool,
    tied: tuple[float, int, int] | None = None,
) -> PowerResult:
    """``power(equivalence=True)``: the cases an equivalence claim needs.

    A pilot whose every pair tied (``tied``: its pairs, cases and trials) is planned with
    compare's tied-pairs rule (:mod:`._power_ties`), not with the variances it did not
    measure.
    """
    if cases is not None or sequential:
        raise InputError("--equivalence plans the number of cases: leave out --cases and "
                         "--sequential (give --effect for a true change other than 0)")
    if trials is None:
        trials = max(1, components.n_trials) if components is not None else 1
    margin = check_threshold(threshold) if threshold is not None else DEFAULT_THRESHOLD
    if margin <= 0:
        raise InputError("--equivalence needs a practical threshold above 0 (--threshold)")
    if tied is not None and components is not None:
        return tied_equivalence_plan(tied, margin=margin, trials=trials, effect=effect,
                                     alpha=alpha, components=components)
    return equivalence_cases(margin, trials, true_effect=effect or 0.0, alpha=alpha,
                             power=target_power, components=components)


def _pilot_scope(rows: pd.DataFrame, conditions: Sequence[str] | None) -> str:
    """Which providers of a pilot the variance components come from ("" when all of them).

    The components pair the two conditions per (case, provider), so a provider that ran only
    one of them adds nothing: say so rather than let the plan read as the whole run's.
    """
    if conditions is None or len(conditions) != 2 or "provider" not in rows:
        return ""
    kept = rows.loc[rows["condition"].isin(list(conditions)), ["provider", "condition"]]
    kept = kept.drop_duplicates()
    sets: dict[str, set[str]] = {}
    for provider, condition in zip(kept["provider"].astype(str), kept["condition"].astype(str),
                                   strict=True):
        sets.setdefault(provider, set()).add(condition)
    both = sorted(p for p, c in sets.items() if len(c) == 2)
    only = {p: next(iter(c)) for p, c in sets.items() if len(c) == 1}
    if not only:
        return ""
    groups: dict[str, list[str]] = {}
    for name, condition in sorted(only.items()):
        groups.setdefault(condition, []).append(name)
    left = "; ".join(f"{', '.join(n)} ran only {c}" for c, n in groups.items())
    return (
        f"variances from the {len(both)} provider(s) that ran both conditions "
        f"({', '.join(both) or 'none'}); {left}, so they are not in the plan"
    )


def _plan(
    components: VarianceComponents | None,
    *,
    cases: int | None,
    trials: int | None,
    effect: float | None,
    baseline_rate: float | None,
    alpha: float,
    target_power: float,
    threshold: float | None,
    n_sims: int,
    seed: int | None,
    sequential: bool,
    max_cases: int | None,
    round_cases: int,
    adaptive_trials: bool,
    plan_effect: float | None,
    futility_beta: float | None,
    providers: int,
    provider_correlation: float,
) -> PowerResult:
    """The planning answer of :func:`power` once the variance components are known."""
    design = PowerDesign.from_components(
        components, baseline_rate=baseline_rate, alpha=alpha, power=target_power
    )
    if providers != 1 or provider_correlation != 1.0:
        return _shared_cases(
            providers, provider_correlation, design, cases=cases, trials=trials,
            effect=effect, threshold=threshold, sequential=sequential,
        )
    if effect is not None and cases is None:
        fixed = required_cases(effect, trials or 1, threshold=threshold, design=design)
        if not sequential:
            if adaptive_trials:
                raise InputError("--adaptive-trials: only with --sequential")
            if plan_effect is not None or futility_beta is not None:
                raise InputError("--plan-effect and --futility-beta: only with --sequential")
            return fixed
        model = headroom_model(
            float(effect),
            trials or 1,
            baseline_rate=fixed.baseline_rate,
            var_between=None if components is None else components.var_between,
            correlation=None if components is None else components.correlation,
        )
        return _with_sequential(
            _under_model(fixed, model, target_power), model, seed, min(n_sims, 200), max_cases,
            round_cases, adaptive_trials, plan_effect,
            FUTILITY_BETA if futility_beta is None else futility_beta,
        )
    if sequential or adaptive_trials or plan_effect is not None:
        raise InputError("--sequential plans with --effect alone (not with --cases)")
    if cases is not None and effect is None:
        return minimum_detectable_effect(cases, trials or 1, threshold=threshold, design=design)
    if cases is not None and effect is not None and trials is None:
        return required_trials(effect, cases, threshold=threshold, design=design)
    if cases is not None and effect is not None and trials is not None:
        rate = baseline_rate if baseline_rate is not None else 0.5
        concentration = DEFAULT_CONCENTRATION
        if components is not None:
            rate = components.baseline_rate if baseline_rate is None else rate
            spread = rate * (1.0 - rate)
            if math.isfinite(components.var_between) and 0 < components.var_between < spread:
                concentration = spread / components.var_between - 1.0
        result = simulate_power(
            cases,
            trials,
            effect,
            rate,
            n_sims=n_sims,
            seed=seed,
            alpha=alpha,
            concentration=concentration,
            threshold=threshold,
        )
        verdict_word = "reaches" if result.power >= target_power else "falls short of"
        return replace(
            result,
            note=f"simulated power {result.power:.2f} {verdict_word} the target {target_power:g}",
        )
    raise InputError(
        "evalkit power needs --effect (to get the cases needed) or --cases (to get the "
        "minimum detectable effect), optionally with --trials"
    )


def _shared_cases(
    providers: int,
    rho: float,
    plain: PowerDesign,
    *,
    cases: int | None,
    trials: int | None,
    effect: float | None,
    threshold: float | None,
    sequential: bool,
) -> PowerResult:
    """Plan the pooled verdict of ``providers`` providers that share every case.

    The pooled per-case difference is the one-provider difference with ``K k`` trials and
    a between-case variance of the difference scaled by ``rho + (1 - rho) / k``; the
    one-provider planner then answers with the equivalent variance components (of
    ``plain``, the one-provider design, at its level and power).
    """
    if isinstance(providers, bool) or not isinstance(providers, int) or providers < 1:
        raise InputError(f"--providers must be an integer >= 1, got {providers!r}")
    if not 0.0 <= float(rho) <= 1.0:
        raise InputError(f"--provider-correlation must lie in [0, 1], got {rho!r}")
    if sequential or (cases is not None and effect is not None):
        raise InputError(
            "--providers plans the number of cases (with --effect) or the minimum detectable "
            "effect (with --cases), not the sequential design or the power of a fixed one"
        )
    one = (
        required_cases(effect, trials or 1, threshold=threshold, design=plain)
        if effect is not None
        else minimum_detectable_effect(cases or 2, trials or 1, threshold=threshold, design=plain)
    )
    rate = one.baseline_rate
    base = VarianceComponents(
        baseline_rate=one.baseline_rate,
        var_between=one.var_between,
        var_within=one.var_within,
        correlation=one.correlation,
        n_cases=0,
        n_trials=0,
    )
    scale = float(rho) + (1.0 - float(rho)) / providers
    shared = base._replace(correlation=1.0 - (1.0 - base.correlation) * scale)
    per_provider = trials or 1
    design = PowerDesign.from_components(
        shared, baseline_rate=rate, alpha=plain.alpha, power=plain.power
    )
    if effect is not None:
        result = required_cases(
            effect, per_provider * providers, threshold=threshold, design=design
        )
    elif cases is not None:
        result = minimum_detectable_effect(
            cases, per_provider * providers, threshold=threshold, design=design
        )
    else:
        raise InputError("evalkit power --providers needs --effect or --cases")
    note = (
        f"{providers} providers sharing each case, {per_provider} trial(s) each, provider "
        f"correlation {rho:g}: the pooled verdict (each case once)"
    )
    return replace(
        result,
        n_trials=per_provider,
        note=f"{note}; {result.note}" if result.note else note,
    )


def _replanned(plan: PowerResult, model: PlanModel, target_power: float) -> PowerResult:
    """``plan``'s effect, level, method and threshold, planned under ``model`` at a power."""
    return required_cases(
        plan.effect,
        model.n_trials,
        design=PowerDesign.from_components(
            model.components, baseline_rate=model.baseline_rate, alpha=plan.alpha,
            power=target_power, method=plan.method,
        ), threshold=plan.threshold,
    )


def _under_model(stated: PowerResult, model: PlanModel, target_power: float) -> PowerResult:
    """The fixed design planned from ``model``'s exact components, with what it used.

    Args:
        stated: The fixed design planned from the stated components (for the note).
        model: The model both designs are planned under.
        target_power: The target power.

    Returns:
        The fixed plan under the model, with ``model``, ``components`` and a ``note``
        naming the stated plan's number of cases.
    """
    fixed = _replanned(stated, model, target_power)
    parts = model.components
    said = (
        f"both designs planned under the headroom model (Beta concentration "
        f"{model.concentration:.3g}, baseline {model.baseline_rate:.3g}, arm correlation "
        f"{parts.correlation:.3g}; between-case variance {parts.var_between:.4g}, within-case "
        f"variance {parts.var_within:.4g}): fixed design {_cases(fixed.n_cases)}; the "
        f"stated components (between {stated.var_between:.4g}, within "
        f"{stated.var_within:.4g}, correlation {stated.correlation:.3g}; the plan without "
        f"--sequential) give {_cases(stated.n_cases)}"
    )
    order = (fixed.note, said, model.note) if fixed.n_cases is None else (said, model.note)
    return replace(
        fixed,
        note="; ".join(part for part in order if part),
        model=model.parameters(),
        components=model.components_dict(),
    )


def _cases(n_cases: int | None) -> str:
    """``"38 cases"``, or that no number of cases reaches the verdict."""
    return "no number of cases" if n_cases is None else f"{n_cases} cases"


def _with_sequential(
    fixed: PowerResult,
    model: PlanModel,
    seed: int | None,
    n_sims: int,
    max_cases: int | None,
    round_cases: int,
    adaptive_trials: bool = False,
    plan_effect: float | None = None,
    futility_beta: float = FUTILITY_BETA,
) -> PowerResult:
    """``fixed`` with the sequential design simulated under the same ``model`` beside it."""
    trials = model.n_trials
    budget = max_cases or (4 * fixed.n_cases if fixed.n_cases is not None else 1000)
    settings: dict[str, Any] = {
        "baseline_rate": model.baseline_rate,
        "concentration": model.concentration,
        "coupling": model.coupling,
        "alpha": fixed.alpha,
        "threshold": fixed.threshold,
        "max_cases": budget,
        "round_cases": round_cases,
        "plan_cases": fixed.n_cases,
        "n_sims": n_sims,
        "seed": seed,
        "plan_effect": plan_effect,
        "futility_beta": futility_beta,
    }
    design = None
    if adaptive_trials:
        if trials < 2:
            raise InputError(
                f"--adaptive-trials needs at least 2 trials per case (stage 1 runs 1), got "
                f"{trials}; pass --trials 3 (or more)"
            )
        design = AdaptiveTrials(total_trials=trials)
    plan = simulate_sequential(fixed.effect, trials, adaptive=design, **settings)
    summary = plan.to_dict()
    summary["ratio_to_fixed"] = (
        plan.expected_cases / fixed.n_cases if fixed.n_cases is not None else None
    )
    if isinstance(plan, AdaptivePlan):
        summary["items_ratio_to_fixed"] = (
            plan.expected_items / (fixed.n_cases * 2 * trials)
            if fixed.n_cases is not None
            else None
        )
    detected = plan.regressed if fixed.effect < 0 else plan.improved  # the planned verdict
    power, cases = _equal_power(fixed, model, detected, plan.n_sims)
    summary["equal_power"] = power
    summary["equal_power_cases"] = cases
    summary["ratio_to_equal_power"] = None if cases is None else plan.expected_cases / cases
    if isinstance(plan, AdaptivePlan):
        summary["items_ratio_to_equal_power"] = (
            None if cases is None else plan.expected_items / (cases * 2 * trials)
        )
    return replace(fixed, sequential=summary)


def _equal_power(
    fixed: PowerResult,
    model: PlanModel,
    detected: float,
    n_sims: int,
) -> tuple[float | None, int | None]:
    """The fixed design at the power the sequential design showed: equal error rates.

    The sequential design is credited with the lower 95 % Wilson bound of its simulated power
    (``detected``: its share of the planned verdict, "improved", or "regressed" for a negative
    effect; never more than the simulations show). When that bound is not above the fixed design's
    own power, the fixed design as planned is the comparison already: ``(None, None)``. The
    fixed design is planned under the same ``model`` as the sequential one.

    Returns:
        ``(power, cases)``: the credited power and the fixed design's cases at it.
    """
    power = proportion_ci(round(detected * n_sims), n_sims).ci_low
    if fixed.n_cases is None or not power > fixed.power:
        return None, None
    same = _replanned(fixed, model, power)
    return power, same.n_cases
