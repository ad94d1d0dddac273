"""``evalkit compare ... --pairwise``: blind, position-swapped pairwise verdicts."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

from evalkit._settings import CONCURRENCY, N_RESAMPLES
from evalkit.cli._common import parse_key_values, printed_json, split_csv
from evalkit.cli._judge import add_judge_flags, add_suite_flag
from evalkit.errors import ConfigError

if TYPE_CHECKING:
    from evalkit.judge import PairwiseComparison


def add_pairwise_options(p: argparse.ArgumentParser) -> None:
    """``--pairwise`` and its options (the judge flags, ``--rubric``, ``--transcripts``)."""
    p.add_argument(
        "--pairwise",
        action="store_true",
        help="blind pairwise verdict: a judge picks the better answer of each pair (or a tie), "
        "in both orders; --conditions A,B,C... ranks more than two with Bradley-Terry",
    )
    p.add_argument("--rubric", help="with --pairwise: file saying what 'better' means "
                   "(default: suite.yaml 'pairwise: rubric:')")
    p.add_argument("--transcripts", action="store_true",
                   help="with --pairwise: show the judge each answer's transcript excerpt too")
    p.add_argument("--no-cache", action="store_true",
                   help="with --pairwise: ignore cached pairwise verdicts")
    CONCURRENCY.add_argument(p, when="with --pairwise: ")
    add_judge_flags(p)
    add_suite_flag(p, when="with --pairwise: ")


def _pct(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.1%}"


def pairwise_main(args: argparse.Namespace) -> int:
    """Judge the pairs, print the verdict (or the JSON object)."""
    from evalkit.judge import compare_pairwise

    conditions = split_csv(args.conditions) or None
    if args.sequential:
        raise ConfigError("--pairwise and --sequential cannot be combined")
    result = compare_pairwise(
        args.baseline,
        args.candidate,
        conditions=conditions,
        runs_dir=args.runs_dir,
        rubric=args.rubric,
        provider=args.judge_provider,
        model=args.judge_model,
        options=parse_key_values(args.judge_opt, "--judge-opt"),
        suite=args.suite,
        transcripts=True if args.transcripts else None,
        use_cache=not args.no_cache,
        concurrency=args.concurrency,
        threshold=args.threshold,
        n_resamples=min(args.resamples, N_RESAMPLES.default),
        seed=args.seed,
    )
    if not printed_json(args, result):
        print_pairwise(result)
    return 1 if args.fail_on_regression and result.verdict == "regressed" else 0


def print_pairwise(result: PairwiseComparison) -> None:
    """The verdict, the win probability, position bias and consistency, and the notes."""
    s = result.stats
    w = s.win_probability
    print(f"pairwise verdict: {s.verdict}  P({result.candidate} beats {result.baseline} on a "
          f"random case) = {_pct(w.estimate)} [{_pct(w.ci_low)}, {_pct(w.ci_high)}] over "
          f"{s.n_cases} cases, {s.n_pairs} pairs")
    print(f"pairs: candidate wins {s.wins}, losses {s.losses}, ties {s.ties} "
          f"({s.flipped} flipped with the order); sign test over cases: "
          f"{s.sign_test.positive} up, {s.sign_test.negative} down, p = {s.sign_test.p_value:.3g}")
    b = s.position_bias
    print(f"judge position bias: {_pct(b.estimate)} of decisive judgements go to the first "
          f"answer [{_pct(b.ci_low)}, {_pct(b.ci_high)}]; position consistency "
          f"{_pct(s.position_consistency)}")
    for label, cases in (("regressed", s.regressed_cases), ("improved", s.improved_cases)):
        print(f"{label} cases: {', '.join(cases) if cases else 'none'}")
    if result.bradley_terry is not None:
        print("Bradley-Terry ranking (log-odds against "
              f"{result.bradley_terry.reference}, {result.bradley_terry.confidence:.0%} CI):")
        for row in result.bradley_terry.strengths.to_dict("records"):
            ci = "" if not math.isfinite(row["ci_low"]) else (
                f" [{row['ci_low']:+.2f}, {row['ci_high']:+.2f}]"
            )
            print(f"  {row['rank']}. {row['variant']}: {row['strength']:+.2f}{ci}")
    u = result.usage
    print(f"judge {result.judge['provider']}/{result.judge['model']}: {u['calls']} calls, "
          f"{u['cache_hits']} from cache, cost ${u['cost_usd']:.4f}")
    cal = result.calibration
    flag = "" if cal["status"] == "calibrated" else f"judge {cal['status'].upper()}: "
    print(f"{flag}{cal['message']}")
    if cal.get("fix"):
        print(f"  fix: {cal['fix']}")
    for note in [*s.notes, *result.notes]:
        print(f"note: {note}")
    if result.path is not None:
        print(f"pairs stored in {result.path}")

