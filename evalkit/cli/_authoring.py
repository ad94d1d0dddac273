"""``evalkit init`` and ``evalkit schema``: start a suite, and help editors check it."""

from __future__ import annotations

import argparse
import sys

from evalkit.cli._common import add_common_options, print_json


def configure_init(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit init``."""
    p.add_argument("directory", help="the new suite's directory (created; must be empty)")
    p.add_argument("--name", help="suite name (default: derived from the directory name)")
    p.add_argument(
        "--force", action="store_true", help="write into a non-empty directory (overwrites)"
    )
    add_common_options(p, init, runs_dir_help=None)


def configure_schema(s: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit schema``."""
    s.add_argument(
        "-o", "--output", default=".", help="directory for the two schema files (default .)"
    )
    s.add_argument(
        "--markdown",
        action="store_true",
        help="print the suite-writing guide and field reference (docs/suites.md) instead",
    )
    add_common_options(s, schema, runs_dir_help=None)


def init(args: argparse.Namespace) -> int:
    """Write the scaffold suite; print what was written and what to run next."""
    from evalkit.cases import init_suite

    new = init_suite(args.directory, name=args.name, force=args.force)
    if args.json:
        print_json({"suite": new.name, "root": str(new.root), "files": list(new.files)})
        return 0
    print(f"wrote suite '{new.name}' in {new.root} ({len(new.files)} files)")
    print("next:")
    print(f"  evalkit cases validate {new.root}")
    print(f"  evalkit run {new.root} --trials 1")
    return 0


def schema(args: argparse.Namespace) -> int:
    """Write the two JSON Schema files, or print the Markdown field reference."""
    if args.markdown:
        from evalkit.cases import render_suites_markdown

        sys.stdout.write(render_suites_markdown())
        return 0
    from evalkit.cases import write_schemas

    paths = write_schemas(args.output)
    if args.json:
        print_json({"files": [str(p) for p in paths]})
        return 0
    for path in paths:
        print(f"wrote {path}")
    return 0
