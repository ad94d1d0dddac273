"""``evalkit confirm``: the targeted follow-up of a comparison's screen of cases."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from evalkit._bidi import neutralize_controls
from evalkit._settings import ALPHA, CONCURRENCY, POWER, SEED, THRESHOLD
from evalkit.cli._common import (
    BACKENDS,
    add_common_options,
    add_provider_options,
    eprint,
    print_json,
    provider_settings,
    split_csv,
)
from evalkit.errors import ConfigError

if TYPE_CHECKING:
    from evalkit.analysis import CasePlan
    from evalkit.sequential import ConfirmResult


def configure(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit confirm``."""
    p.add_argument("baseline", help="baseline run (directory or id)")
    p.add_argument("candidate", nargs="?", help="candidate run; omit with --conditions A,B")
    p.add_argument(
        "--suite", required=True,
        help="the suite the runs ran (its cases, checks and judge; never read from run data)",
    )  # fmt: skip
    p.add_argument(
        "--conditions",
        help="A,B: confirm two conditions of one run; between two runs, the one condition "
        "compared (default: the one both runs hold)",
    )
    p.add_argument(
        "--case", action="append",
        help="confirm this case instead of the ones the screen flags (repeatable)",
    )  # fmt: skip
    p.add_argument(
        "--budget", type=int, metavar="ITEMS",
        help="run at most ITEMS items; the weakest-screened cases are dropped first",
    )  # fmt: skip
    p.add_argument(
        "--max-trials", type=int, default=None, metavar="N",
        help="cap on the trials per side of one case (default 40)",
    )  # fmt: skip
    POWER.add_argument(p, default=None, what="power each case is planned for")
    p.add_argument(
        "--allocate-trials", action=argparse.BooleanOptionalAction, default=True,
        help="spread the plan's items over the cases by their pilot spread (Neyman "
        "allocation: a case whose screened pairs never differed gets the floor's share; "
        "the default); --no-allocate-trials: each case at the trials of its own power plan",
    )  # fmt: skip
    ALPHA.add_argument(p)
    THRESHOLD.add_argument(p)
    add_provider_options(
        p, "provider to run (default: the runs' own, if it is a registered provider name)"
    )
    SEED.add_argument(p, default=None, help="seed of the new trials (default: a fresh one)")
    CONCURRENCY.add_argument(p)
    p.add_argument("--backend", default="loky", choices=BACKENDS, help="joblib backend")
    p.add_argument("--run-id", help="id of the confirmation run (default: timestamp)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--dry-run", action="store_true", help="print the plan and its price; run nothing"
    )
    p.add_argument(
        "--yes", action="store_true",
        help="spend without asking (needed when stdin is not a terminal)",
    )  # fmt: skip
    add_common_options(p, confirm_main, runs_dir_help="where runs are read and written")


def confirm_main(args: argparse.Namespace) -> int:
    """Plan, price, ask (unless ``--yes``), run, and print the confirmatory verdicts."""
    from evalkit.runner import RunConfig
    from evalkit.sequential import ConfirmConfig, confirm

    if args.dry_run and args.yes:
        raise ConfigError("--dry-run and --yes: pick one (--dry-run runs nothing)")
    options = ConfirmConfig(
        conditions=split_csv(args.conditions) or None,
        case_ids=tuple(args.case or ()),
        budget=args.budget,
        alpha=args.alpha,
        threshold=args.threshold,
        dry_run=args.dry_run,
        allocate_trials=args.allocate_trials,
        **{k: v for k, v in (("max_trials", args.max_trials), ("power", args.power))
           if v is not None},
    )  # fmt: skip
    settings = provider_settings(args)
    run_config = RunConfig(
        provider=settings["provider"],
        provider_options=settings["provider_options"],
        seed=args.seed,
        backend=args.backend,
        runs_dir=args.runs_dir,
        run_id=args.run_id,
        progress=not args.no_progress,
        command_line=shlex.join(["evalkit", *sys.argv[1:]]),
        concurrency=args.concurrency,
    )
    out = sys.stderr if args.json else sys.stdout
    shown: list[bool] = []
    result = confirm(
        args.baseline, args.candidate, args.suite, run_config, options,
        approve=_approval(args.yes, out, shown),
    )  # fmt: skip
    if not shown:  # a dry run, or nothing to confirm: the plan was not shown yet
        _print_plan(result, out)
    if args.json:
        print_json(result.to_dict())
    elif result.run_id is None:
        print("nothing run" + (" (--dry-run)" if args.dry_run else ""), file=out)
    else:
        _print_verdicts(result, out)
    return 0


