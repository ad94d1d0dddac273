"""``evalkit judge sample/calibrate RUN --pairwise``: the pairwise judge's labels and kappa."""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from evalkit.cli._common import parse_key_values, print_json, printed_json

if TYPE_CHECKING:
    from evalkit.judge import LabelSample, PairSample


def print_sample(args: argparse.Namespace, sample: LabelSample | PairSample, header: str,
                 strata: Iterable[str], written: str) -> int:
    """Print a label sample of either judge: its JSON object, or what it drew and where to.

    Args:
        args: The command's arguments (``--json``).
        sample: The sample.
        header: What was sampled.
        strata: A line per stratum (not drawn with ``--json``).
        written: Where the labelling sheet is and what to do with it.

    Returns:
        The exit code, 0.
    """
    if printed_json(args, sample):
        return 0
    print(header)
    for line in strata:
        print(f"  {line}")
    print(written)
    return 0


def sample_main(args: argparse.Namespace) -> int:
    """``evalkit judge sample RUN --pairwise -n 50 -o pairs.csv``."""
    from evalkit.judge import sample_pairs

    result = sample_pairs(args.calibrate_run, n=args.sample_size, seed=args.seed,
                          output=args.output, runs_dir=args.runs_dir)
    return print_sample(
        args, result,
        f"sampled {result.n} of {result.population} judged pairs of run '{result.run_id}' "
        f"(seed {result.seed}), by the judge's outcome:",
        (f"judge {s['judge_outcome']:<6} {s['sampled']:>4} of {s['population']}"
         for s in result.strata),
        f"blind labelling sheet written to {result.path}: for each row write 1 or 2 (the "
        "better response) or tie in 'label' (variants and the judge's verdicts are left out "
        f"on purpose); then 'evalkit judge calibrate {args.calibrate_run} --labels "
        f"{result.path} --pairwise'",
    )


def calibrate_main(args: argparse.Namespace) -> int:
    """``evalkit judge calibrate RUN --labels pairs.csv --pairwise`` (then the probe)."""
    from evalkit.judge import calibrate_pairwise, probe_pairwise

    result = calibrate_pairwise(args.calibrate_run, args.labels, runs_dir=args.runs_dir,
                                confidence=args.confidence)
    probe = None
    if not args.no_probe:
        probe = probe_pairwise(
            args.calibrate_run, args.labels, runs_dir=args.runs_dir,
            provider=args.judge_provider, model=args.judge_model,
            options=parse_key_values(args.judge_opt, "--judge-opt"), suite=args.suite,
            use_cache=not args.no_cache, concurrency=args.concurrency, retries=args.retries,
            confidence=args.confidence,
        )
    if args.json:
        print_json({**result.to_dict(), "probe": None if probe is None else probe.to_dict()})
        return 0
    k = result.kappa
    bounds = "" if not math.isfinite(k.ci_low) else f" [{k.ci_low:.3f}, {k.ci_high:.3f}]"
    estimate = "undefined" if not math.isfinite(k.estimate) else f"{k.estimate:.3f}"
    print(f"pairwise judge {result.judge['provider']}/{result.judge['model']} on run "
          f"'{result.run_id}': {result.n} labelled pairs"
          + (f", {result.unmatched} labels without a judged pair" if result.unmatched else ""))
    print(f"Cohen's kappa over better/worse/tie {estimate}{bounds} ({k.confidence:.0%}); raw "
          f"agreement {result.agreement:.1%}; position consistency "
          f"{result.position_consistency:.1%}")
    if k.note:
        print(f"note: {k.note}")
    print(f"disagreements: {len(result.disagreements)}")
    if probe is None:
        print("robustness probe skipped (--no-probe): the judge cannot decide a gate until it "
              "is probed")
    else:
        print(probe.text())
        left = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in probe.left_out.items() if v)
        if left:
            print(f"  labelled pairs not probed: {left}")
        for what, pairs in (("followed", probe.followed_pairs), ("swayed", probe.swayed_pairs)):
            for pair in pairs[:3]:
                print(f"  {what}: case {pair['case_id']} trial {pair['trial']}: "
                      f"{pair['reason_baseline_first']}")
        print(f"  judge calls {int(probe.usage['calls'])}, from cache "
              f"{int(probe.usage['cache_hits'])}, cost ${probe.usage['cost_usd']:.4f}")
    print(f"report written to {result.path}")
    return 0
