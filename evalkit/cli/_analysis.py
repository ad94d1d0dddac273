"""``evalkit lift``, ``evalkit compare``, ``evalkit flips`` and ``evalkit power``."""

from __future__ import annotations

import argparse
import math

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evalkit.analysis import compare, flips, lift, power
from evalkit.cli._common import add_json_flag, print_json, split_csv
from evalkit.errors import ConfigError
from evalkit.stats import PairedComparison


def _pct(value: float) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value * 100:+.1f} pp"


def _num(value: float, digits: int = 3) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the analysis commands."""
    p = sub.add_parser("lift", help="skill-lift metrics of a run, with case-bootstrap CIs")
    p.add_argument("run", help="run directory or run id")
    p.add_argument("--runs-dir", default="runs")
    p.add_argument("--resamples", type=int, default=10_000, help="bootstrap replicates")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--roles",
        metavar="COND=ROLE,...",
        help="which condition plays each role, e.g. none=A,self-load=B,preloaded=C,stale=D "
        "(A baseline, B self-load, C oracle, D stale; default those names)",
    )
    add_json_flag(p)
    p.set_defaults(func=lift_main)

    p = sub.add_parser("compare", help="paired verdict: did the candidate improve or regress?")
    p.add_argument("baseline", help="baseline run (directory or id)")
    p.add_argument("candidate", nargs="?", help="candidate run; omit with --conditions A,B")
    p.add_argument("--conditions", help="A,B: compare two conditions of one run (or filter)")
    p.add_argument("--metric", default="passed", choices=["passed", "score"])
    p.add_argument("--threshold", type=float, help="practical threshold (default 0.05)")
    p.add_argument("--correction", default="holm", help="per-case multiplicity correction")
    p.add_argument("--runs-dir", default="runs")
    p.add_argument("--resamples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--fail-on-regression", action="store_true", help="exit 1 when the verdict is regressed"
    )
    add_json_flag(p)
    p.set_defaults(func=compare_main)

    p = sub.add_parser("flips", help="flip rate within a run, or between two runs")
    p.add_argument("run_a", help="run directory or id")
    p.add_argument("run_b", nargs="?", help="second run (omit for within-run flips)")
    p.add_argument("--runs-dir", default="runs")
    p.add_argument("--top", type=int, default=10, help="most unstable cases to list")
    add_json_flag(p)
    p.set_defaults(func=flips_main)

    p = sub.add_parser("power", help="cases/trials needed, or minimum detectable effect")
    p.add_argument("--cases", type=int, help="number of cases")
    p.add_argument("--trials", type=int, help="trials per case and arm")
    p.add_argument("--effect", type=float, help="effect to detect, e.g. 0.1 for 10 pp")
    p.add_argument("--baseline-rate", type=float, help="baseline pass rate (default 0.5)")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--power", type=float, default=0.8, dest="target_power")
    p.add_argument(
        "--threshold", type=float, help="practical threshold of 'improved' (default 0.05)"
    )
    p.add_argument("--from-run", help="estimate variances from this run")
    p.add_argument("--conditions", help="A,B: the two arms in --from-run")
    p.add_argument("--runs-dir", default="runs")
    add_json_flag(p)
    p.set_defaults(func=power_main)


def lift_main(args: argparse.Namespace) -> int:
    """Print the lift metrics."""
    result = lift(
        args.run,
        roles=args.roles,
        n_resamples=args.resamples,
        seed=args.seed,
        runs_dir=args.runs_dir,
    )
    if args.json:
        print_json(result.to_dict())
        return 0
    console = Console(highlight=False)
    for (provider, lane), group in result.metrics.groupby(["provider", "lane"], sort=True):
        table = Table(title=f"{result.run_id or 'data'} - {provider} / {lane} (95% CI)")
        for column in ("metric", "estimate", "95% CI", "cases"):
            table.add_column(column, justify="left" if column == "metric" else "right")
        for _, row in group.iterrows():
            rate = row["metric"].endswith("_rate") or row["metric"].startswith("trigger")
            fmt = _num if rate or row["metric"] == "routing_efficiency" else _pct
            table.add_row(
                row["metric"],
                fmt(row["estimate"]),
                escape(f"[{fmt(row['ci_low'])}, {fmt(row['ci_high'])}]"),
                str(row["n_cases"]),
            )
        console.print(table)
    for _, row in result.notes.iterrows():
        console.print(
            f"{row['provider']} / {row['lane']}: {row['note']}; the metrics that need it are "
            "n/a",
            markup=False,
        )
    if not result.missing.empty:
        console.print(f"{len(result.missing)} case(s) lack a condition (see --json missing_cases)")
    return 0


def compare_main(args: argparse.Namespace) -> int:
    """Print the verdict and the named cases."""
    conditions = split_csv(args.conditions) or None
    if args.candidate is None and (conditions is None or len(conditions) != 2):
        raise ConfigError("compare needs CANDIDATE, or --conditions A,B to compare within a run")
    result = compare(
        args.baseline,
        args.candidate,
        conditions=conditions,
        metric=args.metric,
        threshold=args.threshold,
        correction=args.correction,
        n_resamples=args.resamples,
        seed=args.seed,
        runs_dir=args.runs_dir,
    )
    data = result.to_dict()
    if args.json:
        print_json(data)
    else:
        console = Console(highlight=False)
        _print_comparison(console, result)
        for label, cases in (
            ("regressed", result.regressed_cases),
            ("improved", result.improved_cases),
        ):
            console.print(f"{label} cases: {', '.join(cases) if cases else 'none'}")
        if not result.unmatched.empty:
            console.print(f"{len(result.unmatched)} unmatched item group(s) (see --json)")
    return 1 if args.fail_on_regression and result.verdict == "regressed" else 0


def _delta_text(result: PairedComparison) -> str:
    d = result.delta
    return f"delta {_pct(d.estimate)} " + escape(f"[{_pct(d.ci_low)}, {_pct(d.ci_high)}]")


def _print_comparison(console: Console, result: PairedComparison) -> None:
    """The verdict, per condition when two runs share several, and the notes."""
    parts = result.by_condition if len(result.by_condition) > 1 else ()
    if parts:
        verdicts: dict[str, list[str]] = {}
        for name, part in parts:
            verdicts.setdefault(part.verdict, []).append(name)
        console.print(
            "verdict by condition: "
            + "; ".join(
                f"[bold]{v}[/bold] for {', '.join(names)}" for v, names in verdicts.items()
            ),
            soft_wrap=True,
        )
        width = max(len(name) for name, _ in parts)
        for name, part in parts:
            reused = f"; {part.reused_items} reused pair(s) left out" if part.reused_items else ""
            console.print(
                f"  {name:<{width}}  {part.verdict:<12}  {_delta_text(part)} over "
                f"{part.n_cases} cases{reused}",
                soft_wrap=True,
            )
        console.print(f"overall, {escape(result.scope)}:", soft_wrap=True)
    scope = f" ({escape(result.scope)})" if result.scope and not parts else ""
    console.print(
        f"verdict: [bold]{result.verdict}[/bold]  {_delta_text(result)} "
        f"over {result.n_cases} cases{scope}; "
        f"wins {result.wins}, losses {result.losses}, ties {result.ties}",
        soft_wrap=True,
    )
    if result.sign_flip is not None:
        console.print(
            f"sign-flip test over {result.sign_flip.n_cases} cases: "
            f"p = {result.sign_flip.pvalue:.3g}",
            soft_wrap=True,
        )
    if result.verdict_note:
        console.print(f"note: {escape(result.verdict_note)}", soft_wrap=True)
    if result.reuse_note and result.reuse_note != result.verdict_note:
        console.print(f"reused: {escape(result.reuse_note)}", soft_wrap=True)


def flips_main(args: argparse.Namespace) -> int:
    """Print the flip rate and the most unstable cases."""
    result = flips(args.run_a, args.run_b, runs_dir=args.runs_dir)
    if args.json:
        print_json(result.to_dict())
        return 0
    kind = "between runs" if args.run_b else "within run (trial pairs)"
    print(
        f"flip rate {kind}: {_num(result.flip_rate)} "
        f"[{_num(result.ci_low)}, {_num(result.ci_high)}] over {result.n_pairs} pairs"
        + (f" ({result.reused_items} reused pairs left out)" if result.reused_items else "")
    )
    if result.message:
        print(f"note: {result.message}")
    table = result.by_case.dropna(subset=["estimate"]).sort_values("estimate", ascending=False)
    for _, row in table.head(args.top).iterrows():
        print(f"  {row['case_id']}\t{row.get('condition', '')}\t{row['estimate']:.2f}")
    return 0


def power_main(args: argparse.Namespace) -> int:
    """Print the planning answer."""
    result = power(
        cases=args.cases,
        trials=args.trials,
        effect=args.effect,
        baseline_rate=args.baseline_rate,
        alpha=args.alpha,
        target_power=args.target_power,
        threshold=args.threshold,
        from_run=args.from_run,
        conditions=split_csv(args.conditions) or None,
        runs_dir=args.runs_dir,
    )
    if args.json:
        print_json(result.to_dict())
        return 0
    if result.n_cases is None and args.cases is None:
        print(result.note)
        return 0
    if args.effect is not None and args.cases is None:
        answer = f"cases needed for the verdict improved: {result.n_cases}"
    elif args.cases is not None and args.effect is None:
        answer = f"minimum detectable effect: {_pct(result.effect)}"
    elif args.trials is None:
        answer = f"trials per case needed: {result.n_trials}"
    else:
        answer = f"power of the verdict procedure: {_num(result.power, 2)}"
    print(
        f"{answer}  (cases {result.n_cases}, trials {result.n_trials}, effect "
        f"{_pct(result.effect)}, power {_num(result.power, 2)}, alpha {result.alpha}, "
        f"method {result.method})"
    )
    return 0