def _approval(yes: bool, out: TextIO, shown: list[bool]) -> Callable[[ConfirmResult], bool]:
    def approve(result: ConfirmResult) -> bool:
        _print_plan(result, out)
        shown.append(True)
        if yes:
            return True
        if not sys.stdin.isatty():
            raise ConfigError(
                f"confirm would spend {result.plan.items:,} items: pass --yes to run them "
                "(or --dry-run to only print the plan)"
            )
        sys.stderr.write(f"run these {result.plan.items:,} items? [y/N] ")
        sys.stderr.flush()
        return sys.stdin.readline().strip().lower() in ("y", "yes")

    return approve


def _safe(text: object) -> str:
    return neutralize_controls(str(text))


def _pp(value: float) -> str:
    return f"{value * 100:+.1f} pp"


def _print_plan(result: ConfirmResult, out: TextIO) -> None:
    plan = result.plan
    screen = result.screen
    said = ", ".join(
        f"{_safe(c.case_id)} ({_pp(c.estimate)}, p {c.p_value:.3g})" for c in screen
    ) or "none"
    named = any(c.named for c in screen)
    kind = "named" if named else "flagged by the screen (Benjamini-Hochberg"
    kind += "" if named else f" at {plan.alpha:g})"
    print(f"screen {_safe(result.baseline)} vs {_safe(result.candidate)}: cases {kind}: "
          f"{said}", file=out)  # fmt: skip
    if plan.cases:
        print(
            f"plan: rerun {len(plan.cases)} case(s) with fresh trials (seed {result.seed}, "
            f"provider {_safe(result.provider)}), each side with its run's stored skill texts; "
            f"verdicts on the new trials alone, Holm at {plan.alpha:g} over these cases:",
            file=out,
        )
        if plan.allocation is not None:
            print(f"trials spread by {plan.allocation}: each case's share of the "
                  f"{plan.items // 2:,} trials per side from its screened pairs", file=out)
        for case in plan.cases:
            print(
                f"  {_safe(case.case_id)}: {case.trials} trials per side (planned at "
                f"{case.baseline_rate:.0%} -> {case.candidate_rate:.0%}: power "
                f"{case.power:.0%}){_share(case)}",
                file=out,
            )
        print(f"price: {plan.price.text()}", file=out)
    for note in result.notes:
        print(f"note: {_safe(note)}", file=out)


def _share(case: CasePlan) -> str:
    """A case's allocation: its share and the pilot pairs it came from (empty: none)."""
    if case.share is None:
        return ""
    return (f"; share {case.share:.1%}, {case.pilot_differed} of {case.pilot_pairs} "
            "screened pairs differed")


def _print_verdicts(result: ConfirmResult, out: TextIO) -> None:
    print(
        f"confirmed on {result.items:,} new items (run {_safe(result.run_id)}), Holm over "
        f"{len(result.cases)} case(s):",
        file=out,
    )
    for row in result.cases.to_dict("records"):
        print(
            f"  {row['verdict']:<12} {_safe(row['case_id'])}  {_pp(float(row['estimate']))} "
            f"[{_pp(float(row['ci_low']))}, {_pp(float(row['ci_high']))}]  p (Holm) "
            f"{float(row['p_adjusted']):.3g}  ({row['n_baseline']} vs {row['n_candidate']} "
            "trials)",
            file=out,
        )
    for verdict in ("regressed", "improved"):
        ids = [_safe(c["case_id"]) for c in result.named(verdict)]
        print(f"{verdict} cases: {', '.join(ids) or 'none'}", file=out)
    if result.run_dir is not None:
        eprint(f"confirmation run written to {result.run_dir}")
