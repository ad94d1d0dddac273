"""``evalkit cases validate``, ``evalkit cases list`` and ``evalkit cases import``."""

from __future__ import annotations

import argparse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from evalkit.cases import (
    SUITE_FORMATS,
    Suite,
    SuiteInspection,
    detect_suite_format,
    inspect_suite,
    load_suite,
)
from evalkit.cli._common import add_common_options, eprint, print_json
from evalkit.cli._flags import settings_of_flags
from evalkit.cli._sandbox import add_sandbox_flag, apply_sandbox_flag
from evalkit.errors import ConfigError, Problem, grouped_lines, plural, problem_count
from evalkit.scorers import REFERENCE_CACHE_DIR, ReferenceCache, check_case

#: Cases whose reference answers and solutions ``cases validate`` checks at once.
REFERENCE_CHECK_THREADS = 8


def configure(p: argparse.ArgumentParser) -> None:
    """Add ``evalkit cases validate``, ``evalkit cases list`` and ``evalkit cases import``."""
    cases_sub = p.add_subparsers(
        dest="cases_command", required=True, metavar="{validate,list,import}"
    )
    v = cases_sub.add_parser("validate", help="validate a suite (exit 2 with every problem)")
    v.add_argument("suite", help="suite directory")
    v.add_argument(
        "--no-references",
        action="store_true",
        help="skip checking that reference answers and solutions pass their own scorers",
    )
    v.add_argument(
        "--no-cache",
        action="store_true",
        help="run every reference check afresh instead of reusing passed ones (passes are "
        "still stored)",
    )
    add_sandbox_flag(v)
    add_common_options(
        v,
        validate,
        runs_dir_help="passed reference checks are cached under RUNS_DIR/.cache/references",
    )
    ls = cases_sub.add_parser("list", help="list cases, one per line, id first")
    ls.add_argument("suite", help="suite directory")
    ls.add_argument("--lane", action="append", help="only this lane (repeatable)")
    add_common_options(ls, list_cases, runs_dir_help=None)
    _add_import(cases_sub)


