"""Work items to a verdict: sequential comparison with and without adaptive trials vs fixed.

Usage: python benchmarks/bench_sequential.py [--sims 200] [--seed 0]
    [--table all|items|futility|bound|equal]

Case model: agent-like suite, case difficulty ``Beta(a, a)`` with ``a / (2a + 1) = 0.16`` (two
identical runs disagree on about 16 % of cases; ``a = 0.235``), mean baseline 0.5; the effect is
put in as Miller's model does (``simulate_arms``): every case's candidate rate moves by the
same share of its headroom, so the mean difference is the stated pp exactly. Work items =
cases x 2 conditions x trials. The fixed design's ``n`` is ``evalkit.stats.required_cases`` at
80 % power for the same model (its exact variance components); its cost is ``n x 2 x K``.
The sequential runs look after every 5 cases, bets tuned for ``n``, budget ``4 n`` cases.
A/A rows: no effect, a look every 5 cases up to 200 cases (40 looks).

Printed per setting: mean work items, its ratio to the fixed design's at 80 % power, the
sequential design's power (share *improved*), the fixed design's ``n`` at that same power
(equal error rates on the alternative; the lower 95 % Wilson bound of the simulated power,
so the sequential design is not credited with more power than the simulations show) and the
ratio against it.

The ``futility`` table compares, per case model (the agent-like one above and ``Beta(2, 2)``,
concentration 4), effect (+10, +20 pp), ``K`` (3, 5) and design (adaptive trials off, or on
with the default ``pi = w``), the fixed design at its planned ``n`` (80 % power, alpha 0.05
two-sided, ``n x 2 x K`` items) with the sequential design planned for the same effect: the
planned-effect futility boundary with ``beta`` = 0.2 and 0.1 (and, for reference, without it),
a look every 5 cases, bets tuned for ``n``, budget ``4 n`` cases. Under the effect: mean work
items, their ratio to the fixed design's, power (share *improved*) with its lower 95 % Wilson
bound, share stopped futile; under no effect (A/A, same budget, at least 10 looks): mean work
items, their ratio, and the false-verdict rate. The last but one column says whether the error
rates are at least as good as the fixed design's: power >= 0.80 and A/A rate <= 0.05.

The ``bound`` table (exact computation, no simulation) is the fewest work items *any*
sequential test could expect to spend at the fixed design's error rates (false *improved* at
most 0.025 when the mean difference is at most 0, power 0.80 at the effect): Wald's inequality
``E[N] KL >= (1 - b) log((1 - b) / a) + b log(b / (1 - a))`` with, per case, the smallest
Kullback-Leibler divergence from the effect's distribution of ``(baseline passes, candidate
passes)`` to any distribution whose mean difference is at most 0 (``KL_inf = max_lam
E log(1 + lam d)``, the growth rate of the best bettor on the per-case difference ``d``), per
work item, at the best number ``K'`` of trials per case and arm fixed in advance (1 to ``K``).
Under no effect the same with the roles swapped: the fewest items to exclude the effect with
error at most 0.2. A test that knows the effect exactly and looks after every case could at
best reach these figures; they do not cover trial counts chosen from a case's outcomes.

The ``equal`` table follows the bound's lesson (one trial per case and arm is the cheapest per
item): the sequential design with ``K = 1``, a look every 5 cases, bets tuned for the fixed
``n`` at ``K = 1``, budget ``4 n``, the planned-effect futility boundary at ``beta`` 0.2, 0.1,
0.05 and 0.02, at least 1,000 simulations per row and hypothesis. Its baseline is the
cheapest fixed design (``K`` in 1, 2, 3, 5) at the same alpha (0.05 two-sided) and the power
the sequential design showed (the lower 95 % Wilson bound of its simulated power, at least
0.80): equal error rates, with the fixed design keeping its larger A/A false-verdict rate.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
from scipy import optimize, special, stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evalkit.stats import (  # noqa: E402
    DEFAULT_CONCENTRATION,
    AdaptiveTrials,
    PowerDesign,
    SequentialPlan,
    proportion_ci,
    required_cases,
    simulate_sequential,
)
from evalkit.stats._adaptive_power import AGENT_CONCENTRATION  # noqa: E402
from evalkit.stats._simulate import model_components  # noqa: E402

#: Error rates of the fixed design the bound is taken at: false *improved* (one side of a
#: two-sided 0.05) and missed effect (80 % power).
BOUND_ALPHA, BOUND_BETA = 0.025, 0.2
#: The two case models of the tables: name and Beta concentration of case difficulty.
CASE_MODELS = (("agent-like", AGENT_CONCENTRATION), ("Beta(2, 2)", DEFAULT_CONCENTRATION))


def _fixed_n(
    effect: float, trials: int, power: float = 0.8, concentration: float = AGENT_CONCENTRATION
) -> int:
    components = model_components(0.5, effect, concentration)
    result = required_cases(effect, trials,
                            design=PowerDesign.from_components(components, power=power))
    assert result.n_cases is not None
    return result.n_cases


def main() -> None:
    """Print the tables of BENCHMARKS.md's sequential sections."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--table", choices=("all", "items", "futility", "bound", "equal"),
                        default="all")
    args = parser.parse_args()
    if args.table in ("all", "items"):
        _items_table(args.sims, args.seed)
    if args.table in ("all", "futility"):
        _futility_table(args.sims, args.seed)
    if args.table in ("all", "bound"):
        _bound_table()
    if args.table in ("all", "equal"):
        _equal_table(max(args.sims, 1000), args.seed)


