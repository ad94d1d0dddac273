"""Items of ``evalkit confirm`` at equal power: each case's power plan vs Neyman allocation.

Usage: python benchmarks/bench_confirm_allocation.py [--sims 200] [--seed 0]

A confirmation reruns ``m`` cases with fresh trials and names each one on its own Fisher test,
Holm over the ``m`` (``evalkit.stats.confirm_case_table``). Scenarios: the named cases with
their true baseline and candidate pass rates (below), screened by a pilot of ``K`` trials per
side drawn at those rates (seeded). For each simulated pilot:

- *power plan*: ``evalkit.analysis.plan_confirmation`` (each case at the trials its exact test
  needs for the screened effect, shrunk, at level ``alpha / m``, power 0.8, cap 40);
- *allocated*: the same items spread by ``evalkit.analysis.allocate_confirmation`` (the
  default ``NeymanAllocation`` on the pilot's pairs).

Measured exactly, not by simulation of the confirmation (``evalkit.stats.fisher_power`` at the
true rates and level ``alpha / m``, Holm's first step, a lower bound of Holm's power): the
expected number of truly moved cases named, and the items the allocation needs to name as many
(the fewest total trials, spread by the same shares, whose expected count reaches the power
plan's), as a ratio to the power plan's items, and the share of the truly moved cases whose
own power at their trials is at least 0.8 under each design. Reported: the mean over the
pilots.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evalkit.analysis import (  # noqa: E402
    FlaggedCase,
    allocate_confirmation,
    pilot_pairs,
    plan_confirmation,
)
from evalkit.analysis._confirm_allocation import MIN_TRIALS, apportion  # noqa: E402
from evalkit.stats import NeymanAllocation, allocation_probabilities, fisher_power  # noqa: E402

ALPHA, THRESHOLD = 0.05, 0.05

#: name -> (pilot trials per side, [(baseline rate, candidate rate), ...]).
SCENARIOS: dict[str, tuple[int, list[tuple[float, float]]]] = {
    "3 moved, 3 varying null, 2 deterministic; K 5": (
        5,
        [(0.2, 0.8), (0.3, 0.9), (0.5, 0.9), (0.5, 0.5), (0.3, 0.3), (0.7, 0.7),
         (1.0, 1.0), (0.0, 0.0)],
    ),
    "4 moved of sizes 25-60 pp; K 5": (
        5, [(0.3, 0.9), (0.2, 0.6), (0.5, 0.8), (0.6, 0.85)]
    ),
    "2 moved, 4 deterministic; K 3": (
        3, [(0.2, 0.8), (0.4, 0.9), (1.0, 1.0), (1.0, 1.0), (0.0, 0.0), (1.0, 1.0)]
    ),
    "6 moved flagged by the screen, sizes 30-70 pp; K 10": (
        10, [(0.1, 0.8), (0.2, 0.7), (0.3, 0.7), (0.6, 0.95), (0.9, 0.3), (0.5, 0.9)]
    ),
}  # fmt: skip


def pilot(rates: list[tuple[float, float]], trials: int, rng: np.random.Generator):
    """A pilot's rows per side and its named cases (every case named, as ``--case`` does)."""
    frames = []
    for side in (0, 1):
        rows = [
            {"case_id": f"c{i}", "trial": k, "passed": bool(rng.random() < pair[side])}
            for i, pair in enumerate(rates)
            for k in range(trials)
        ]
        frames.append(pd.DataFrame(rows))
    base, cand = frames
    named = []
    for i in range(len(rates)):
        b = int(base[base["case_id"] == f"c{i}"]["passed"].sum())
        c = int(cand[cand["case_id"] == f"c{i}"]["passed"].sum())
        named.append(FlaggedCase(f"c{i}", b, trials, c, trials, (c - b) / trials, 1.0, 1.0,
                                 "inconclusive", named=True))  # fmt: skip
    return base, cand, named


def moved_powers(trials: np.ndarray, rates: list[tuple[float, float]]) -> list[float]:
    """Each truly moved case's exact power at these trials (Holm's first level)."""
    level = ALPHA / len(rates)
    return [fisher_power(b, c, int(k), level, THRESHOLD)
            for k, (b, c) in zip(trials, rates, strict=True) if b != c]  # fmt: skip


def named_true(trials: np.ndarray, rates: list[tuple[float, float]]) -> float:
    """Expected truly moved cases named at these trials (Holm's first level, exact)."""
    return sum(moved_powers(trials, rates))


def main() -> None:
    """Print the table of BENCHMARKS.md's section on allocating a confirmation."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("| scenario | power plan: items | its expected moved named | allocated: expected "
          "moved named at those items | items the allocation needs for as many | ratio | "
          "moved cases at power >= 0.8: plan, allocated | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    design = NeymanAllocation()
    for name, (k, rates) in SCENARIOS.items():
        started = time.perf_counter()
        rng = np.random.default_rng(args.seed)
        items, plan_named, alloc_named, needed = [], [], [], []
        strong: list[tuple[float, float]] = []
        for _ in range(args.sims):
            base, cand, named = pilot(rates, k, rng)
            plan = plan_confirmation(named, base, alpha=ALPHA, threshold=THRESHOLD)
            pairs, differed = pilot_pairs(base, cand, [c.case_id for c in plan.cases])
            allocated = allocate_confirmation(plan, pairs, differed, threshold=THRESHOLD)
            order = [int(c.case_id[1:]) for c in plan.cases]
            truth = [rates[i] for i in order]
            target = named_true(np.array([c.trials for c in plan.cases]), truth)
            items.append(plan.items)
            plan_named.append(target)
            alloc_trials = np.array([c.trials for c in allocated.cases])
            alloc_named.append(named_true(alloc_trials, truth))
            plan_powers = moved_powers(np.array([c.trials for c in plan.cases]), truth)
            alloc_powers = moved_powers(alloc_trials, truth)
            strong.append((float(np.mean(np.array(plan_powers) >= 0.8)),
                           float(np.mean(np.array(alloc_powers) >= 0.8))))  # fmt: skip
            shares = allocation_probabilities(pairs, differed, design)
            needed.append(2 * _fewest(shares, truth, target, plan.max_trials))
        seconds = time.perf_counter() - started
        mean_items, mean_needed = float(np.mean(items)), float(np.mean(needed))
        print(f"| {name} | {mean_items:.0f} | {np.mean(plan_named):.2f} | "
              f"{np.mean(alloc_named):.2f} | {mean_needed:.0f} | "
              f"{mean_needed / mean_items:.2f} | {np.mean([a for a, _ in strong]):.2f}, "
              f"{np.mean([b for _, b in strong]):.2f} | {seconds:.0f} |", flush=True)  # fmt: skip


def _fewest(shares: np.ndarray, truth: list[tuple[float, float]], target: float,
            max_trials: int) -> int:  # fmt: skip
    """Fewest total trials per side, spread by ``shares``, naming ``target`` moved cases."""
    m = len(shares)
    low, high = MIN_TRIALS * m, max_trials * m
    if named_true(apportion(high, shares, MIN_TRIALS, max_trials), truth) < target - 1e-9:
        return high  # the cap binds first: the allocation cannot match (counted at the cap)
    while low < high:
        mid = (low + high) // 2
        if named_true(apportion(mid, shares, MIN_TRIALS, max_trials), truth) >= target - 1e-9:
            high = mid
        else:
            low = mid + 1
    return low


if __name__ == "__main__":
    main()
