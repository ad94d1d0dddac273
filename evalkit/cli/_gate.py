"""``evalkit gate``: exit 0 released, 1 blocked, 2 bad input."""

from __future__ import annotations

import argparse

from evalkit.analysis import gate
from evalkit.cli._common import (
    add_common_options,
    add_provider_filter,
    eprint,
    pick,
    print_json,
)


def configure(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit gate``."""
    p.add_argument("--baseline", required=True, help="baseline run (directory or id)")
    p.add_argument("--candidate", required=True, help="candidate run (directory or id)")
    p.add_argument("--policy", help="gate policy YAML (metric, threshold, tiers, budgets)")
    p.add_argument("--tier", help="tier to gate on (e.g. smoke, release)")
    p.add_argument("--ledger", help="JSONL file each decision is appended to")
    add_provider_filter(p)
    add_common_options(p, main)


def main(args: argparse.Namespace) -> int:
    """Gate and print the decision."""
    result = gate(
        args.baseline,
        args.candidate,
        **pick(args, "policy", "tier", "ledger", "runs_dir", "providers"),
    )
    if args.json:
        print_json(result.to_dict())
    else:
        print(result.message)
        if not result.released:
            eprint("gate blocked the candidate")
    return 0 if result.released else 1
