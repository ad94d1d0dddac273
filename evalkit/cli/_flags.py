"""The command-line flag of each library parameter, for errors the library raises about them.

Library errors name a parameter (``max_items must be a positive number``); where the command
line passes a flag's value to that parameter, its messages name the flag instead
(``--max-items must be a positive number``), as a user of the command line knows it, through the
one table :data:`FLAGS`. The shared settings of :mod:`evalkit._settings` (``--confidence``,
``--concurrency``, ``--threshold``, ``--round-cases``, ...) are in it from their own table;
their messages already name both the flag and the parameter
(``--concurrency / concurrency must be an integer >= 1, but 0 was passed``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from evalkit._settings import SETTINGS
from evalkit.errors import ConfigError

#: Library parameter -> the flag that sets it (the shared settings from their table).
FLAGS: dict[str, str] = {
    **{setting.name: setting.flag for setting in SETTINGS if setting.flag},
    "adaptive_trials": "--adaptive-trials",
    "allocate_trials": "--allocate-trials",
    "futility_beta": "--futility-beta",
    "max_items": "--max-items",
    "max_rounds": "--max-rounds",
    "max_usd": "--max-usd",
    "plan_cases": "--plan-cases",
    "plan_effect": "--plan-effect",
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
        >>> flag_message("max_items", "`max_items` must be a positive number, got 0")
        '--max-items must be a positive number, got 0'
    """
    flag = FLAGS.get(parameter, parameter)
    return message.replace(f"`{parameter}`", flag)


@contextmanager
def settings_of_flags() -> Iterator[None]:
    """Show a settings object's bad value with the flag it came from, never a traceback.

    Building an options object (:class:`evalkit._options.Options`) with a bad value raises a
    :class:`ConfigError` whose ``setting`` names the field; a field in :data:`FLAGS` is
    rewritten as its flag (``--max-items must be a positive number, got 0``).

    Raises:
        ConfigError: The settings' first error, worded for the command line.
    """
    try:
        yield
    except ConfigError as exc:
        message = str(exc)
        for parameter in re.findall(r"`(\w+)`", message):
            message = flag_message(parameter, message)
        if message != str(exc):
            raise ConfigError(message, setting=exc.setting) from None
        raise
