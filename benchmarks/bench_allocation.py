"""Work items to a verdict with Neyman allocation of trials, vs the fixed design and Wald's bound.

Usage: python benchmarks/bench_allocation.py [--sims 200] [--seed 0] [--quick] [--design NAME]
       python benchmarks/bench_allocation.py --bounds

Suites (board-like): ``N`` cases of which a share is deterministic in both arms (half always
pass, half always fail, in both conditions), the others with baseline pass rates uniform in
[0.05, 0.95] (seeded). The effect is put on the varying cases only, *uniform* (every varying
case gains the same share of its headroom) or *concentrated* (a fifth of the suite's cases,
drawn among the varying ones, gain; the others do not move), scaled so the suite's mean
difference is exactly the stated pp. The estimand is the suite's mean difference.

Sequential designs (``evalkit.stats.simulate_allocation``): rounds of 20 pairs (one baseline
and one candidate trial of a case; 2 work items), a look after every round, betting
confidence sequence at alpha 0.05 (two-sided), threshold 2 pp, bets tuned for the fixed
design's pairs at ``K = 1``, budget 4 times those pairs, the planned-effect futility boundary
at ``beta`` 0.2 (power about 0.8) and 0.05 (about 0.95). *uniform draws*: every case drawn with
the same probability (``floor = 1``); *allocated*: the default :class:`NeymanAllocation`
(``floor = 0.7``: 30 % of each draw's probability follows each case's estimated spread);
*screened after a 2-pair pilot*: uniform draws until twice ``N`` pairs are drawn, then a case
whose pairs never differed gets only the floor's share (:func:`screen_rule`), floor 0.7.

Baseline (**fixed design**): the cheapest design that runs ``n <= N`` cases drawn at random
without replacement, ``K`` trials per case and arm (``K`` from 1 to 50), at alpha 0.05
two-sided and the power the sequential row showed (the lower 95 % Wilson bound of its
simulated power, so the sequential design is credited with no more than it showed): its
variance is exact for the suite (``(1 - n / N) S2 / n + mean_i v_i / (n K)``, ``S2`` the
variance of the case differences over the suite, ``v_i`` a case's per-pair variance), its
power the normal approximation
(``required_cases``' rule). Items ``2 n K``.

Wald's bound: the fewest expected work items of any sequential test whose false *improved*
rate is at most 0.025 and whose power is that credited power, ``E[N] >= ((1 - b) log((1 - b) / a) +
b log(b / (1 - a))) / KL_inf`` per pair, with ``KL_inf = max_lam E log(1 + lam X)`` the growth
rate of the best bettor on the i.i.d. observation ``X``: the pair difference of a case drawn
uniformly (*uniform draws*), or the weighted increment ``D / (N q_i)`` at the allocation
``q`` computed from the cases' true spreads (*allocated*, the best the allocation could do
once it knew every case). It applies to observations drawn from one fixed law, so to the
allocated design only once its allocation has settled.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
from scipy import optimize, stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evalkit.stats import (  # noqa: E402
    NeymanAllocation,
    allocation_probabilities,
    proportion_ci,
    simulate_allocation,
)

ALPHA = 0.05
THRESHOLD = 0.02
#: Most trials per case and arm a fixed design may run.
MAX_TRIALS = 50
Z = stats.norm.ppf(1 - ALPHA / 2)


class Suite(NamedTuple):
    """A board-like suite: its name and each case's pass rate in both arms."""

    name: str
    baseline: np.ndarray
    candidate: np.ndarray