def _add_import(cases_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    im = cases_sub.add_parser(
        "import",
        help="write a suite from a skill directory, or cases from a CSV/JSONL dataset",
        description="A skill-creator skill directory (SKILL.md, evals/evals.json) becomes a "
        "suite; a CSV/JSONL table becomes prompt-lane cases, one per row. Everything is "
        "validated like a suite file (every problem as file:line). See docs/skills.md.",
    )
    im.add_argument(
        "source",
        help="a skill directory, a repository with SKILL.md below it, or a .csv / .jsonl dataset",
    )
    im.add_argument(
        "-o", "--output", required=True,
        help="skill directory: the suite directory to create; table: a case file, or a suite "
        "directory (writes cases/<table name>.yaml)",
    )
    im.add_argument(
        "--from", dest="source_format", metavar="FORMAT",
        help="what SOURCE is: skill-creator, table, or a registered suite format (default: "
        "the first format that recognises SOURCE; a directory holding SKILL.md is "
        "skill-creator, a .csv or .jsonl file is table)",
    )
    im.add_argument(
        "--from-opt", action="append", default=[], metavar="KEY=VALUE",
        help="an option of the format (repeatable): any format's own options; the built-ins' "
        "are also the flags below",
    )
    im.add_argument("--stale", metavar="FILE_OR_GIT_REV", help="skill: an older SKILL.md")
    im.add_argument("--bootstrap", metavar="FILE", help="skill: what self-load shows first")
    im.add_argument(
        "--triggers", action="append", metavar="FILE",
        help="skill: a trigger eval set [{query, should_trigger}] (repeatable)",
    )
    im.add_argument(
        "--evals", metavar="PATH",
        help="skill: the evals.json to read (or a folder holding one) instead of searching",
    )
    im.add_argument(
        "--skill", action="append", metavar="PATH",
        help="skill: a skill directory under SOURCE to import (repeatable; default: every "
        "SKILL.md found)",
    )
    im.add_argument("--prompt-col", help="table: column holding the prompt (required)")
    im.add_argument("--id-col", help="column holding the case id (default: <file>-<line>)")
    im.add_argument("--expected-skill-col", help="column naming the skill that should trigger")
    im.add_argument("--expectations-col", help="column of judged expectations (list or lines)")
    im.add_argument("--pattern-col", help="column of regexes the answer must match")
    im.add_argument("--category-col", help="column holding the category")
    im.add_argument("--split-col", help="column holding the split (dev, holdout, test)")
    im.add_argument("--force", action="store_true", help="replace an existing case file")
    add_common_options(im, import_cases, runs_dir_help=None)


#: The built-in formats' options that have flags of their own (each ``dest`` is the field).
_FORMAT_FLAGS = (
    "stale", "bootstrap", "triggers", "evals", "skill", "prompt_col", "id_col",
    "expected_skill_col", "expectations_col", "pattern_col", "category_col", "split_col",
    "force",
)


def import_cases(args: argparse.Namespace) -> int:
    """Import SOURCE with its suite format (``--from``, or the first that recognises it)."""
    given: dict[str, Any] = {
        field: value for field in _FORMAT_FLAGS
        if (value := getattr(args, field)) not in (None, False, [], ())
    }
    if given.get("skill") and args.source_format is None:
        args.source_format = "skill-creator"  # --skill names skills under SOURCE
    chosen = (
        SUITE_FORMATS.get(args.source_format) if args.source_format
        else detect_suite_format(args.source)
    )
    fields = set(chosen.options.model_fields)
    foreign = sorted(set(given) - fields)
    if foreign:
        flag = "--" + foreign[0].replace("_", "-")
        raise ConfigError(
            f"{flag} is not an option of the {chosen.name} format ({args.source}); its "
            f"options: {', '.join(sorted(fields)) or 'none'}",
            setting=foreign[0],
        )
    for pair in args.from_opt:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--from-opt {pair!r}: write KEY=VALUE", setting="from_opt")
        given[key.replace("-", "_")] = value
    for field in ("triggers", "skill"):
        if field in given and isinstance(given[field], list):
            given[field] = tuple(given[field])
    with settings_of_flags():
        options = chosen.parse_options(given)
    done = chosen.write(Path(args.source), Path(args.output), options)
    for warning in done.warnings:
        eprint(f"warning: {warning}")
    if args.json:
        print_json(done.record)
    else:
        print(done.summary)
    return 0


def validate(args: argparse.Namespace) -> int:
    """Validate the suite in one pass: exit 2 on any problem, 1 if a reference fails its case.

    Every problem of every file is reported together, grouped by file; the reference checks
    run on the cases that loaded cleanly, also when other files have problems.
    """
    found = inspect_suite(args.suite)
    checkable = None if args.no_references else found.checkable
    runs_commands = checkable is not None and any(
        c.setup or c.solution or c.verifier for c in checkable.cases
    )
    apply_sandbox_flag(args, runs_commands=runs_commands)
    cache = ReferenceCache(Path(args.runs_dir) / REFERENCE_CACHE_DIR, lookups=not args.no_cache)
    located = [] if checkable is None else _reference_failures(checkable, cache)
    failures = [failure for _, failure in located]
    problems = list(found.problems)
    if args.json:
        print_json(_validation_json(found, checkable, failures, cache.hits))
    else:
        for warning in found.warnings:
            eprint(f"warning: {warning}")
        if problems or located:
            _print_problems(found, problems, located, skipped=not args.no_references)
        else:
            _print_valid(args, found, cache.hits)
    return 2 if problems else 1 if failures else 0


def _validation_json(
    found: SuiteInspection, checkable: Suite | None, failures: list[str], hits: int
) -> dict[str, Any]:
    suite = found.suite
    by_file: dict[str, list[dict[str, Any]]] = {}
    for problem in found.problems:
        by_file.setdefault(problem.file, []).append(problem.to_dict())
    return {
        "suite": suite.name if suite else found.name,
        "valid": suite is not None and not failures,
        "cases": len(suite.cases) if suite else None,
        "dataset_version": suite.dataset_version if suite else None,
        "reference_failures": failures,
        "reference_cache_hits": hits,
        "problems": [p.to_dict() for p in found.problems],
        "problems_by_file": by_file,
        "warnings": [w.to_dict() for w in found.warnings],
        "references_checked": sorted(c.id for c in checkable.cases) if checkable else [],
    }


def _print_problems(
    found: SuiteInspection,
    problems: list[Problem],
    located: list[tuple[Problem, str]],
    *,
    skipped: bool,
) -> None:
    """Every problem and failed reference check, grouped by file, then what to do."""
    failed = [problem for problem, _ in located]
    name = f" '{found.name}'" if found.name else ""
    checks = plural(len(failed), "reference check")
    if problems:
        counted = problem_count(problems + failed)
        extra = f", of which {checks} failed" if failed else ""
        eprint(f"error: suite{name} is invalid ({counted}{extra}):")
    for line in grouped_lines(problems + failed):
        eprint(line)
    if problems and skipped and found.checkable is None:
        eprint(
            "reference checks not run: suite.yaml's defaults or anti_patterns have problems "
            "(they decide every score), or no case loaded cleanly; fix those and validate again"
        )
    if failed:
        eprint(
            f"suite{name} is not valid: {checks} failed; fix each case's reference/solution "
            "or its scorers (patterns, verifier)"
        )


def _print_valid(args: argparse.Namespace, found: SuiteInspection, hits: int) -> None:
    suite = found.suite
    assert suite is not None  # no problem: the suite loaded
    lanes: dict[str, int] = {}
    for case in suite.cases:
        lanes[case.lane] = lanes.get(case.lane, 0) + 1
    summary = ", ".join(f"{n} {lane}" for lane, n in sorted(lanes.items()))
    checked = (
        " (reference checks skipped)"
        if args.no_references
        else ", every reference passes its case" + _cached_note(hits)
    )
    print(
        f"suite '{suite.name}' is valid: {len(suite.cases)} cases ({summary}), "
        f"{len(suite.skills)} skills{checked}, dataset_version {suite.dataset_version}"
    )


def _cached_note(hits: int) -> str:
    if not hits:
        return ""
    return f" ({hits} passed unchanged before: cached, --no-cache to rerun them)"


def _reference_failures(suite: Suite, cache: ReferenceCache) -> list[tuple[Problem, str]]:
    """Each reference-check failure, located at its case (``file:line``), and as reported.

    Cases are checked in parallel threads (each in its own scratch workspace; the time goes to
    waiting on sandboxed setup, solution and verifier commands); failures keep case order.
    A check that passed before with the same key is not run again (see
    :class:`evalkit.scorers.ReferenceCache`; one made with ``lookups=False`` runs every
    check and stores its passes afresh).
    """
    workers = min(REFERENCE_CHECK_THREADS, max(1, len(suite.cases)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        checked = list(pool.map(lambda case: check_case(suite, case, cache=cache), suite.cases))
    return [
        (
            Problem(
                str(suite.root / suite.case_files[case.id]),
                "",
                "reference check failed: " + failure.removeprefix(f"{case.id}: "),
                suite.case_lines.get(case.id),
                case.id,
            ),
            failure,
        )
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
