"""``evalkit run --plan``: what a run would cost and whether it can reach a verdict at all.

Nothing is run. From the suite, the filters, the conditions and the trials of a
:class:`~evalkit.runner.RunConfig`, the plan counts the work items and the cases a comparison
of two conditions would pair (with ``--until-verdict``, at most what ``--max-items`` pays
for), and asks the power functions of :mod:`evalkit.stats` what that design can show: its
minimum detectable effect (80 % power, the verdict's practical threshold included) and the
cases needed to tell an effect of the threshold's size from zero. The variance components are
Miller's default model around a 50 % baseline, or those of a pilot run (``from_run``).

It warns when no verdict is reachable at all, and says what would be:

- fewer cases than the exact sign-flip test needs to reach ``alpha`` (6 at 95 %): no verdict
  is possible whatever the outcomes;
- a minimum detectable effect beyond the largest improvement the baseline leaves room for
  (``1 - baseline rate``): no improvement can be shown;
- with ``plan_effect``: more cases needed for it than the design has.

The fixed design's numbers are the best a sequential run can do: its anytime-valid interval
is wider at any number of cases, so a warning for the fixed design holds for it too.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from typing import Any

from evalkit._settings import CONFIDENCE, POWER, RUNS_DIR
from evalkit.cases import Suite, load_suite
from evalkit.errors import ConfigError
from evalkit.results import load_results
from evalkit.runner import RunConfig
from evalkit.stats import (
    DEFAULT_THRESHOLD,
    PowerDesign,
    VarianceComponents,
    estimate_variance_components,
    minimum_cases,
    minimum_detectable_effect,
    required_cases,
)

#: Power every plan is made for.
PLAN_POWER = POWER.default


@dataclass(frozen=True)
class RunPlan:
    """What a run would do, and what its comparisons could show.

    Attributes:
        suite: The suite's directory.
        cases: Cases the run would draw (after the filters).
        conditions: Conditions it would run.
        trials: Trials per case and condition.
        items: Work items (cases x conditions x trials).
        compared_cases: Cases a comparison of two conditions pairs (with a ``max_items``
            budget, at most what it pays for).
        pair: The two conditions ``--until-verdict`` would compare (None: any two).
        alpha: Two-sided level (1 - confidence).
        threshold: Practical threshold of "improved".
        power: Power the numbers are planned for.
        baseline_rate: Baseline pass rate of the variance model.
        variances: Where the variance components come from (``default`` or the pilot run).
        min_cases_for_verdict: Fewest cases with which the sign-flip test can reach ``alpha``.
        mde: Minimum detectable effect at ``compared_cases`` and ``trials`` (None: fewer than
            2 cases).
        max_improvement: Largest improvement the baseline leaves room for.
        cases_at_threshold: Cases needed at ``trials`` to tell an effect of the threshold's
            size from zero (None: not plannable).
        cases_for_any_verdict: Fewest cases at ``trials`` with which an improvement can be
            shown at all: the largest possible one detected at ``power``, and at least
            ``min_cases_for_verdict`` (None: not plannable).
        plan_effect: The planned effect (``--plan-effect``), or None.
        cases_for_plan_effect: Cases needed at ``trials`` for it (None without it).
        reachable: False when the design cannot reach a verdict at all.
        warnings: Each problem, with what would fix it.
    """

    suite: str
    cases: int
    conditions: tuple[str, ...]
    trials: int
    items: int
    compared_cases: int
    pair: tuple[str, str] | None
    alpha: float
    threshold: float
    power: float
    baseline_rate: float
    variances: str
    min_cases_for_verdict: int
    mde: float | None
    max_improvement: float
    cases_at_threshold: int | None
    cases_for_any_verdict: int | None
    plan_effect: float | None
    cases_for_plan_effect: int | None
    reachable: bool
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit run --plan --json`` object (every field a plain value).

        Returns:
            The fields as a dict.
        """
        out = asdict(self)
        out["conditions"] = list(self.conditions)
        out["pair"] = None if self.pair is None else list(self.pair)
        out["warnings"] = list(self.warnings)
        return out


