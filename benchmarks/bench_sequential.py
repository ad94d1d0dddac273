"""Work items to a verdict: sequential comparison with and without adaptive trials vs fixed.

Usage: python benchmarks/bench_sequential.py [--sims 200] [--seed 0]

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
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evalkit.stats import (  # noqa: E402
    AdaptiveTrials,
    proportion_ci,
    required_cases,
    simulate_adaptive,
)
from evalkit.stats._adaptive_power import AGENT_CONCENTRATION  # noqa: E402
from evalkit.stats._simulate import model_components  # noqa: E402


def _fixed_n(effect: float, trials: int, power: float = 0.8) -> int:
    components = model_components(0.5, effect, AGENT_CONCENTRATION)
    result = required_cases(effect, trials, components=components, power=power)
    assert result.n_cases is not None
    return result.n_cases


def main() -> None:
    """Print the table of BENCHMARKS.md's section "Sequential comparison: work items"."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("| effect | K | design | mean items | vs fixed (80 %) | power "
          "| fixed n at that power (Wilson low) | vs fixed at equal power "
          "| stage-2 share | A/A false verdicts | seconds |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
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
                plan = simulate_adaptive(effect, design, adaptive=adaptive, max_cases=budget,
                                         round_size=5, plan_cases=n, n_sims=args.sims,
                                         seed=args.seed)
                null = simulate_adaptive(0.0, design, adaptive=adaptive, max_cases=200,
                                         round_size=5, plan_cases=n, n_sims=args.sims,
                                         seed=args.seed + 1)
                seconds = time.perf_counter() - started
                power = plan.improved
                # credit the sequential design with no more power than the simulations show:
                # the lower 95 % Wilson bound of its measured power
                low = proportion_ci(round(power * args.sims), args.sims).ci_low
                equal_n = _fixed_n(effect, trials, low) if low > 0.8 else n
                print(f"| +{effect * 100:.0f} pp | {trials} | {label} | "
                      f"{plan.expected_items:.0f} | {plan.expected_items / fixed_items:.2f} | "
                      f"{power:.3f} | {equal_n} | "
                      f"{plan.expected_items / (equal_n * 2 * trials):.2f} | "
                      f"{plan.stage_two_share:.2f} | "
                      f"{null.improved + null.regressed:.3f} | {seconds:.1f} |", flush=True)

if __name__ == "__main__":
    main()
