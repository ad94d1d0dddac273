"""``evalkit ablate``: which component of a skill does the work, and what it costs."""

from __future__ import annotations

import argparse
import math

from evalkit._settings import ALPHA, CONCURRENCY, N_RESAMPLES_QUICK, RUNS_DIR, SEED, THRESHOLD
from evalkit.ablation import AblationConfig, AblationResult, ablate, list_components
from evalkit.cli._common import (
    add_common_options,
    add_provider_options,
    byte_size,
    pick,
    print_json,
    printed_json,
    provider_settings,
    split_csv,
)
from evalkit.cli._flags import settings_of_flags
from evalkit.runner import RunConfig


def configure(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit ablate``."""
    p.add_argument("suite", help="suite directory")
    p.add_argument("--skill", required=True, help="the suite skill to ablate")
    p.add_argument(
        "--component",
        action="append",
        metavar="ID",
        help="ablate only this component (repeatable; ids as --list shows them)",
    )
    p.add_argument(
        "--list", action="store_true", help="list the skill's components and their tokens"
    )
    p.add_argument(
        "--mode",
        choices=("preloaded", "self-load"),
        default="preloaded",
        help="how the skill reaches the agent (default preloaded)",
    )
    p.add_argument("--trials", type=int, help="trials per case and condition (default: suite's)")
    add_provider_options(p, "provider of the agent (default: the suite's)")
    p.add_argument("--model", help="model override")
    p.add_argument("--case", action="append", dest="cases", metavar="ID", help="only this case")
    p.add_argument("--lane", action="append", dest="lanes", help="only cases of this lane")
    p.add_argument("--tags", help="only cases with any of these comma-separated tags")
    p.add_argument("--split", action="append", dest="splits", help="only cases of this split")
    ALPHA.add_argument(p, when="family-wise over the components: ")
    THRESHOLD.add_argument(p, when="a component's smallest contribution worth keeping: ")
    p.add_argument(
        "--sequential",
        action="store_true",
        help="rounds of --batch cases; each component stops at its own anytime-valid verdict",
    )
    p.add_argument("--batch", type=int, default=8, help="cases per sequential round (default 8)")
    p.add_argument(
        "--minimal",
        action="store_true",
        help="propose the smallest skill (chosen on dev) and verify it on holdout",
    )
    SEED.add_argument(p)
    N_RESAMPLES_QUICK.add_argument(p, dest="n_resamples")
    p.add_argument(
        "--copies-quota", type=byte_size, default=2 << 30, dest="copies_quota_bytes",
        metavar="SIZE", help="disk space the skill copies may take, e.g. 500MiB (default 2GiB); "
        "the study refuses to start past it",
    )
    CONCURRENCY.add_argument(p)
    p.add_argument(
        "--backend", default="loky", choices=("loky", "threading", "dask", "ray")
    )
    RUNS_DIR.add_argument(p, what="where the study is written")
    p.add_argument("--run-id", help="study id (default ablate-<timestamp>)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_common_options(p, main, runs_dir_help=None)


def _list(args: argparse.Namespace) -> int:
    components = list_components(args.suite, args.skill)
    if args.json:
        print_json(
            {
                "skill": args.skill,
                "components": [
                    {"id": c.id, "kind": c.kind, "title": c.title, "tokens": c.tokens,
                     "condition": c.condition}
                    for c in components
                ],
            }
        )
        return 0
    width = max(len(c.id) for c in components)
    print(f"{'component':<{width}}  tokens  title")
    for c in components:
        print(f"{c.id:<{width}}  {c.tokens:>6}  {c.title}")
    print(f"{len(components)} components; tokens: characters / 4 (estimate)")
    return 0


def _fmt(value: float, spec: str = "+.3f") -> str:
    return "n/a" if value is None or not math.isfinite(value) else format(value, spec)


def _print(result: AblationResult) -> None:
    t = result.components
    print(
        f"ablation of '{result.skill}' ({result.mode}, {result.design} design, family-wise "
        f"alpha {result.alpha:g}): {result.items} items; full skill vs none "
        f"{_fmt(result.skill_effect['estimate'])}; overhead {result.overhead_tokens:.0f} "
        "tokens per call"
    )
    width = max(len(c) for c in t["component"])
    for row in t.sort_values("estimate", ascending=False).to_dict("records"):
        mde = ""
        if row["verdict"] == "no detectable effect":
            mde = f" (MDE {'>1' if row['mde'] > 1 else _fmt(row['mde'], '.3f')})"
        print(
            f"  {row['component']:<{width}}  {row['verdict']:<20}  {_fmt(row['estimate'])} "
            f"[{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}]{mde}  {row['tokens']:.0f} tokens  "
            f"{_fmt(row['lift_per_1k_tokens'], '+.2f')} per 1k tokens"
        )
    if result.minimal is not None:
        print(f"minimal skill (without {', '.join(result.minimal.removed)}): {result.minimal.note}")
    for note in result.notes:
        print(f"note: {note}")
    print(f"study: {result.study_dir}")


def main(args: argparse.Namespace) -> int:
    """List the components, or run the study and print the verdicts."""
    if args.list:
        return _list(args)
    with settings_of_flags():
        config = AblationConfig(
            skill=args.skill,
            components=tuple(args.component or ()),
            **pick(args, "mode", "alpha", "threshold", "sequential", "batch", "minimal"),
            **pick(args, "seed", "n_resamples", "copies_quota_bytes"),
            run=RunConfig(
                case_ids=tuple(args.cases or ()),
                lanes=tuple(args.lanes or ()),
                tags=split_csv(args.tags),
                splits=tuple(args.splits or ()),
                progress=not args.no_progress,
                **provider_settings(args),
                **pick(args, "trials", "model", "concurrency", "backend", "runs_dir", "run_id"),
            ),
        )
    result = ablate(args.suite, config)
    if not printed_json(args, result):
        _print(result)
    return 0
