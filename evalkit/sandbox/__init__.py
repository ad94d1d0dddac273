"""Run shell commands in a bubblewrap sandbox, and copy fixtures without following links out.

Every command evalkit runs on a suite's or a model's behalf (setup, solution and verifier
commands, the shell tool of the built-in agent loop) goes through :func:`run_command`.
"""

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.errors import FixtureLinkError, SandboxUnavailableError
    from evalkit.sandbox._bwrap import Mounts
    from evalkit.sandbox._fingerprint import sandbox_fingerprint
    from evalkit.sandbox._fixtures import copy_fixture, fixture_link_problems
    from evalkit.sandbox._policy import (
        BWRAP_PACKAGE,
        SANDBOX_ENV,
        Limits,
        disable_sandbox,
        find_bwrap,
        require_sandbox,
        sandbox_enabled,
    )
    from evalkit.sandbox._process import start_in_new_session
    from evalkit.sandbox._run import CommandOutcome, run_command
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)

__all__ = [
    "BWRAP_PACKAGE",
    "SANDBOX_ENV",
    "CommandOutcome",
    "FixtureLinkError",
    "Limits",
    "Mounts",
    "SandboxUnavailableError",
    "copy_fixture",
    "disable_sandbox",
    "find_bwrap",
    "fixture_link_problems",
    "require_sandbox",
    "run_command",
    "sandbox_enabled",
    "sandbox_fingerprint",
    "start_in_new_session",
]
