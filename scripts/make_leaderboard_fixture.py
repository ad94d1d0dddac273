"""Write a synthetic result table shaped like a skills benchmark's leaderboard.

Many model-harness configurations (providers) answer the same cases, with and without a
skill, several trials each. A case's difficulty is shared by every provider (a hard task is
hard for all of them), and so is part of the skill's effect on it; each provider also has its
own ability and its own lift. In the logit scale::

    logit P(pass) = ability[p] - difficulty[c] + skill * (lift[p] + case_lift[c])

with ``difficulty ~ N(0, case_sd)``, ``case_lift ~ N(0, case_lift_sd)``, ``ability ~
N(0, provider_sd)`` and ``lift ~ N(mean_lift, lift_sd)`` (``mean_lift = lift_sd = 0`` is an
A/A table: the two conditions are the same agent).

Usage::

    python scripts/make_leaderboard_fixture.py OUT.csv [--providers 18] [--cases 87]
        [--trials 3] [--seed 0] [--mean-lift 0.6] [--lift-sd 0.3]

The CSV has the columns ``case_id, condition, provider, trial, passed`` and imports with
``evalkit import OUT.csv --format csv --run-id leaderboard``. Tests import
:func:`leaderboard` from this file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

CONDITIONS = ("no-skills", "with-skills")


def leaderboard(
    *,
    providers: int = 18,
    cases: int = 87,
    trials: int = 3,
    seed: int = 0,
    mean_lift: float = 0.6,
    lift_sd: float = 0.3,
    case_sd: float = 1.5,
    case_lift_sd: float = 0.5,
    provider_sd: float = 0.7,
    provider_seed: int | None = None,
) -> pd.DataFrame:
    """One leaderboard-shaped result table (tidy, one row per trial).

    Args:
        providers: Model-harness configurations.
        cases: Cases (tasks), shared by every provider.
        trials: Trials per (case, condition, provider).
        seed: Seed of ``np.random.default_rng``.
        mean_lift: Mean skill effect across providers (logit scale).
        lift_sd: Spread of the skill effect between providers (logit scale).
        case_sd: Spread of case difficulty (logit scale), shared by every provider.
        case_lift_sd: Spread of the skill effect between cases, shared by every provider.
        provider_sd: Spread of provider ability (logit scale).
        provider_seed: Draw the providers (ability, lift) from this seed instead of ``seed``,
            so that simulations can keep the same providers and draw new cases.

    Returns:
        Columns ``case_id, condition, provider, trial, passed`` (conditions
        ``no-skills`` and ``with-skills``) and, for checking, ``p_true``.
    """
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, case_sd, cases)
    case_lift = rng.normal(0.0, case_lift_sd, cases)
    ability, lift = provider_effects(
        rng if provider_seed is None else np.random.default_rng(provider_seed),
        providers, mean_lift, lift_sd, provider_sd,
    )
    c, p, s, t = np.meshgrid(
        np.arange(cases), np.arange(providers), np.arange(2), np.arange(trials), indexing="ij"
    )
    c, p, s, t = c.ravel(), p.ravel(), s.ravel(), t.ravel()
    logit = ability[p] - difficulty[c] + s * (lift[p] + case_lift[c])
    chance = 1.0 / (1.0 + np.exp(-logit))
    passed = rng.random(len(chance)) < chance
    width = len(str(providers - 1))
    return pd.DataFrame(
        {
            "case_id": np.asarray([f"task-{i:03d}" for i in range(cases)])[c],
            "condition": np.asarray(CONDITIONS)[s],
            "provider": np.asarray([f"model-{j:0{width}d}" for j in range(providers)])[p],
            "trial": t,
            "passed": passed,
            "p_true": chance,
        }
    )


def provider_effects(
    rng: np.random.Generator, providers: int, mean_lift: float, lift_sd: float,
    provider_sd: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Each provider's ability and lift (logit scale)."""
    ability = rng.normal(0.0, provider_sd, providers)
    lift = rng.normal(mean_lift, lift_sd, providers) if lift_sd > 0 else np.full(
        providers, mean_lift
    )
    return ability, lift


def population_effect(
    *,
    providers: int,
    provider_seed: int,
    mean_lift: float = 0.6,
    lift_sd: float = 0.3,
    case_sd: float = 1.5,
    case_lift_sd: float = 0.5,
    provider_sd: float = 0.7,
    draws: int = 400_000,
    seed: int = 12345,
) -> float:
    """The pooled effect a leaderboard of these providers estimates, over the case population.

    The mean over the providers of ``P(pass | skill) - P(pass | no skill)``, averaged over
    ``draws`` cases drawn from the case distribution (Monte Carlo error about 0.0004).
    """
    ability, lift = provider_effects(
        np.random.default_rng(provider_seed), providers, mean_lift, lift_sd, provider_sd
    )
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, case_sd, (draws, 1))
    case_lift = rng.normal(0.0, case_lift_sd, (draws, 1))
    base = ability[None, :] - difficulty
    with_skill = 1.0 / (1.0 + np.exp(-(base + lift[None, :] + case_lift)))
    without = 1.0 / (1.0 + np.exp(-base))
    return float(np.mean(with_skill - without))


def main(argv: list[str] | None = None) -> int:
    """Write the table to a CSV (the ``p_true`` column is left out)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--providers", type=int, default=18)
    parser.add_argument("--cases", type=int, default=87)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mean-lift", type=float, default=0.6)
    parser.add_argument("--lift-sd", type=float, default=0.3)
    args = parser.parse_args(argv)
    table = leaderboard(
        providers=args.providers,
        cases=args.cases,
        trials=args.trials,
        seed=args.seed,
        mean_lift=args.mean_lift,
        lift_sd=args.lift_sd,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.drop(columns="p_true").to_csv(args.out, index=False)
    print(f"{args.out}: {len(table)} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
