"""What a terminal shows of some output, through the ``pyte`` terminal emulator.

A terminal's line discipline turns each newline into CR LF (``onlcr``); the emulator is fed
the same. Everything else reaches it as written, so a carriage return, ``ESC[2K`` or a C1 CSI
in the output moves the cursor or erases here as it would on a real terminal.
"""

from __future__ import annotations

import re

import pyte

from evalkit._bidi import BIDI_CONTROLS, TERMINAL_CONTROLS

#: What no text output may hold: every display control but newline and tab.
FORBIDDEN = (TERMINAL_CONTROLS | BIDI_CONTROLS) - {"\n", "\t"}
#: An SGR sequence (colour, bold): the only escape sequence rich's styles write in a line.
SGR = re.compile(r"\x1b\[[0-9;]*m")


def screen(raw: bytes) -> list[str]:
    """The lines a terminal shows after receiving ``raw`` (trailing blanks dropped)."""
    text = raw.decode("utf-8")
    lines = text.split("\n")
    columns = max(80, *(len(line.expandtabs(8)) + 8 for line in lines))  # no line wraps
    emulator = pyte.Screen(columns, len(lines) + 2)
    pyte.ByteStream(emulator).feed(text.replace("\n", "\r\n").encode("utf-8"))
    shown = [line.rstrip() for line in emulator.display]
    while shown and not shown[-1]:
        shown.pop()
    return shown


def printed_lines(text: str) -> list[str]:
    """The lines of ``text`` as a reader would paste them (tabs to the terminal's stops)."""
    lines = [line.expandtabs(8).rstrip() for line in SGR.sub("", text).split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def assert_text_only(raw: bytes, *, styled: bool = False) -> list[str]:
    """Assert that ``raw`` holds only text and that the terminal shows exactly that text.

    Args:
        raw: The bytes a command wrote.
        styled: rich styled the output: SGR sequences are allowed, and nothing else.

    Returns:
        The screen's lines.
    """
    text = raw.decode("utf-8")
    rest = SGR.sub("", text) if styled else text
    found = sorted({f"U+{ord(c):04X}" for c in rest if c in FORBIDDEN})
    assert not found, f"display controls reached the output: {found}"
    shown = screen(raw)
    assert shown == printed_lines(text), "the screen differs from the text printed"
    return shown
