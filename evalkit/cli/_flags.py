"""The command-line flag of each library parameter, for errors the library raises about them.

Library errors name a parameter (``round_cases must be at least 1``); where the command line
passes a flag's value to that parameter, its messages name the flag instead
(``--round-cases must be at least 1``), as a user of the command line knows it, through the
one table :data:`FLAGS`. The shared settings of :mod:`evalkit._settings` (``--confidence``,
``--concurrency``, ``--threshold``, ...) are in it from their own table; their messages
already name both the flag and the parameter
(``--concurrency / concurrency must be an integer >= 1, but 0 was passed``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import ValidationError

from evalkit._settings import SETTINGS
from evalkit.errors import ConfigError

#: Library parameter -> the flag that sets it (the shared settings from their table).
FLAGS: dict[str, str] = {
    **{setting.name: setting.flag for setting in SETTINGS},
    "adaptive_trials": "--adaptive-trials",
    "allocate_trials": "--allocate-trials",
    "futility_beta": "--futility-beta",
    "max_items": "--max-items",
    "max_rounds": "--max-rounds",
    "max_usd": "--max-usd",
    "plan_cases": "--plan-cases",
    "plan_effect": "--plan-effect",
    "round_cases": "--round-cases",
    "stage_two_probability": "--stage-two-probability",
}


def flag_message(parameter: str, message: str) -> str:
    """A library error message about ``parameter`` with the parameter named by its flag.

    Args:
        parameter: The parameter the message names (a key of :data:`FLAGS`).
        message: The library's message.

    Returns:
        The message, ``parameter`` (with or without backquotes) replaced by its flag.

    Examples:
        >>> flag_message("round_cases", "`round_cases` must be at least 1, got 0")
        '--round-cases must be at least 1, got 0'
    """
    flag = FLAGS.get(parameter, parameter)
    return message.replace(f"`{parameter}`", flag)


@contextmanager
def settings_of_flags() -> Iterator[None]:
    """Show a settings object's validation error as a :class:`ConfigError`, never a traceback.

    A :class:`~pydantic.ValidationError` whose first error is a check of a parameter in
    :data:`FLAGS` (at any depth, e.g. ``run.concurrency``) becomes the library's message with
    the flag in it; any other names the setting (``run.run_id: ...``).

    Raises:
        ConfigError: The first error of the settings.
    """
    try:
        yield
    except ValidationError as exc:
        first = exc.errors()[0]
        parameter = str(first["loc"][-1]) if first["loc"] else ""
        cause = (first.get("ctx") or {}).get("error")
        if parameter in FLAGS and isinstance(cause, ValueError):
            raise ConfigError(flag_message(parameter, str(cause))) from None
        where = ".".join(str(part) for part in first["loc"]) or "(settings)"
        raise ConfigError(f"{where}: {cause if cause is not None else first['msg']}") from None
