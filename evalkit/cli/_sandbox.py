"""``--no-sandbox``: the documented way to run commands without bubblewrap."""

from __future__ import annotations

import argparse

from evalkit.sandbox import SANDBOX_ENV, disable_sandbox, require_sandbox


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
