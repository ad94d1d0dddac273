"""``evalkit cases validate`` and ``evalkit cases list``."""

from __future__ import annotations

import argparse
from concurrent.futures import ThreadPoolExecutor

from evalkit.cases import Suite, load_suite
from evalkit.cli._common import add_common_options, eprint, print_json
from evalkit.cli._sandbox import add_sandbox_flag, apply_sandbox_flag
from evalkit.scorers import check_case

#: Cases whose reference answers and solutions ``cases validate`` checks at once.
REFERENCE_CHECK_THREADS = 8


def configure(p: argparse.ArgumentParser) -> None:
    """Add ``evalkit cases validate`` and ``evalkit cases list``."""
    cases_sub = p.add_subparsers(dest="cases_command", required=True, metavar="{validate,list}")
    v = cases_sub.add_parser("validate", help="validate a suite (exit 2 with every problem)")
    v.add_argument("suite", help="suite directory")
    v.add_argument(
        "--no-references",
        action="store_true",
        help="skip checking that reference answers and solutions pass their own scorers",
    )
    add_sandbox_flag(v)
    add_common_options(v, validate, runs_dir=None)
    ls = cases_sub.add_parser("list", help="list cases, one per line, id first")
    ls.add_argument("suite", help="suite directory")
    ls.add_argument("--lane", action="append", help="only this lane (repeatable)")
    add_common_options(ls, list_cases, runs_dir=None)


def validate(args: argparse.Namespace) -> int:
    """Validate the suite; exit 1 if a reference answer fails its own case."""
    suite = load_suite(args.suite)
    runs_commands = any(c.setup or c.solution or c.verifier for c in suite.cases)
    apply_sandbox_flag(args, runs_commands=runs_commands and not args.no_references)
    located = [] if args.no_references else _reference_failures(suite)
    failures = [failure for _, _, failure in located]
    if args.json:
        print_json(
            {
                "suite": suite.name,
                "valid": not failures,
                "cases": len(suite.cases),
                "dataset_version": suite.dataset_version,
                "reference_failures": failures,
            }
        )
    elif failures:
        for where, case_id, failure in located:
            detail = failure.removeprefix(f"{case_id}: ")
            eprint(f"{where}: case '{case_id}': reference check failed: {detail}")
        eprint(
            f"suite '{suite.name}' is not valid: {len(failures)} reference check(s) failed; "
            "fix each case's reference/solution or its scorers (patterns, verifier)"
        )
    else:
        lanes: dict[str, int] = {}
        for case in suite.cases:
            lanes[case.lane] = lanes.get(case.lane, 0) + 1
        summary = ", ".join(f"{n} {lane}" for lane, n in sorted(lanes.items()))
        checked = (
            " (reference checks skipped)"
            if args.no_references
            else ", every reference passes its case"
        )
        print(
            f"suite '{suite.name}' is valid: {len(suite.cases)} cases ({summary}), "
            f"{len(suite.skills)} skills{checked}, dataset_version {suite.dataset_version}"
        )
    return 1 if failures else 0


def _reference_failures(suite: Suite) -> list[tuple[str, str, str]]:
    """Each reference-check failure with the ``file:line`` and the id of its case.

    Cases are checked in parallel threads (each in its own scratch workspace; the time goes to
    waiting on sandboxed setup, solution and verifier commands); failures keep case order.
    """
    workers = min(REFERENCE_CHECK_THREADS, max(1, len(suite.cases)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        checked = list(pool.map(lambda case: check_case(suite, case), suite.cases))
    return [
        (suite.location(case), case.id, failure)
        for case, failures in zip(suite.cases, checked, strict=True)
        for failure in failures
    ]


def list_cases(args: argparse.Namespace) -> int:
    """Print one case per line: id, lane, category, expected skill, split, tags."""
    suite = load_suite(args.suite)
    cases = suite.select(lanes=tuple(args.lane or ()))
    if args.json:
        print_json(
            {
                "suite": suite.name,
                "cases": [
                    {
                        "id": c.id,
                        "lane": c.lane,
                        "category": c.category,
                        "expected_skill": c.expected_skill,
                        "split": c.split,
                        "tags": list(c.tags),
                    }
                    for c in cases
                ],
            }
        )
        return 0
    for c in cases:
        tags = ",".join(c.tags) or "-"
        print(f"{c.id}\t{c.lane}\t{c.category}\t{c.expected_skill}\t{c.split}\t{tags}")
    return 0
