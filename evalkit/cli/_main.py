"""The ``evalkit`` command: parse, call one library function, print."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from evalkit._version import __version__
from evalkit.cli import (
    _analysis,
    _authoring,
    _cases,
    _gate,
    _import,
    _judge,
    _optimize,
    _report,
    _run,
)
from evalkit.cli._common import eprint
from evalkit.errors import InputError, PlanError
from evalkit.runner import RunInterrupted

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Did this edit to an agent's skill make it better, worse, or can we not tell?",
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in _modules():
        module.add_parser(sub)
    return parser


def _modules() -> list:  # type: ignore[type-arg]
    return [_run, _cases, _authoring, _analysis, _gate, _optimize, _import, _judge, _report]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalkit`` console script.

    Returns:
        0 success, 1 a check failed or a gate blocked, 2 bad usage or input, 130/143 when
        interrupted.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except InputError as exc:
        eprint(f"error: {exc}")
        return EXIT_USAGE
    except PlanError as exc:
        eprint(f"error: {exc}")
        return EXIT_USAGE
    except RunInterrupted as exc:
        eprint(f"interrupted: run '{exc.run_id}' saved everything that finished.")
        eprint(f"resume with: {exc.resume_command}")
        return exc.exit_code
    except KeyboardInterrupt:
        # Ctrl-C outside a run's own handling (start-up, validation, a report): no traceback
        eprint("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    return code


def console_main() -> None:
    """Console-script wrapper: exit with :func:`main`'s code."""
    sys.exit(main())
