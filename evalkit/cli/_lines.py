"""Lines of text output: bold words on a terminal, plain text anywhere else.

``evalkit compare`` prints a few lines whose verdicts are bold on a terminal. Off a terminal
(a pipe, a file, captured output) rich would print the same characters without styles, so
there each line is written as it is and rich, some 15 ms of start-up, is never imported.
A line is never wrapped: a terminal wraps it for the eye, and a pipe gets it whole.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.console import Console


class Bold(str):
    """A part of a line printed bold on a terminal."""

    __slots__ = ()


def styled(file: TextIO) -> bool:
    """Whether rich would style output to ``file`` (its terminal test, without Jupyter's).

    ``TTY_COMPATIBLE=1`` or a non-empty ``FORCE_COLOR`` force styles, ``TTY_COMPATIBLE=0``
    forbids them; otherwise a terminal is styled.

    Args:
        file: The stream written to.

    Returns:
        True when the lines go through rich.
    """
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return bool(file.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Lines:
    """Writes lines of text and :class:`Bold` parts to standard output.

    Examples:
        >>> Lines().line("verdict: ", Bold("improved"), "  delta +4.0 pp [+1.0 pp, +7.0 pp]")
        verdict: improved  delta +4.0 pp [+1.0 pp, +7.0 pp]
    """

    def __init__(self) -> None:
        self._console: Console | None = None
        if styled(sys.stdout):
            from evalkit._terminal import console

            self._console = console(highlight=False, emoji=False)

    def line(self, *parts: str) -> None:
        """Write one line made of ``parts`` (text as it is: no markup is read).

        Args:
            parts: Text, with :class:`Bold` for the parts printed bold on a terminal.
        """
        if self._console is None:
            print("".join(parts))
            return
        from rich.text import Text

        from evalkit._bidi import neutralize_controls

        # neutralised before rich reads it (rich's Text drops a carriage return silently)
        shown = [neutralize_controls(p) for p in parts]
        text = Text.assemble(*((s, "bold") if isinstance(p, Bold) else s
                               for p, s in zip(parts, shown, strict=True)))
        self._console.print(text, soft_wrap=True)