def make_suite(
    n_cases: int, deterministic: float, effect: float, shape: str, seed: int = 0
) -> Suite:
    """The suite of the module docstring (``shape``: ``uniform`` or ``concentrated``)."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.05, 0.95, n_cases)
    fixed = rng.permutation(n_cases)[: round(deterministic * n_cases)]
    base[fixed] = np.arange(len(fixed)) % 2
    varying = np.setdiff1d(np.arange(n_cases), fixed)
    moved = varying if shape == "uniform" else rng.choice(varying, n_cases // 5, replace=False)
    share = effect * n_cases / float(np.sum(1 - base[moved]))
    if share > 1:
        raise ValueError(f"effect {effect} does not fit into the headroom of the moved cases")
    cand = base.copy()
    cand[moved] += share * (1 - base[moved])
    name = f"N = {n_cases}, {deterministic:.0%} deterministic, {shape}"
    return Suite(name, base, cand)


def pair_variance(suite: Suite) -> np.ndarray:
    """Each case's variance of one pair's difference (independent trials)."""
    b, c = suite.baseline, suite.candidate
    return b * (1 - b) + c * (1 - c)


def fixed_items(suite: Suite, power: float) -> tuple[int, int, int]:
    """``(items, n, K)`` of the cheapest fixed design of the module docstring at ``power``."""
    n_cases = len(suite.baseline)
    delta = suite.candidate - suite.baseline
    effect = float(delta.mean())
    spread = float(delta.var(ddof=1))
    within = float(pair_variance(suite).mean())
    n = np.arange(2, n_cases + 1)
    best = None
    for trials in range(1, MAX_TRIALS + 1):
        se = np.sqrt((1 - n / n_cases) * spread / n + within / (n * trials))
        enough = np.flatnonzero(stats.norm.cdf(effect / se - Z) >= power)
        if len(enough):
            design = (2 * int(n[enough[0]]) * trials, int(n[enough[0]]), trials)
            best = design if best is None or design < best else best
    if best is None:
        raise ValueError(f"{suite.name}: no fixed design up to K = {MAX_TRIALS} reaches {power}")
    return best


def planned_pairs(suite: Suite) -> int:
    """Pairs of a uniform K = 1 design at 80 % power (what the bets are tuned for)."""
    delta = suite.candidate - suite.baseline
    variance = float(np.mean(_second_moment(suite))) - float(delta.mean()) ** 2
    return math.ceil((Z + stats.norm.ppf(0.8)) ** 2 * variance / float(delta.mean()) ** 2)


def _second_moment(suite: Suite) -> np.ndarray:
    """Each case's ``E[D^2]``: the probability that a pair differs."""
    b, c = suite.baseline, suite.candidate
    return b * (1 - c) + c * (1 - b)


def wald_items(suite: Suite, power: float, design: NeymanAllocation | None) -> float:
    """Wald's bound on the expected items (module docstring); None design: uniform draws."""
    a, beta = ALPHA / 2, 1 - power
    needed = (1 - beta) * math.log((1 - beta) / a) + beta * math.log(beta / (1 - a))
    n_cases = len(suite.baseline)
    b, c = suite.baseline, suite.candidate
    up, down = c * (1 - b), b * (1 - c)  # P(D = +1), P(D = -1) per case
    if design is None:
        q = np.full(n_cases, 1 / n_cases)
    else:
        # the allocation once every case's spread is known (prior of no weight)
        exact = NeymanAllocation(floor=design.floor, prior_pairs=1e-12)
        big = 1e9
        q = allocation_probabilities(np.full(n_cases, big), _second_moment(suite) * big, exact)
    values = np.concatenate([1 / (n_cases * q), -1 / (n_cases * q)])
    weights = np.concatenate([q * up, q * down])
    top = 1 / values.max() * (1 - 1e-9)
    best = optimize.minimize_scalar(
        lambda lam: -float(np.sum(weights * np.log1p(lam * values))),
        bounds=(0.0, top),
        method="bounded",
    )
    return 2 * needed / float(-best.fun)


def screen_rule(pilot: int, floor: float):
    """The issue's first rule: uniform draws for a pilot, then no more for cases that agreed.

    While fewer than ``pilot * N`` pairs are drawn every case has probability ``1 / N``; after
    that a case whose pairs have differed gets ``r_i = sqrt((s_i + 2 rho) / (n_i + 2))`` (as
    the default allocation), a case none of whose pairs differed gets ``r_i = 0`` (the floor
    alone), a case the pilot missed the pooled share of flipping cases times ``rho``; ``q_i =
    floor / N + (1 - floor) r_i / sum r``. Every case keeps ``floor / N``, so the same
    Horvitz-Thompson increments in ``[-1 / floor, 1 / floor]`` stay valid.
    """

    def rule(pairs: np.ndarray, differed: np.ndarray, net: np.ndarray) -> np.ndarray:
        n_cases = len(pairs)
        if pairs.sum() < pilot * n_cases:
            return np.full(n_cases, 1.0 / n_cases)
        flipped = differed > 0
        rho = (1 + differed[flipped].sum()) / (2 + pairs[flipped].sum())
        share = (flipped.sum() + 1) / ((pairs > 0).sum() + 2)
        spread = np.where(
            flipped,
            np.sqrt((differed + 2 * rho) / (pairs + 2)),
            np.where(pairs == 0, np.sqrt(rho * share), 0.0),
        )
        if spread.sum() == 0:
            return np.full(n_cases, 1.0 / n_cases)
        return np.asarray(floor / n_cases + (1 - floor) * spread / spread.sum())

    return rule


