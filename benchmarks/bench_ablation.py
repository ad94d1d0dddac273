"""Work items of an ablation study: sequential allocation vs every ablation to a fixed n.

Usage: python benchmarks/bench_ablation.py [--sims 100] [--seed 0]

Model (``evalkit.ablation.simulate_allocation``): each case's full-skill pass probability is
``sigmoid(N(logit 0.6, 1))``; an ablated copy passes with that probability minus the
component's true contribution. Six components, like the test suite's skill: contributions
+0.25, +0.20 (necessary), -0.20 (harmful), 0, 0, 0 (inert); 3 trials per case and condition.
A/A rows: all six inert.

Fixed design: every ablation and the full skill on all ``n`` cases (``7 n 3`` items), verdicts by
``evalkit.ablation.component_verdicts`` (sign-flip test per component, Holm at alpha 0.05).
Sequential design: rounds of 8 cases, the full skill and the undecided ablations only, each
component stopped by its Bonferroni-split (alpha / 6) betting confidence sequence, at most the
same ``n`` cases. Both designs hold the family-wise error at 0.05 (the A/A rows measure it).

Printed per n: mean work items of each design and their ratio, power (share of the three real
effects named correctly, averaged), and the family-wise false-verdict rate under A/A, each with
its Monte Carlo standard error.
"""

from __future__ import annotations

import argparse
import itertools
import math

import numpy as np
import pandas as pd

from evalkit.ablation import component_verdicts, simulate_allocation

EFFECTS = {"q": 0.25, "w": 0.20, "legacy": -0.20, "h": 0.0, "d": 0.0, "s": 0.0}
EXPECTED = {"q": "necessary", "w": "necessary", "legacy": "harmful"}
TRIALS, BATCH, ALPHA, THRESHOLD = 3, 8, 0.05, 0.05


def _fixed_frame(rng: np.random.Generator, effects: dict[str, float], n: int) -> pd.DataFrame:
    p_full = 1 / (1 + np.exp(-rng.normal(math.log(0.6 / 0.4), 1.0, n)))
    arms = {"full": p_full} | {c: np.clip(p_full - e, 0.01, 0.99) for c, e in effects.items()}
    rows = []
    for condition, p in arms.items():
        bits = rng.random((n, TRIALS)) < p[:, None]
        for i, t in itertools.product(range(n), range(TRIALS)):
            rows.append((f"c{i:03d}", condition, t, bool(bits[i, t])))
    return pd.DataFrame(rows, columns=["case_id", "condition", "trial", "passed"])


def _fixed(effects: dict[str, float], n: int, sims: int, seed: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    power: list[bool] = []
    false = 0
    for sim in range(sims):
        table = component_verdicts(
            _fixed_frame(rng, effects, n), "full", {c: c for c in effects}, alpha=ALPHA,
            n_resamples=200, seed=sim, with_mde=False,
        ).set_index("component")["verdict"]
        power += [table[c] == v for c, v in EXPECTED.items() if effects[c]]
        false += any(
            table[c] != "no detectable effect" and not (c in EXPECTED and effects[c])
            for c in effects
        )
    items = n * TRIALS * (len(effects) + 1)
    return float(items), float(np.mean(power)) if power else math.nan, false / sims


def _sequential(
    effects: dict[str, float], n: int, sims: int, seed: int
) -> tuple[float, float, float]:
    items: list[int] = []
    power: list[bool] = []
    false = 0
    for sim in range(sims):
        looks, used = simulate_allocation(
            effects, n_cases=n, trials=TRIALS, batch=BATCH, alpha=ALPHA, threshold=THRESHOLD,
            seed=seed * 100_000 + sim,
        )
        verdict = {look.component: look.verdict for look in looks}
        items.append(used)
        power += [verdict[c] == v for c, v in EXPECTED.items() if effects[c]]
        false += any(
            verdict[c] in ("necessary", "harmful") and not (c in EXPECTED and effects[c])
            for c in effects
        )
    return float(np.mean(items)), float(np.mean(power)) if power else math.nan, false / sims


def main() -> None:
    """Print the table quoted in BENCHMARKS.md."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sims", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    aa = dict.fromkeys(EFFECTS, 0.0)
    se = math.sqrt(ALPHA * (1 - ALPHA) / args.sims)
    print(f"sims {args.sims}; MC se of a 5 % rate {se:.3f}")
    print("| n | fixed items | sequential items | ratio | fixed power | sequential power "
          "| fixed A/A FWER | sequential A/A FWER |")
    print("|---|---|---|---|---|---|---|---|")
    for n in (60, 120):
        f_items, f_power, _ = _fixed(EFFECTS, n, args.sims, args.seed)
        s_items, s_power, _ = _sequential(EFFECTS, n, args.sims, args.seed)
        _, _, f_aa = _fixed(aa, n, args.sims, args.seed + 1)
        s_aa_items, _, s_aa = _sequential(aa, n, args.sims, args.seed + 1)
        print(
            f"| {n} | {f_items:.0f} | {s_items:.0f} | {s_items / f_items:.2f} | {f_power:.2f} "
            f"| {s_power:.2f} | {f_aa:.3f} | {s_aa:.3f} (items {s_aa_items:.0f}) |"
        )


if __name__ == "__main__":
    main()
