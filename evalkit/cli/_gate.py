"""``evalkit gate``: exit 0 released, 1 blocked, 2 bad input."""

from __future__ import annotations

import argparse

from evalkit.analysis import gate
from evalkit.cli._common import (
    add_common_options,
    add_provider_filter,
    eprint,
    pick,
    printed_json,
)


def configure(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit gate``."""
    p.add_argument("--baseline", required=True, help="baseline run (directory or id)")
    p.add_argument("--candidate", required=True, help="candidate run (directory or id)")
    p.add_argument("--policy", help="gate policy YAML (metric, threshold, tiers, budgets)")
    p.add_argument("--tier", help="tier to gate on (e.g. smoke, release)")
    p.add_argument("--ledger", help="JSONL file each decision is appended to")
    add_provider_filter(p)
    p.add_argument("--pairwise", action="store_true",
                   help="gate on the stored compare --pairwise verdict (blocks when regressed "
                   "or when the pairwise judge is not calibrated)")
    p.add_argument("--allow-uncalibrated-judge", action="store_true",
                   help="with --pairwise: release despite an uncalibrated pairwise judge")
    add_common_options(p, main)


def main(args: argparse.Namespace) -> int:
    """Gate and print the decision."""
    if args.pairwise:
        return _pairwise(args)
    result = gate(
        args.baseline,
        args.candidate,
        **pick(args, "policy", "tier", "ledger", "runs_dir", "providers"),
    )
    if not printed_json(args, result):
        print(result.message)
        if result.policy:
            print(result.policy)
        if result.next_step is not None:
            from evalkit.analysis import NextStep

            print(NextStep(**result.next_step).text())
        if not result.released:
            eprint("gate blocked the candidate")
    return 0 if result.released else 1


def _pairwise(args: argparse.Namespace) -> int:
    from evalkit.analysis import pairwise_gate

    result = pairwise_gate(args.baseline, args.candidate, runs_dir=args.runs_dir,
                           allow_uncalibrated_judge=args.allow_uncalibrated_judge)
    if not printed_json(args, result):
        print(result.message)
        if not result.released:
            eprint("gate blocked the candidate")
    return 0 if result.released else 1
