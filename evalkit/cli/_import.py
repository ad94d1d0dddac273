"""``evalkit import`` and ``evalkit export``: runs to and from other harnesses' formats."""

from __future__ import annotations

import argparse

from evalkit.cli._common import add_common_options, eprint, pick, print_json
from evalkit.interop import (
    EXPORT_FORMATS,
    IMPORT_FORMATS,
    ImportResult,
    export_run,
    import_results,
)


def configure(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit import``."""
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="result file(s) or a directory of them (e.g. one Inspect log per model)",
    )
    p.add_argument(
        "--format",
        required=True,
        help=f"input format: {', '.join(IMPORT_FORMATS)}, or one an installed package "
        "registers (evalkit.importers entry points)",
    )
    p.add_argument("--run-id", required=True, help="id of the new run (never overwritten)")
    p.add_argument(
        "--condition-from",
        metavar="SOURCE",
        help="inspect: model (default), task_arg:NAME (or task_args.NAME) or metadata:NAME; "
        "promptfoo: prompt (default) or provider; harbor: skills (default), job or "
        "task-path:REGEX; terminal-bench: run (default) or agent-kwarg:NAME",
    )
    p.add_argument(
        "--condition-map",
        metavar="VALUE=NAME,...",
        help="name the conditions the source gives, e.g. "
        "'http://localhost:9101=plugin,false=baseline' (every condition once, no two alike; "
        "the manifest keeps each source value)",
    )
    p.add_argument(
        "--pass-threshold",
        type=float,
        help="harbor: a verifier reward at or above it passes (default 1.0)",
    )
    p.add_argument(
        "--timeout-policy",
        choices=("graded", "failed", "error"),
        help="an agent timeout the tests still graded keeps their verdict (graded), fails "
        "(failed) or is an error; terminal-bench: default graded, as its leaderboard counts "
        "it; harbor: default failed, evalkit's rule",
    )
    p.add_argument("--scorer", help="inspect: scorer giving passed/score (default: the first)")
    p.add_argument("--lane", default="prompt", help="lane of rows without one (default prompt)")
    p.add_argument("--suite", help="suite name to record (default: task, description or file)")
    add_common_options(p, main, runs_dir="where the run is written (default runs)")


def _summary(result: ImportResult) -> None:
    files = len(result.manifest.get("source", {}).get("files", []))
    plural = "s" if files != 1 else ""
    print(
        f"imported {result.items} items from {files} {result.format} file{plural} "
        f"into {result.run_dir}: {result.ok} ok, {result.errors} error(s), "
        f"pass rate {result.pass_rate:.1%}"
    )
    for name, info in result.manifest.get("conditions", {}).items():
        rate = info["passed"] / info["items"] if info["items"] else 0.0
        print(f"  {name}: {info['items']} items, {rate:.1%} passed")
    if len(result.manifest.get("conditions", {})) > 1:
        from evalkit.results import read_run
        from evalkit.stats import matched_rates

        guard = matched_rates(read_run(result.run_dir))
        if not guard.balanced:
            print(f"note: {guard.warning}")


def main(args: argparse.Namespace) -> int:
    """Import the files; print a summary (or the JSON object)."""
    options = pick(
        args, "runs_dir", "condition_from", "scorer", "lane", "suite", "pass_threshold",
        "timeout_policy", "condition_map",
    )
    result = import_results(args.files, args.format, args.run_id, **options)
    for warning in result.warnings:
        eprint(f"warning: {warning}")
    if args.json:
        print_json(result.to_dict())
    else:
        _summary(result)
    return 0


def configure_export(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit export``."""
    p.add_argument("run", help="run directory or run id")
    p.add_argument("--format", required=True, choices=EXPORT_FORMATS, help="output format")
    p.add_argument("-o", "--output", required=True, help="file to write (e.g. benchmark.json)")
    p.add_argument("--baseline", default="none", help="condition written as without_skill")
    p.add_argument("--skill", default="preloaded", help="condition written as with_skill")
    add_common_options(p, export_main)


def export_main(args: argparse.Namespace) -> int:
    """Export the run; print where it went (or the JSON object)."""
    options = pick(args, "format", "baseline", "skill", "runs_dir")
    result = export_run(args.run, args.output, **options)
    if args.json:
        print_json(result.to_dict())
    else:
        print(
            f"wrote {result.runs} runs to {result.path} ({result.format}); "
            f"evalkit verdict: {result.verdict}"
        )
    return 0
