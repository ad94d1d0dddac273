"""A/A false-verdict rates of ``compare`` between two runs with four conditions.

Usage::

    .venv/bin/python scripts/simulate_condition_verdicts.py [--sims 200] [--cases 30]

Both runs draw every (case, condition) from the same pass probability: a case difficulty from
Beta(2, 2), moved per condition by N(0, 0.1) noise, with 3 trials. Any verdict other than
*inconclusive* is false. Prints the share of false per-condition verdicts, of simulations in
which some condition got one, and of false pooled (stratified-by-case) verdicts; the figures
in ``docs/statistics.md`` come from the defaults.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from evalkit.stats import CompareOptions, compare_tables

CONDITIONS = ("none", "self-load", "preloaded", "stale")


def _rows(rates: dict[str, np.ndarray], run_id: str, seed: int, trials: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [
        {
            "run_id": run_id,
            "case_id": f"c{i:03d}",
            "condition": condition,
            "trial": t,
            "passed": bool(rng.random() < p),
        }
        for condition, per_case in rates.items()
        for i, p in enumerate(per_case)
        for t in range(trials)
    ]
    return pd.DataFrame(rows)


def main() -> None:
    """Run the simulations and print the three rates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    per_condition = some_condition = pooled = 0
    for sim in range(args.sims):
        difficulty = rng.beta(2, 2, args.cases)
        rates = {
            c: np.clip(difficulty + rng.normal(0, 0.1, args.cases), 0, 1) for c in CONDITIONS
        }
        result = compare_tables(
            _rows(rates, "a", 10_000 + sim, args.trials),
            _rows(rates, "b", 20_000 + sim, args.trials),
            options=CompareOptions(n_resamples=args.resamples),
        )
        false = [part.verdict != "inconclusive" for _, part in result.by_condition]
        per_condition += sum(false)
        some_condition += any(false)
        pooled += result.verdict != "inconclusive"
    print(f"{args.sims} A/A simulations, {args.cases} cases, {len(CONDITIONS)} conditions, "
          f"{args.trials} trials")
    print(f"false per-condition verdicts: {per_condition / (len(CONDITIONS) * args.sims):.1%}")
    print(f"simulations with some false condition verdict: {some_condition / args.sims:.1%}")
    print(f"false pooled verdicts: {pooled / args.sims:.1%}")


if __name__ == "__main__":
    main()
