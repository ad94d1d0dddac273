"""``evalkit report``: render a reviewer-facing HTML report of a run."""

from __future__ import annotations

import argparse
import sys

from evalkit.cli._common import (
    add_common_options,
    add_provider_filter,
    add_roles_option,
    eprint,
    pick,
    printed_json,
)
from evalkit.errors import InputError
from evalkit.report import KINDS, ReportError, parse_assignments, report


def configure(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit report``."""
    p.add_argument("run", help="run directory or run id (for --kind trend: a runs directory)")
    p.add_argument(
        "--baseline", help="baseline run: the other side of compare, or a second run for flips"
    )
    p.add_argument("--kind", default="run", choices=list(KINDS), help="report kind (default run)")
    p.add_argument("-o", "--output", help="HTML file to write (default reports/<run>-<kind>.html)")
    p.add_argument(
        "--conditions",
        help="A,B: with --kind compare and no --baseline, the two conditions compared",
    )
    add_roles_option(p, "with --kind lift: ")
    add_provider_filter(p)
    p.add_argument(
        "--labels",
        help="with --kind labels: the labels CSV to label (default: a new sample of 50 "
        "statements, written beside the page as <page>.csv)",
    )
    p.add_argument(
        "-p",
        "--param",
        action="append",
        metavar="NAME=VALUE",
        help="notebook parameter (repeatable); checked against the notebook's parameters cell",
    )
    p.add_argument(
        "--timeout", type=float, default=600.0, help="per-cell timeout in seconds (default 600)"
    )
    add_common_options(p, main)


def _new_sample(args: argparse.Namespace) -> str:
    """Sample 50 judged statements of the run into a CSV beside the page; return its path."""
    from pathlib import Path

    from evalkit.judge import sample_labels
    from evalkit.results import resolve_run_dir

    page = Path(args.output) if args.output else (
        Path("reports") / f"{resolve_run_dir(args.run, args.runs_dir).name}-labels.html"
    )
    sample = sample_labels(args.run, n=50, output=page.with_suffix(".csv"), runs_dir=args.runs_dir)
    eprint(f"sampled {len(sample.rows)} of {sample.population} judged statements into "
           f"{sample.path}")
    return sample.path


def main(args: argparse.Namespace) -> int:
    """Render the report; print its path (or the JSON object) on stdout.

    Returns:
        0 when the page was written, 1 when a notebook cell failed (the message names the
        cell; the executed notebook is kept), 2 when it stopped on bad input. Bad arguments
        raise ``InputError`` (exit 2).
    """
    parameters: dict[str, object] = dict(parse_assignments(args.param))
    if args.labels and args.kind != "labels":
        raise InputError(f"--labels is used by --kind labels, not by --kind {args.kind}")
    if args.kind == "labels":
        parameters["labels"] = args.labels or _new_sample(args)
    if args.conditions:
        parameters["conditions"] = args.conditions
    if args.providers:
        if args.kind != "compare":
            raise InputError(f"--provider is used by --kind compare, not by --kind {args.kind}")
        parameters["providers"] = args.providers
    if args.roles:
        from evalkit.analysis import parse_roles

        parse_roles(args.roles)  # a bad assignment stops here, before a kernel starts
        parameters["roles"] = args.roles
    try:
        result = report(
            args.run,
            **pick(args, "baseline", "kind", "output", "runs_dir"),
            parameters=parameters,
            timeout=args.timeout if args.timeout > 0 else None,
            progress=sys.stderr.isatty(),  # stages and a cell bar on a terminal only
        )
    except ReportError as exc:
        eprint(f"error: {exc}")
        return 2 if isinstance(exc, InputError) else 1
    if not printed_json(args, result):
        print(result.html_path)
        eprint(f"executed notebook: {result.notebook_path}")
    return 0