def _simulate(effect: float, design: AdaptiveTrials, adaptive: bool, **settings: object) -> Plan:
    """The sequential design with adaptive trials, or (off) every case running all of them."""
    if adaptive:
        plan = simulate_sequential(effect, adaptive=design, **settings)  # type: ignore[call-overload]
        return Plan(plan, plan.expected_items, plan.stage_two_share)
    plan = simulate_sequential(effect, design.total_trials, **settings)  # type: ignore[call-overload]
    return Plan(plan, 2 * design.total_trials * plan.expected_cases, 1.0)


class Plan(NamedTuple):
    """A simulated sequential plan and the work items it spent."""

    plan: SequentialPlan
    expected_items: float
    stage_two_share: float

    @property
    def improved(self) -> float:
        """Share of simulations that stopped with "improved"."""
        return self.plan.improved

    @property
    def regressed(self) -> float:
        """Share of simulations that stopped with "regressed"."""
        return self.plan.regressed

    @property
    def futile(self) -> float:
        """Share of simulations that stopped as futile."""
        return self.plan.futile


def _header(columns: str, left: int | tuple[int, ...], blank_line: bool = True) -> None:
    """Print a Markdown table header: ``columns`` split on ``|``; the columns ``left`` (the
    first ``left`` ones, or those indices) aligned left, the others right."""
    names = [name.strip() for name in columns.split("|")]
    lefts = range(left) if isinstance(left, int) else left
    align = ["---" if i in lefts else "---:" for i in range(len(names))]
    print(("\n" if blank_line else "") + "| " + " | ".join(names) + " |")
    print("|" + "|".join(align) + "|")


def _cheapest_fixed(effect: float, kappa: float, power: float) -> tuple[int, int]:
    """Items and ``K`` of the cheapest fixed design (``K`` in 1, 2, 3, 5) at ``power``."""
    return min(
        (_fixed_n(effect, trials, power=power, concentration=kappa) * 2 * trials, trials)
        for trials in (1, 2, 3, 5)
    )


def _equal_table(sims: int, seed: int) -> None:
    """Print the table of BENCHMARKS.md's section "one trial per case, at equal error rates"."""
    _header("model | effect | beta | power (Wilson low) | cheapest fixed at that power: items (K) "
            "| mean items | vs fixed | A/A mean items | A/A vs fixed | A/A false verdicts "
            "| seconds", left=2)
    for model, kappa in CASE_MODELS:
        for effect in (0.10, 0.20):
            n = _fixed_n(effect, 1, concentration=kappa)
            for beta in (0.2, 0.1, 0.05, 0.02):
                started = time.perf_counter()
                design = functools.partial(
                    simulate_sequential, n_trials=1, concentration=kappa, max_cases=4 * n,
                    round_size=5, plan_cases=n, n_sims=sims, plan_effect=effect,
                    futility_beta=beta)
                plan, null = design(effect, seed=seed), design(0.0, seed=seed + 1)
                seconds = time.perf_counter() - started
                low = proportion_ci(round(plan.improved * sims), sims).ci_low
                fixed_items, fixed_trials = _cheapest_fixed(effect, kappa, max(low, 0.8))
                items, null_items = 2 * plan.expected_cases, 2 * null.expected_cases
                print(f"| {model} | +{effect * 100:.0f} pp | {beta} "
                      f"| {plan.improved:.3f} ({low:.3f}) | {fixed_items} ({fixed_trials}) "
                      f"| {items:.0f} | {items / fixed_items:.2f} | {null_items:.0f} "
                      f"| {null_items / fixed_items:.2f} | {null.improved + null.regressed:.3f} "
                      f"| {seconds:.0f} |", flush=True)


