"""The ``evalkit`` command: parse, call one library function, print.

Start-up stays fast because nothing heavy is imported before it is needed: every subcommand
is listed here by name and help text only, and its module (with the library it calls) is
imported when the subcommand is parsed. ``evalkit --version`` and ``evalkit --help`` import
neither pandas nor the statistics.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

from evalkit._terminal import text_only_output
from evalkit._version import __version__
from evalkit.cli._common import eprint
from evalkit.cli._examples import ExamplesFormatter, examples_epilog
from evalkit.errors import (
    EXIT_NO_SPACE,
    EvalkitError,
    InputError,
    PlanError,
    RunInterrupted,
    RunOutOfSpace,
)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class Command(NamedTuple):
    """A subcommand as ``evalkit --help`` lists it, and where its arguments are added."""

    configure: str
    """``"module:function"`` adding the subcommand's arguments and handler to its parser."""
    help: str
    """One line in ``evalkit --help``."""
    description: str = ""
    """The paragraph of ``evalkit COMMAND --help`` (default: the help line)."""


#: Every subcommand, in ``--help`` order.
COMMANDS: dict[str, Command] = {
    "run": Command(
        "evalkit.cli._run:configure", "run a suite's matrix (cases x conditions x trials)"
    ),
    "cases": Command(
        "evalkit.cli._cases:configure",
        "validate, list or import a suite's cases (skill directories, CSV/JSONL tables)",
    ),
    "init": Command(
        "evalkit.cli._authoring:configure_init",
        "write a minimal suite (skill, cases, execution fixture) that validates",
    ),
    "schema": Command(
        "evalkit.cli._authoring:configure_schema",
        "write JSON Schema for suite.yaml and case files (editor completion)",
    ),
    "lift": Command(
        "evalkit.cli._analysis:configure_lift",
        "skill-lift metrics of a run, with case-bootstrap CIs",
    ),
    "compare": Command(
        "evalkit.cli._analysis:configure_compare",
        "paired verdict: did the candidate improve or regress?",
    ),
    "confirm": Command(
        "evalkit.cli._confirm:configure",
        "rerun the cases a comparison flags (or --case names) and confirm them",
        "The targeted follow-up of compare: rerun only the cases its per-case screen flags "
        "(or --case names), each side with the skill texts its run kept, with a fresh seed, at "
        "the trials that would confirm each (priced first, capped by --budget), and give "
        "confirmatory per-case verdicts on the new trials alone, Holm-corrected over the "
        "cases confirmed. See docs/confirm.md.",
    ),
    "flips": Command(
        "evalkit.cli._analysis:configure_flips",
        "flip rate within a run, or between two runs",
    ),
    "explain": Command(
        "evalkit.cli._forensics:configure",
        "why a case flips: its trials, what separates passes from failures, the divergence",
    ),
    "power": Command(
        "evalkit.cli._analysis:configure_power",
        "cases/trials needed, or minimum detectable effect",
    ),
    "gate": Command("evalkit.cli._gate:configure", "CI gate: block a candidate that regresses"),
    "optimize": Command(
        "evalkit.cli._optimize:configure",
        "hill-climb a skill: propose, gate on validation, unseal the test split once",
        "--parallel N proposes N siblings from the same champion and commits them one at a "
        "time: a breadth-first search, not a faster serial run (N=1 is depth-first). Each "
        "sibling costs a full validation evaluation.",
    ),
    "ablate": Command(
        "evalkit.cli._ablate:configure",
        "which component of a skill does the work: ablations with verdicts and their cost",
        "Remove each component of a skill (its description, each top-level SKILL.md section, "
        "each references/, scripts/ or assets/ file) from a real copy, run every copy as a "
        "condition beside the full skill and none, and give each component a verdict paired "
        "by case (necessary, harmful, or no detectable effect with its MDE) with family-wise "
        "error alpha, beside its cost in tokens. See docs/ablation.md.",
    ),
    "import": Command(
        "evalkit.cli._import:configure",
        "create a run from CSV/JSONL, Inspect AI logs, promptfoo or skill-creator results",
        "Create a run directory from results produced by another harness, so lift, compare, "
        "flips and reports apply to them. See docs/import.md.",
    ),
    "export": Command(
        "evalkit.cli._import:configure_export",
        "write a run as skill-creator's benchmark.json",
        "Write a run in another tool's format: skill-creator's benchmark.json (its viewer "
        "reads it), with evalkit's paired verdict under the extra key 'evalkit'. See "
        "docs/skills.md.",
    ),
    "judge": Command(
        "evalkit.cli._judge:configure",
        "re-grade a run's expectations (e.g. with another judge) into a new run; "
        "'judge calibrate RUN --labels FILE' compares the judge with human labels",
        "evalkit judge RUN: grade the expectations of an existing run again, without rerunning "
        "the agent: the new run shares the agent outcomes and transcripts; unchanged verdicts "
        "come from the judge cache. evalkit judge calibrate RUN --labels labels.csv: Cohen's "
        "kappa, agreement, confusion matrix and disagreements of the run's judge against human "
        "labels, stored beside the run.",
    ),
    "report": Command(
        "evalkit.cli._report:configure",
        "render a self-contained HTML report (papermill notebook + nbconvert)",
        "Execute the report notebook of --kind with papermill and render it to one "
        "self-contained HTML page; the executed notebook is kept beside it (FILE.ipynb). "
        "Prints the HTML path on stdout.",
    ),
    "view": Command(
        "evalkit.cli._view:configure",
        "a live local viewer of a runs directory (runs, items, comparisons, flips)",
        "Serve the runs of RUNS_DIR on 127.0.0.1 with a per-start token: an index that moves "
        "while runs are in progress, each run's pass rates and items with their reasons and "
        "transcripts, comparisons with the figures of evalkit compare, and why a case flips. "
        "Read-only; Ctrl-C stops it.",
    ),
}


