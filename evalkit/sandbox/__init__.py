"""Run shell commands in a bubblewrap sandbox, and copy fixtures without following links out.

Every command evalkit runs on a suite's or a model's behalf (setup, solution and verifier
commands, the shell tool of the built-in agent loop) goes through :func:`run_command`.
"""

__all__ = [
    "CommandOutcome",
    "Limits",
    "Mounts",
    "find_bwrap",
    "run_command",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.errors import (
        FixtureLinkError as FixtureLinkError,
        SandboxUnavailableError as SandboxUnavailableError,
    )
    from evalkit.sandbox._bwrap import Mounts
    from evalkit.sandbox._fingerprint import sandbox_fingerprint as sandbox_fingerprint
    from evalkit.sandbox._fixtures import (
        copy_fixture as copy_fixture,
        fixture_link_problems as fixture_link_problems,
    )
    from evalkit.sandbox._policy import (
        BWRAP_PACKAGE as BWRAP_PACKAGE,
        SANDBOX_ENV as SANDBOX_ENV,
        Limits,
        disable_sandbox as disable_sandbox,
        find_bwrap,
        require_sandbox as require_sandbox,
        sandbox_enabled as sandbox_enabled,
    )
    from evalkit.sandbox._process import (
        start_in_new_session as start_in_new_session,
    )
    from evalkit.sandbox._run import CommandOutcome, run_command
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