def _case_counts(effect: float, kappa: float, trials: int, mu: float = 0.5) -> np.ndarray:
    """Exact distribution of ``(baseline passes, candidate passes)`` of one case.

    Miller's model as ``simulate_arms`` draws it, integrated over case difficulty with
    Gauss-Jacobi quadrature (exact: the integrand is a polynomial in ``p`` of degree
    ``2 K``).
    """
    a, b = mu * kappa, (1 - mu) * kappa
    nodes, weights = special.roots_jacobi(trials + 2, b - 1, a - 1)
    p = (1 + nodes) / 2
    weights = weights / weights.sum()
    q = p + effect * (1 - p) / (1 - mu)
    k = np.arange(trials + 1)[:, None]
    baseline = stats.binom.pmf(k, trials, p[None, :])
    candidate = stats.binom.pmf(k, trials, q[None, :])
    return np.asarray(np.einsum("in,jn,n->ij", baseline, candidate, weights))


def _kl_inf(counts: np.ndarray, trials: int, boundary: float, side: int) -> float:
    """Smallest KL divergence from ``counts`` to any law whose mean difference is past
    ``boundary`` (``side`` +1: at most it; -1: at least it), by its dual
    ``max_lam E log(1 + lam side (d - boundary))``."""
    k = np.arange(trials + 1)
    gain = side * ((k[None, :] - k[:, None]) / trials - boundary)
    top = 1.0 / -gain.min() * (1 - 1e-9)
    best = optimize.minimize_scalar(
        lambda lam: -float(np.sum(counts * np.log1p(lam * gain))),
        bounds=(0.0, top), method="bounded")
    return float(-best.fun)


def _bound_table() -> None:
    """Print the table of BENCHMARKS.md's section "the fewest items any test could spend"."""
    a, b = BOUND_ALPHA, BOUND_BETA
    needed_h1 = (1 - b) * math.log((1 - b) / a) + b * math.log(b / (1 - a))
    needed_h0 = (1 - a) * math.log((1 - a) / b) + a * math.log(a / (1 - b))
    _header("model | effect | K | fixed n (items) | under the effect: fewest items (best K') "
            "| vs fixed | under no effect: fewest items (best K') | vs fixed", left=2)
    for model, kappa in CASE_MODELS:
        for effect in (0.10, 0.20):
            for trials in (3, 5):
                n = _fixed_n(effect, trials, concentration=kappa)
                fixed_items = n * 2 * trials
                rate_h1, rate_h0 = {}, {}
                for per_case in range(1, trials + 1):
                    alternative = _case_counts(effect, kappa, per_case)
                    null = _case_counts(0.0, kappa, per_case)
                    items = 2 * per_case
                    rate_h1[per_case] = _kl_inf(alternative, per_case, 0.0, +1) / items
                    rate_h0[per_case] = _kl_inf(null, per_case, effect, -1) / items
                best_h1 = max(rate_h1, key=rate_h1.__getitem__)
                best_h0 = max(rate_h0, key=rate_h0.__getitem__)
                fewest_h1 = needed_h1 / rate_h1[best_h1]
                fewest_h0 = needed_h0 / rate_h0[best_h0]
                print(f"| {model} | +{effect * 100:.0f} pp | {trials} | {n} ({fixed_items}) "
                      f"| {fewest_h1:.0f} ({best_h1}) | {fewest_h1 / fixed_items:.2f} "
                      f"| {fewest_h0:.0f} ({best_h0}) | {fewest_h0 / fixed_items:.2f} |",
                      flush=True)