class CommandParser(argparse.ArgumentParser):
    """A subcommand's parser whose arguments are added the first time it parses.

    Args:
        configure: ``"module:function"``; the function receives this parser and adds the
            subcommand's arguments and handler. Empty for a parser built in full.
    """

    def __init__(self, *args: Any, configure: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._configure = configure

    def configure(self) -> None:
        """Import the subcommand's module and add its arguments (once)."""
        if not self._configure:
            return
        target, self._configure = self._configure, ""
        module, _, function = target.partition(":")
        getattr(importlib.import_module(module), function)(self)

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        """Configure the subcommand, then parse as :class:`argparse.ArgumentParser` does."""
        self.configure()
        return super().parse_known_args(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand (each configured when it is parsed)."""
    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Did this edit to an agent's skill make it better, worse, or can we not tell?",
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=CommandParser
    )
    for name, command in COMMANDS.items():
        sub.add_parser(
            name,
            help=command.help,
            description=command.description or command.help,
            configure=command.configure,
            epilog=examples_epilog(name),
            formatter_class=ExamplesFormatter,
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalkit`` console script.

    Everything it writes on stdout and stderr shows as text: display controls of run data
    (carriage return, ESC, C1, bidi) are shown as visible markers (``evalkit._terminal``).

    Returns:
        0 success, 1 a check failed or a gate blocked, 2 bad usage, bad input (a damaged run
        file included) or a configuration error that stopped a run (refused credentials), 3 a
        run that finished but failed (every item of it, or of a condition or provider,
        errored), 75 a run stopped by a full disk, 130/143 when interrupted.
    """
    with text_only_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        # A shared setting's flag is checked as it is parsed (evalkit._settings): a bad value
        # is a ConfigError here, shown like any other.
        args = parser.parse_args(argv)
        code: int = args.func(args)
    except (InputError, PlanError) as exc:
        eprint(f"error: {exc}")
        return EXIT_USAGE
    except EvalkitError as exc:
        if isinstance(exc, RunOutOfSpace):
            eprint(f"error: {exc}")
            eprint(f"run '{exc.run_id}' kept every item flushed before the disk filled up.")
            return EXIT_NO_SPACE
        if not isinstance(exc, RunInterrupted):
            raise
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
