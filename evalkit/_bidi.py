"""Bidi control characters, shown instead of obeyed on every page evalkit renders."""

from __future__ import annotations

#: Bidirectional formatting characters: embeddings and overrides (U+202A-202E), isolates
#: (U+2066-2069), the left-to-right / right-to-left marks (U+200E, U+200F) and the Arabic
#: letter mark (U+061C). In a case id or model text they reorder what a reviewer sees
#: ("Trojan Source": ``evil\u202egnp.exe`` displays as ``evilexe.png``).
BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)
_BIDI_TABLE = {ord(char): f"\u27e8U+{ord(char):04X}\u27e9" for char in BIDI_CONTROLS}


def neutralize_bidi(text: str) -> str:
    r"""Replace every bidi control character by a visible marker such as ``⟨U+202E⟩``.

    Applied to the whole rendered page, so no id, label or model text can reorder what the
    reader sees; the marker shows where the character was.

    Examples:
        >>> neutralize_bidi("evil\u202egnp.exe")
        'evil⟨U+202E⟩gnp.exe'
    """
    return text.translate(_BIDI_TABLE)
