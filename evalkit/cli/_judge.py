"""``evalkit judge``: re-grade a run, sample its verdicts for labelling, or calibrate its judge.

``evalkit judge RUN`` re-grades without rerunning the agent; ``evalkit judge sample RUN -n 50
-o labels.csv`` writes a stratified labelling template; ``evalkit judge calibrate RUN --labels
labels.csv`` compares the judge's verdicts with human labels.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit._settings import CONCURRENCY, CONFIDENCE, RETRIES, RUNS_DIR, SEED
from evalkit.cli._common import add_json_flag, parse_key_values, printed_json
from evalkit.cli._pairwise_labels import calibrate_main, print_sample, sample_main
from evalkit.errors import ConfigError

if TYPE_CHECKING:
    from evalkit.judge import Calibration


def add_judge_flags(p: argparse.ArgumentParser) -> None:
    """``--judge-provider``, ``--judge-model`` and ``--judge-opt`` (shared with ``run``)."""
    p.add_argument(
        "--judge-provider",
        help="judge of the expectations: simulated, anthropic, openai_compat, claude_code ... "
        "(default: the suite's judge)",
    )
    p.add_argument("--judge-model", help="judge model")
    p.add_argument(
        "--judge-opt", action="append", metavar="KEY=VALUE", help="judge setting (repeatable)"
    )


def add_suite_flag(p: argparse.ArgumentParser, when: str = "") -> None:
    """``--suite PATH``: the suite whose judge an analysis of a stored run may use."""
    p.add_argument(
        "--suite", metavar="PATH",
        help=f"{when}the suite whose judge: (and pairwise:) sections to use; a judge is taken "
        "only from this flag or the --judge-* flags, never from the run's own records "
        "(except the offline simulated judge)",
    )


def configure(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit judge`` (and ``judge sample``, ``judge calibrate``)."""
    p.add_argument(
        "run", help="run id (under --runs-dir) or run directory; or 'sample' / 'calibrate'"
    )
    p.add_argument(
        "calibrate_run", nargs="?", metavar="RUN", help="with 'sample' or 'calibrate': the run"
    )
    p.add_argument("-n", type=int, default=50, dest="sample_size",
                   help="sample: statements to draw (default 50)")
    p.add_argument("-o", "--output", help="sample: the labels CSV template to write")
    SEED.add_argument(p, when="sample: ")
    p.add_argument("--labels", help="calibrate: CSV of human labels (expectation, label, and "
                   "item_key or case_id/condition/trial)")
    CONFIDENCE.add_argument(p, when="calibrate: ")
    p.add_argument("--pairwise", action="store_true",
                   help="sample/calibrate: the pairwise judge of the run's stored "
                   "compare --pairwise comparisons (labels 1, 2 or tie)")
    p.add_argument("--no-probe", action="store_true",
                   help="calibrate --pairwise: skip the robustness probe (planted instructions "
                   "in the worse answers; the judge then cannot decide a gate)")
    add_judge_flags(p)
    add_suite_flag(p)
    RUNS_DIR.add_argument(p)
    p.add_argument("--run-id", help="id of the new run (default: RUN-judged-<time>)")
    CONCURRENCY.add_argument(p)
    RETRIES.add_argument(p)
    p.add_argument("--no-cache", action="store_true", help="ignore cached verdicts")
    add_json_flag(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Judge the run (or calibrate it); print a summary (or the JSON object)."""
    if args.run in ("sample", "calibrate"):
        return _labelling(args)
    if args.calibrate_run is not None or args.labels is not None or args.output is not None:
        raise ConfigError(
            "--labels and a second run go with 'evalkit judge calibrate RUN --labels FILE', "
            "-o with 'evalkit judge sample RUN -n 50 -o labels.csv'"
        )
    from evalkit.judge import judge_run  # scipy and pandas: only when a run is judged

    result = judge_run(
        args.run,
        runs_dir=args.runs_dir,
        provider=args.judge_provider,
        model=args.judge_model,
        options=parse_key_values(args.judge_opt, "--judge-opt"),
        suite=args.suite,
        run_id=args.run_id,
        use_cache=not args.no_cache,
        concurrency=args.concurrency,
        retries=args.retries,
        command_line=shlex.join(["evalkit", *sys.argv[1:]]),
    )
    if printed_json(args, result):
        return 0
    judge = result.judge
    print(
        f"judged {judge.items} items of run '{result.judged_from}' with {judge.provider}/"
        f"{judge.model}: {judge.statements_passed}/{judge.statements} statements passed, "
        f"{judge.errors} judge errors"
    )
    print(
        f"judge calls {judge.calls}, from cache {judge.cache_hits}, judge cost "
        f"${judge.cost_usd:.4f}; pass rate {result.pass_rate:.1%}"
    )
    print(f"run written to {result.run_dir}")
    return 0


def _labelling(args: argparse.Namespace) -> int:
    """``judge sample`` or ``judge calibrate``: its usage checked, then its pairwise form or not."""
    given, usage, pairwise, expectations = {
        "sample": (args.output, "sample RUN -n 50 -o labels.csv", sample_main, _sample),
        "calibrate": (args.labels, "calibrate RUN --labels labels.csv", calibrate_main, _calibrate),
    }[args.run]
    if args.calibrate_run is None or given is None:
        raise ConfigError(f"usage: evalkit judge {usage}")
    return pairwise(args) if args.pairwise else expectations(args)


def _sample(args: argparse.Namespace) -> int:
    from evalkit.judge import sample_labels

    result = sample_labels(
        args.calibrate_run,
        n=args.sample_size,
        seed=args.seed,
        output=args.output,
        runs_dir=args.runs_dir,
    )
    return print_sample(
        args, result,
        f"sampled {len(result.rows)} of {result.population} judged statements of run "
        f"'{result.run_id}' (seed {result.seed}), by condition and judge outcome:",
        (f"{s['condition']:<20} judge {s['judge_outcome']:<4}  {s['sampled']:>4} of "
         f"{s['population']}" for s in result.strata),
        f"labels template written to {result.path}: fill the 'label' column with pass or "
        "fail (the judge's verdicts are left out on purpose), or label it in the browser "
        f"with 'evalkit report {args.calibrate_run} --kind labels --labels {result.path}'; "
        f"then 'evalkit judge calibrate {args.calibrate_run} --labels {result.path}'",
    )


def _calibrate(args: argparse.Namespace) -> int:
    from evalkit.judge import calibrate

    result = calibrate(
        args.calibrate_run, args.labels, runs_dir=args.runs_dir, confidence=args.confidence
    )
    if printed_json(args, result):
        return 0
    _print_calibration(result)
    return 0


def _print_calibration(result: Calibration) -> None:
    judge, kappa, c = result.judge, result.kappa, result.confusion
    estimate = "undefined" if kappa.estimate != kappa.estimate else f"{kappa.estimate:.3f}"
    bounds = "" if kappa.ci_low != kappa.ci_low else (
        f" [{kappa.ci_low:.3f}, {kappa.ci_high:.3f}] ({kappa.confidence:.0%})"
    )
    print(f"judge {judge['provider']}/{judge['model']} (prompt {judge['prompt_hash']}) on run "
          f"'{result.run_id}': {result.n} labelled statements"
          + (f", {result.unmatched} labels without a verdict" if result.unmatched else ""))
    print(f"Cohen's kappa {estimate}{bounds}; raw agreement {result.agreement:.1%}")
    if kappa.note:
        print(f"note: {kappa.note}")
    print("confusion (judge x human):  human pass  human fail")
    print(f"  judge pass               {c['pass_pass']:>10}  {c['pass_fail']:>10}")
    print(f"  judge fail               {c['fail_pass']:>10}  {c['fail_fail']:>10}")
    print("agreement per expectation:")
    for row in result.per_expectation:
        print(f"  {row['agreement']:6.1%}  n={row['n']:<4} {row['expectation']}")
    if result.disagreements:
        print(f"disagreements ({len(result.disagreements)}):")
        for d in result.disagreements:
            verdict = "pass" if d["judge"] else "fail"
            human = "pass" if d["human"] else "fail"
            print(f"  {d['item_key']}: {d['expectation']!r}: judge {verdict}, human {human}; "
                  f"evidence: {d['evidence']}")
    _print_threshold(result)
    print(f"report written to {result.path}")


def _print_threshold(result: Calibration) -> None:
    """Whether the calibration lets the judge's verdicts decide a gate (the run's min_kappa)."""
    from evalkit.results import DEFAULT_MIN_KAPPA, load_manifest

    manifest = load_manifest(Path(result.path).parent.parent)
    threshold = manifest.judge.min_kappa if manifest is not None and manifest.judge else None
    min_kappa = DEFAULT_MIN_KAPPA if threshold is None else float(threshold)
    low = result.kappa.ci_low
    if low == low and low >= min_kappa:
        print(f"calibrated: kappa lower bound {low:.3f} >= min_kappa {min_kappa:.2f}")
    else:
        bound = "undefined" if low != low else f"{low:.3f}"
        print(f"below threshold: kappa lower bound {bound} < min_kappa {min_kappa:.2f}; "
              "compare flags and gate blocks verdicts that rest on this judge")
