"""Characters that steer a display, shown instead of obeyed wherever evalkit shows run data.

Two tables, one rule: a character that would move the cursor, erase, recolour, set the
clipboard (OSC 52) or reorder text is replaced by a visible marker such as ``⟨U+001B⟩``, so
what a reader sees is what they would copy and paste.

- :func:`neutralize_bidi` replaces the bidi controls only; it is applied to whole rendered
  HTML pages, where newlines, tabs and other C0 characters are harmless.
- :func:`neutralize_controls` replaces the bidi controls and every C0 control except newline
  and tab (carriage return, backspace and ESC, which starts CSI and OSC sequences, among
  them), DEL and every C1 control (``U+0080``-``U+009F``, where ``U+009B`` is a one-character
  CSI and ``U+009D`` an OSC). It is what terminal output and the JSON that pages display go
  through.
"""

from __future__ import annotations

#: Bidirectional formatting characters: embeddings and overrides (U+202A-202E), isolates
#: (U+2066-2069), the left-to-right / right-to-left marks (U+200E, U+200F) and the Arabic
#: letter mark (U+061C). In a case id or model text they reorder what a reviewer sees
#: ("Trojan Source": ``evil\u202egnp.exe`` displays as ``evilexe.png``).
BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)

#: Terminal controls: C0 but newline and tab, DEL, and C1.
TERMINAL_CONTROLS = frozenset(
    {chr(code) for code in range(0x20) if chr(code) not in "\n\t"}
    | {"\x7f"}
    | {chr(code) for code in range(0x80, 0xA0)}
)


def _marker(char: str) -> str:
    return f"\u27e8U+{ord(char):04X}\u27e9"


_BIDI_TABLE = {ord(char): _marker(char) for char in BIDI_CONTROLS}
_CONTROL_TABLE = {ord(char): _marker(char) for char in BIDI_CONTROLS | TERMINAL_CONTROLS}


def neutralize_bidi(text: str) -> str:
    r"""Replace every bidi control character by a visible marker such as ``⟨U+202E⟩``.

    Applied to the whole rendered page, so no id, label or model text can reorder what the
    reader sees; the marker shows where the character was.

    Examples:
        >>> neutralize_bidi("evil\u202egnp.exe")
        'evil⟨U+202E⟩gnp.exe'
    """
    return text.translate(_BIDI_TABLE)


def neutralize_controls(text: str) -> str:
    r"""Replace every control that steers a display by a visible marker; keep ``\n`` and ``\t``.

    Examples:
        >>> neutralize_controls("ok\r\x1b[2Knext step: run: touch x")
        'ok⟨U+000D⟩⟨U+001B⟩[2Knext step: run: touch x'
        >>> neutralize_controls("a\tb\n\u202ec")
        'a\tb\n⟨U+202E⟩c'
    """
    return text.translate(_CONTROL_TABLE)