def _futility_table(sims: int, seed: int) -> None:
    """Print the table of BENCHMARKS.md's section "planned-effect futility boundary"."""
    _header("model | effect | K | trials | beta | fixed n (items) | mean items | vs fixed "
            "| power (Wilson low) | futile | A/A mean items | A/A vs fixed | A/A false verdicts "
            "| power >= 0.80, A/A <= 0.05 | seconds", left=(0, 1, 3, 13))
    for model, kappa in CASE_MODELS:
        for effect in (0.10, 0.20):
            for trials in (3, 5):
                n = _fixed_n(effect, trials, concentration=kappa)
                fixed_items = n * 2 * trials
                budget = 4 * n
                assert budget // 5 >= 10, "A/A needs at least 10 looks"
                weight = (trials - 1) / trials
                for adaptive in (False, True):
                    design = AdaptiveTrials(total_trials=trials, first_trials=1,
                                            probability=weight if adaptive else 1.0)
                    for beta in (None, 0.2, 0.1):
                        started = time.perf_counter()
                        settings = {
                            "concentration": kappa, "max_cases": budget,
                            "round_size": 5, "plan_cases": n, "n_sims": sims,
                            "plan_effect": None if beta is None else effect,
                            "futility_beta": 0.2 if beta is None else beta,
                        }
                        plan = _simulate(effect, design, adaptive, seed=seed, **settings)
                        null = _simulate(0.0, design, adaptive, seed=seed + 1, **settings)
                        seconds = time.perf_counter() - started
                        low = proportion_ci(round(plan.improved * sims), sims).ci_low
                        false = null.improved + null.regressed
                        equal = "yes" if plan.improved >= 0.8 and false <= 0.05 else "no"
                        print(f"| {model} | +{effect * 100:.0f} pp | {trials} "
                              f"| {'adaptive' if adaptive else 'all K'} "
                              f"| {'-' if beta is None else beta} | {n} ({fixed_items}) "
                              f"| {plan.expected_items:.0f} "
                              f"| {plan.expected_items / fixed_items:.2f} "
                              f"| {plan.improved:.3f} ({low:.3f}) | {plan.futile:.3f} "
                              f"| {null.expected_items:.0f} "
                              f"| {null.expected_items / fixed_items:.2f} | {false:.3f} "
                              f"| {equal} | {seconds:.1f} |", flush=True)


def _items_table(sims: int, seed: int) -> None:
    """Print the table of BENCHMARKS.md's section "Sequential comparison: work items"."""
    _header("effect | K | design | mean items | vs fixed (80 %) | power "
            "| fixed n at that power (Wilson low) | vs fixed at equal power "
            "| stage-2 share | A/A false verdicts | seconds", left=(0, 2), blank_line=False)
    for effect in (0.10, 0.20):
        one = _fixed_n(effect, 1)
        print(f"| +{effect * 100:.0f} pp | 1 | fixed, n = {one} | {one * 2} | | 0.80 | | | | | |")
        for trials in (3, 5):
            n = _fixed_n(effect, trials)
            fixed_items = n * 2 * trials
            print(f"| +{effect * 100:.0f} pp | {trials} | fixed, n = {n} | {fixed_items} | 1.00 "
                  f"| 0.80 | {n} | 1.00 | 1 | (alpha) | |")
            weight = (trials - 1) / trials
            rows = (
                ("sequential, adaptive off", 1.0, 4 * n),
                (f"adaptive, pi = w = {weight:.2f} (default)", weight, 4 * n),
                ("adaptive, pi = 0.5", 0.5, 4 * n),
                (f"adaptive, pi = w, budget capped at n = {n} cases", weight, n),
            )
            for label, probability, budget in rows:
                design = AdaptiveTrials(total_trials=trials, first_trials=1,
                                        probability=probability)
                adaptive = probability < 1.0
                started = time.perf_counter()
                plan = _simulate(effect, design, adaptive, concentration=AGENT_CONCENTRATION,
                                 max_cases=budget, round_size=5, plan_cases=n, n_sims=sims,
                                 seed=seed)
                null = _simulate(0.0, design, adaptive, concentration=AGENT_CONCENTRATION,
                                 max_cases=200, round_size=5, plan_cases=n, n_sims=sims,
                                 seed=seed + 1)
                seconds = time.perf_counter() - started
                power = plan.improved
                # credit the sequential design with no more power than the simulations show:
                # the lower 95 % Wilson bound of its measured power
                low = proportion_ci(round(power * sims), sims).ci_low
                equal_n = _fixed_n(effect, trials, low) if low > 0.8 else n
                print(f"| +{effect * 100:.0f} pp | {trials} | {label} | "
                      f"{plan.expected_items:.0f} | {plan.expected_items / fixed_items:.2f} | "
                      f"{power:.3f} | {equal_n} | "
                      f"{plan.expected_items / (equal_n * 2 * trials):.2f} | "
                      f"{plan.stage_two_share:.2f} | "
                      f"{null.improved + null.regressed:.3f} | {seconds:.1f} |", flush=True)

if __name__ == "__main__":
    main()
