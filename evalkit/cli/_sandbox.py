"""``--no-sandbox``: the documented way to run commands without bubblewrap."""

from __future__ import annotations

import argparse
from collections.abc import Collection, Sequence

from evalkit.cli._common import eprint
from evalkit.sandbox import (
    SANDBOX_ENV,
    SandboxUnavailableError,
    disable_sandbox,
    require_sandbox,
)


def add_sandbox_flag(parser: argparse.ArgumentParser) -> None:
    """Register ``--no-sandbox`` on a command that runs suite or agent commands."""
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help=(
            "run setup, solution, verifier and agent shell commands WITHOUT the bubblewrap "
            f"sandbox (same as {SANDBOX_ENV}=off; only for trusted suites and models, "
            "see docs/security.md)"
        ),
    )


def apply_sandbox_flag(args: argparse.Namespace, *, runs_commands: bool) -> None:
    """Honour ``--no-sandbox``; refuse early when commands need a sandbox that cannot run.

    Args:
        args: Parsed arguments (with ``no_sandbox``).
        runs_commands: Whether the command will run shell commands at all.

    Raises:
        SandboxUnavailableError: ``bwrap`` is missing and the sandbox was not switched off.
    """
    if args.no_sandbox:
        disable_sandbox()
    if runs_commands:
        require_sandbox()


def lanes_the_sandbox_allows(
    args: argparse.Namespace, case_lanes: Sequence[str], lanes: Collection[str]
) -> tuple[str, ...] | None:
    """The lanes a run may start with: where no ``bwrap`` exists, the prompt lane alone.

    With the sandbox on and no ``bwrap`` anywhere (macOS; Linux without the package or the
    wheel), the prompt lane still runs and the command-running lanes are left out, said once on
    stderr with the choice (install a ``bwrap``, or ``--no-sandbox``); never a silent run
    without isolation.

    Args:
        args: Parsed arguments (with ``no_sandbox``).
        case_lanes: The lane of every case of the suite.
        lanes: The lanes asked for with ``--lane`` (empty: all).

    Returns:
        None to run what was asked, or the lanes to run instead (``("prompt",)``).

    Raises:
        SandboxUnavailableError: Only command-running cases were asked for and no ``bwrap``
            exists (nothing could run).
    """
    if args.no_sandbox:
        disable_sandbox()
    wanted = [lane for lane in case_lanes if not lanes or lane in lanes]
    needing = sorted({lane for lane in wanted if lane != "prompt"})
    if not needing:
        return None
    try:
        require_sandbox()
    except SandboxUnavailableError as err:
        if "prompt" not in wanted:
            raise  # nothing of what was asked could run
        skipped = sum(lane != "prompt" for lane in wanted)
        eprint(
            f"note: {skipped} case(s) of the {', '.join(needing)} lane(s) are NOT run, only the "
            f"prompt lane: {err}"
        )
        return ("prompt",)
    return None
