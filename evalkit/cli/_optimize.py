"""``evalkit optimize``: hill-climb a skill against a validation gate."""

from __future__ import annotations

import argparse
import math
from collections import Counter
from pathlib import Path

from evalkit._paths import safe_run_id
from evalkit._settings import ALPHA, SEED, THRESHOLD
from evalkit.cli._common import (
    add_common_options,
    add_execution_options,
    add_provider_options,
    eprint,
    execution_settings,
    parse_key_values,
    pick,
    printed_json,
    provider_settings,
    split_csv,
)
from evalkit.cli._flags import settings_of_flags
from evalkit.cli._sandbox import add_sandbox_flag
from evalkit.errors import ConfigError
from evalkit.optimize import (
    SEED_ID,
    OptimizeConfig,
    SealError,
    TamperError,
    TriggerRates,
    optimize,
)
from evalkit.runner import RunConfig
from evalkit.sandbox import disable_sandbox


def configure(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit optimize``."""
    p.add_argument("suite", help="suite directory")
    p.add_argument(
        "--skill",
        required=True,
        metavar="NAME[=PATH]",
        help="skill to optimise, optionally with a starting text (or description) file",
    )
    p.add_argument(
        "--target",
        choices=("text", "description"),
        default="text",
        help="optimise the skill text (gate: pass rate) or its one-line trigger description "
        "(gate: trigger F1 under self-load); default text",
    )
    p.add_argument(
        "--optimizer",
        required=True,
        help="command:CMD | python:module:function | provider:claude_code | NAME[:ARG] of "
        "an optimizer an installed package registers (evalkit.optimizers entry points)",
    )
    p.add_argument(
        "--optimizer-opt",
        action="append",
        metavar="KEY=VALUE",
        help="setting of the optimizer (repeatable): a provider: optimizer's provider "
        "settings; for command: read=PATH[,PATH] (more paths it may read), network=true, "
        "timeout_s=S",
    )
    p.add_argument(
        "--condition",
        help="condition evaluated (default preloaded; self-load with --target description)",
    )
    p.add_argument("--trials", type=int, default=3)
    add_provider_options(p, "provider of the evaluated agent")
    p.add_argument("--max-iterations", type=int, default=10)
    p.add_argument("--stall", type=int, default=5, help="stop after N consecutive rejects")
    p.add_argument("--max-metric-calls", type=int, help="work items to spend at most")
    p.add_argument("--max-usd", type=float, help="money to spend at most")
    p.add_argument("--parallel", type=int, default=1, help="siblings per round (breadth-first)")
    THRESHOLD.add_argument(p)
    ALPHA.add_argument(p, when="family-wise over the run's candidates: ")
    p.add_argument(
        "--derive-splits",
        metavar="DEV,HOLDOUT,TEST",
        help="derive splits from a seeded hash, e.g. 0.6,0.2,0.2",
    )
    p.add_argument("--split-seed", type=int, default=0)
    SEED.add_argument(p)
    add_execution_options(p)
    add_sandbox_flag(p)  # also runs the command: optimizer unconfined
    add_common_options(p, main, runs_dir_help=None)


def main(args: argparse.Namespace) -> int:
    """Run the optimisation; exit 1 on an honesty violation."""
    if args.no_sandbox:
        disable_sandbox()
    name, _, path = args.skill.partition("=")
    derive = None
    if args.derive_splits:
        try:
            shares = tuple(float(x) for x in split_csv(args.derive_splits))
        except ValueError:
            raise ConfigError("--derive-splits expects three numbers, e.g. 0.6,0.2,0.2") from None
        if len(shares) != 3:
            raise ConfigError("--derive-splits expects three numbers, e.g. 0.6,0.2,0.2")
        derive = (shares[0], shares[1], shares[2])
    if args.run_id is not None:
        safe_run_id(args.run_id)  # a clear error naming the fix, before the settings model's
    budgets = pick(args, "max_iterations", "stall", "max_metric_calls", "max_usd", "parallel")
    with settings_of_flags():
        config = OptimizeConfig(
            skill=name,
            seed_skill=Path(path) if path else None,
            optimizer_settings=parse_key_values(args.optimizer_opt, "--optimizer-opt"),
            derive_splits=derive,
            **pick(args, "optimizer", "target", "condition"),
            **pick(args, "threshold", "alpha", "split_seed", "seed"),
            **budgets,
            run=RunConfig(
                trials=args.trials, **provider_settings(args), **execution_settings(args)
            ),
        )
    try:
        result = optimize(args.suite, config)
    except (TamperError, SealError) as exc:
        eprint(f"error: {exc}")
        return 1
    if printed_json(args, result):
        return 0
    s = result.state
    print(
        f"optimisation {s.run_id}: {s.iterations} candidates, "
        f"{len(result.accepted)} accepted ({', '.join(result.accepted) or 'none'}); "
        f"champion {result.champion}; {s.metric_calls} work items, ${s.usd:.2f}; "
        f"{s.holdout_looks} validation looks"
    )
    test = s.test
    if test and s.target == "description":
        print(
            f"sealed test (evaluated once): trigger F1 champion {_pct(test.champion_rate)} vs "
            f"seed {_pct(test.seed_rate)}, delta {_pp(test.delta)} pp "
            f"[{_pp(test.ci_low)}, {_pp(test.ci_high)}] -> {test.verdict}"
        )
        for label, rates in (("seed", test.seed_trigger), ("champion", test.champion_trigger)):
            if rates is not None:
                print(f"  {label}: {_trigger(rates)}")
    elif test:
        print(
            f"sealed test (evaluated once): champion {_pct(test.champion_rate)} vs seed "
            f"{_pct(test.seed_rate)}, delta {_pp(test.delta)} pp "
            f"[{_pp(test.ci_low)}, {_pp(test.ci_high)}] -> {test.verdict}"
        )
    if test and test.champion == SEED_ID:
        print("  the champion is the seed (no candidate was accepted): it is compared with "
              "itself, so there is no difference to report")
    failed = [d for d in s.history if d.reason.startswith("failed proposal")]
    if s.history and len(failed) == len(s.history):
        reasons = Counter(d.reason.removeprefix("failed proposal: ") for d in failed)
        said = "; ".join(f"{reason} ({n} of {len(failed)})" for reason, n in
                         reasons.most_common(3))
        eprint(f"error: every proposal failed, so no candidate was evaluated: {said}. See the "
               f"optimizer's output in {result.run_dir}/events.jsonl")
        print(f"written to {result.run_dir}")
        return 1
    if failed:
        print(f"  {len(failed)} of {len(s.history)} proposals failed (their reasons are in "
              "the run's events and decisions)")
    print(f"written to {result.run_dir}")
    return 0


def _trigger(rates: TriggerRates) -> str:
    return (
        f"trigger precision {_pct(rates.precision)} "
        f"[{_pct(rates.precision_low)}, {_pct(rates.precision_high)}], "
        f"recall {_pct(rates.recall)} [{_pct(rates.recall_low)}, {_pct(rates.recall_high)}]"
    )


def _pct(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.1%}"


def _pp(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value * 100:+.1f}"
