"""``evalkit gate``: exit 0 released, 1 blocked, 2 bad input."""

from __future__ import annotations

import argparse

from evalkit.analysis import gate
from evalkit.cli._common import add_json_flag, eprint, print_json


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``evalkit gate``."""
    p = sub.add_parser("gate", help="CI gate: block a candidate that regresses")
    p.add_argument("--baseline", required=True, help="baseline run (directory or id)")
    p.add_argument("--candidate", required=True, help="candidate run (directory or id)")
    p.add_argument("--policy", help="gate policy YAML (metric, threshold, tiers, budgets)")
    p.add_argument("--tier", help="tier to gate on (e.g. smoke, release)")
    p.add_argument("--ledger", help="JSONL file each decision is appended to")
    p.add_argument("--runs-dir", default="runs")
    add_json_flag(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Gate and print the decision."""
    result = gate(
        args.baseline,
        args.candidate,
        policy=args.policy,
        tier=args.tier,
        ledger=args.ledger,
        runs_dir=args.runs_dir,
    )
    if args.json:
        print_json(result.to_dict())
    else:
        print(result.message)
        if not result.released:
            eprint("gate blocked the candidate")
    return 0 if result.released else 1