#: The designs of the table: label, allocation, and a rule replacing its probabilities.
DESIGNS = (
    ("uniform draws", NeymanAllocation(floor=1.0), None),
    ("allocated", NeymanAllocation(), None),
    ("screened after a 2-pair pilot", NeymanAllocation(), screen_rule(2, 0.7)),
)


#: The floors of ``--bounds``: 1 is uniform draws, 0.7 the default allocation.
BOUND_FLOORS = (1.0, 0.7, 0.5, 0.3, 0.1)


def print_bounds(suites: list[Suite], powers: tuple[float, ...]) -> None:
    """Wald's bound over the fixed design's items, per suite, power and allocation floor.

    No simulation: what any valid sequential test drawing that design's increments could
    reach once it knew every case's spread, the floor of 0.5 x the fixed design set beside it.
    """
    names = ["suite", "power", "fixed items (n, K)"]
    names += [f"bound / fixed at floor {floor:g}" for floor in BOUND_FLOORS]
    print("| " + " | ".join(names) + " |")
    print("|" + "|".join("---" if i < 2 else "---:" for i in range(len(names))) + "|")
    for suite in suites:
        for power in powers:
            items, n, trials = fixed_items(suite, power)
            ratios = [
                wald_items(suite, power, None if floor == 1 else NeymanAllocation(floor=floor))
                / items
                for floor in BOUND_FLOORS
            ]
            cells = " | ".join(f"{ratio:.2f}" for ratio in ratios)
            print(f"| {suite.name} | {power} | {items} ({n}, {trials}) | {cells} |")


def main() -> None:
    """Print the table of BENCHMARKS.md's section on Neyman allocation."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="one suite, one beta")
    parser.add_argument("--design", action="append", help="only this design (repeatable)")
    parser.add_argument(
        "--bounds", action="store_true", help="only Wald's bound per allocation floor (no runs)"
    )
    args = parser.parse_args()
    designs = [d for d in DESIGNS if not args.design or d[0] in args.design]
    suites = [
        make_suite(100, share, 0.05, shape)
        for share in (0.3, 0.6)
        for shape in ("uniform", "concentrated")
    ] + [make_suite(400, 0.6, 0.05, "uniform")]
    betas = (0.2, 0.05)
    if args.bounds:
        print_bounds(suites + [make_suite(400, 0.3, 0.05, "uniform")], (0.8, 0.95))
        return
    if args.quick:
        suites, betas = suites[:1], betas[:1]
    columns = (
        "suite | beta | design | power (Wilson low) | fixed at that power: items (n, K) "
        "| mean items | vs fixed | Wald bound | vs bound | A/A mean items | A/A false verdicts "
        "| seconds"
    )
    names = [name.strip() for name in columns.split("|")]
    print("| " + " | ".join(names) + " |")
    print("|" + "|".join("---" if i < 3 else "---:" for i in range(len(names))) + "|")
    for suite in suites:
        plan = planned_pairs(suite)
        for beta in betas:
            for label, design, rule in designs:
                started = time.perf_counter()
                settings = dict(
                    design=design,
                    max_pairs=4 * plan,
                    threshold=THRESHOLD,
                    plan_pairs=plan,
                    plan_effect=float(np.mean(suite.candidate - suite.baseline)),
                    futility_beta=beta,
                    n_sims=args.sims,
                    rule=rule,
                )
                alt = simulate_allocation(
                    suite.baseline, suite.candidate, seed=args.seed, **settings
                )  # type: ignore[arg-type]
                null = simulate_allocation(
                    suite.baseline, suite.baseline, seed=args.seed + 1, **settings
                )  # type: ignore[arg-type]
                seconds = time.perf_counter() - started
                power = alt.share("improved")
                low = proportion_ci(round(power * args.sims), args.sims).ci_low
                target = low
                items, n, trials = fixed_items(suite, target)
                bound = wald_items(suite, target, None if design.floor == 1 else design)
                false = null.share("improved", "regressed")
                print(
                    f"| {suite.name} | {beta} | {label} | {power:.3f} ({low:.3f}) "
                    f"| {items} ({n}, {trials}) | {alt.mean_items:.0f} "
                    f"| {alt.mean_items / items:.2f} | {bound:.0f} "
                    f"| {alt.mean_items / bound:.2f} | {null.mean_items:.0f} | {false:.3f} "
                    f"| {seconds:.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