def plan_run(
    suite: str | os.PathLike[str] | Suite,
    config: RunConfig,
    *,
    until_verdict: bool = False,
    max_items: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    confidence: float = CONFIDENCE.default,
    plan_effect: float | None = None,
    from_run: str | os.PathLike[str] | None = None,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
) -> RunPlan:
    """Plan a run without running it (``evalkit run --plan``).

    Args:
        suite: Suite directory or loaded suite.
        config: The run's options (filters, conditions, trials).
        until_verdict: The run would be ``--until-verdict`` over ``config.conditions``
            (exactly two).
        max_items: Its budget of items (caps the cases compared).
        threshold: Practical threshold of "improved".
        confidence: Level of the verdict's interval.
        plan_effect: An effect to plan the cases for (e.g. 0.1 for 10 pp).
        from_run: A pilot run whose variance components replace the default model (two of
            its conditions: ``config.conditions`` when it names two and the run has them).
        runs_dir: Where ``from_run`` is looked up.

    Returns:
        The :class:`RunPlan`.

    Raises:
        ConfigError: No case matches the filters, an unknown condition, or
            ``until_verdict`` without exactly two conditions.
    """
    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    conditions = tuple(config.conditions or loaded.spec.defaults.conditions)
    cases = loaded.select(
        case_ids=config.case_ids, lanes=config.lanes, tags=config.tags, splits=config.splits,
        conditions=conditions,
    )
    if until_verdict and len(conditions) != 2:
        raise ConfigError(
            "--until-verdict compares two conditions: pass --conditions BASELINE,CANDIDATE"
        )
    trials = config.trials or loaded.spec.defaults.trials
    compared = len(cases)
    warnings: list[str] = []
    if until_verdict and max_items is not None:
        compared = min(compared, max_items // (2 * trials))
        if compared < len(cases):
            warnings.append(
                f"--max-items {max_items} pays for {compared} of the {len(cases)} cases "
                f"(2 conditions x {trials} trials each)"
            )
    alpha = round(1.0 - confidence, 12)  # 0.05, not 0.050000000000000044
    components, source = _components(from_run, runs_dir, conditions)
    design = PowerDesign.from_components(components, alpha=alpha, power=PLAN_POWER)
    mde = (
        minimum_detectable_effect(compared, trials, threshold=threshold, design=design)
        if compared >= 2
        else None
    )
    rate = mde.baseline_rate if mde is not None else _rate(components)
    room = 1.0 - rate
    floor = minimum_cases(alpha)
    at_threshold = required_cases(threshold, trials, threshold=0.0, design=design).n_cases
    any_verdict = None
    if room > threshold:
        fewest = required_cases(room, trials, threshold=threshold, design=design).n_cases
        any_verdict = None if fewest is None else max(fewest, floor)
    reachable = True
    if compared < floor:
        reachable = False
        warnings.append(
            f"no verdict is possible with {compared} case(s): the sign-flip test over cases "
            f"needs at least {floor} to reach alpha {alpha:g}; add cases (at least {floor})"
        )
    if mde is not None and mde.effect > room:
        reachable = False
        more = f"; {any_verdict} cases at {trials} trials would" if any_verdict else ""
        warnings.append(
            f"the smallest change this design detects ({mde.effect * 100:+.1f} pp at "
            f"{PLAN_POWER:.0%} power) is beyond the largest improvement a baseline of "
            f"{rate:.0%} leaves room for ({room * 100:+.1f} pp): no improvement can be "
            f"shown{more}"
        )
    for_effect = None
    if plan_effect is not None:
        for_effect = required_cases(plan_effect, trials, threshold=threshold, design=design).n_cases
        if for_effect is None or for_effect > compared:
            needed = "no number of cases" if for_effect is None else f"{for_effect} cases"
            warnings.append(
                f"the planned effect of {plan_effect * 100:+g} pp needs {needed} at {trials} "
                f"trials; this design has {compared}"
            )
    return RunPlan(
        suite=str(loaded.root),
        cases=len(cases),
        conditions=conditions,
        trials=trials,
        items=len(cases) * len(conditions) * trials,
        compared_cases=compared,
        pair=(conditions[0], conditions[1]) if until_verdict else None,
        alpha=alpha,
        threshold=threshold,
        power=PLAN_POWER,
        baseline_rate=rate,
        variances=source,
        min_cases_for_verdict=floor,
        mde=None if mde is None else mde.effect,
        max_improvement=room,
        cases_at_threshold=at_threshold,
        cases_for_any_verdict=any_verdict,
        plan_effect=plan_effect,
        cases_for_plan_effect=for_effect,
        reachable=reachable,
        warnings=tuple(warnings),
    )


def _components(
    from_run: str | os.PathLike[str] | None,
    runs_dir: str | os.PathLike[str],
    conditions: tuple[str, ...],
) -> tuple[VarianceComponents | None, str]:
    """The pilot run's variance components and where they come from (None: the default)."""
    if from_run is None:
        return None, "default (Miller's model around a 50 % baseline)"
    rows = load_results(from_run, runs_dir, what="--from-run")
    present = set(rows["condition"]) if "condition" in rows.columns else set()
    pair = list(conditions[:2]) if len(conditions) >= 2 and set(conditions[:2]) <= present else None
    components = estimate_variance_components(rows, conditions=pair)
    return components, f"the run {from_run}" + (f" ({', '.join(pair)})" if pair else "")


def _rate(components: VarianceComponents | None) -> float:
    if components is None or not math.isfinite(components.baseline_rate):
        return 0.5
    return float(components.baseline_rate)
