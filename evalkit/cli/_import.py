"""``evalkit import`` and ``evalkit export``: runs to and from other harnesses' formats."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from evalkit.cli._common import add_common_options, eprint, pick, printed_json
from evalkit.errors import ConfigError, EvalkitError
from evalkit.interop import (
    EXPORT_FORMATS,
    IMPORT_FORMATS,
    TIMEOUT_POLICIES,
    ImportResult,
    export_run,
    get_importer,
    import_results,
    importer_names,
)

#: The built-in formats' options that have flags of their own (each ``dest`` is the field).
_OPTION_FLAGS = ("condition_from", "scorer", "pass_threshold", "timeout_policy")


class _ListOptions(argparse.Action):
    """``--list-options [FORMAT]``: print the format's options (every format's) and exit."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        names = [values] if isinstance(values, str) else list(importer_names())
        try:
            for name in names:
                importer = get_importer(name)
                print(f"{importer.name}: {importer.what}")
                for line in importer.option_lines() or ["(no options)"]:
                    print(f"  {line}")
        except EvalkitError as exc:
            parser.exit(2, f"evalkit import: error: {exc}\n")
        parser.exit(0)


def _options_epilog() -> str:
    """The built-in formats' options, for ``evalkit import --help``."""
    lines = ["format options (--format-opt KEY=VALUE; --list-options FORMAT for their help):"]
    for name in IMPORT_FORMATS:
        fields = ", ".join(get_importer(name).options.model_fields)
        lines.append(f"  {name}: {fields or '(none)'}")
    return "\n".join(lines)


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
        "registers (importer.NAME in the evalkit.plugins entry-point group)",
    )
    p.add_argument("--run-id", required=True, help="id of the new run (never overwritten)")
    p.add_argument(
        "--format-opt", action="append", default=[], metavar="KEY=VALUE",
        help="an option of the format (repeatable), validated against the format's options "
        "model; the built-in formats' options are also the flags below",
    )
    p.add_argument(
        "--list-options", nargs="?", action=_ListOptions, metavar="FORMAT",
        help="print the options of FORMAT (default: of every format) and exit",
    )
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
        choices=TIMEOUT_POLICIES,
        help="an agent timeout the tests still graded keeps their verdict (graded), fails "
        "(failed) or is an error; terminal-bench: default graded, as its leaderboard counts "
        "it; harbor: default failed, evalkit's rule",
    )
    p.add_argument("--scorer", help="inspect: scorer giving passed/score (default: the first)")
    p.add_argument("--lane", default="prompt", help="lane of rows without one (default prompt)")
    p.add_argument("--suite", help="suite name to record (default: task, description or file)")
    add_common_options(p, main, runs_dir_help="where the run is written")
    # the formats' options, then the examples block the parser was built with (last, as in
    # every command's help)
    p.epilog = "\n\n".join(part for part in (_options_epilog(), p.epilog) if part)
    p.formatter_class = argparse.RawDescriptionHelpFormatter


def _format_options(args: argparse.Namespace) -> dict[str, Any]:
    """The format's options: its flags and each ``--format-opt KEY=VALUE`` (a string)."""
    given = {name: value for name in _OPTION_FLAGS if (value := getattr(args, name)) is not None}
    for pair in args.format_opt:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ConfigError(
                f"--format-opt {pair!r}: write KEY=VALUE (the options of --format "
                f"{args.format}: evalkit import --list-options {args.format})",
                setting="format_opt",
            )
        if key in given:
            raise ConfigError(
                f"--format-opt {key}: given twice (or also as --{key.replace('_', '-')}); "
                "give it once",
                setting=key,
            )
        given[key] = value
    return given


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
    shared = pick(args, "runs_dir", "lane", "suite", "condition_map")
    result = import_results(
        args.files, args.format, args.run_id, **shared, options=_format_options(args)
    )
    for warning in result.warnings:
        eprint(f"warning: {warning}")
    if not printed_json(args, result):
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
    if not printed_json(args, result):
        print(
            f"wrote {result.runs} runs to {result.path} ({result.format}); "
            f"evalkit verdict: {result.verdict}"
        )
    return 0
