"""Case patterns: compiled once, and matched with an understanding of negation context.

"Use a wait loop instead of ``sleep 5``" mentions ``sleep 5`` without recommending it. A match
counts as *affirmed* unless a negation cue stands before it in the same sentence, within a
short window.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: Characters before a match that are searched for a negation cue.
NEGATION_WINDOW = 48

_CUES = re.compile(
    r"(?:\binstead\s+of\b|\brather\s+than\b|\bavoid(?:s|ing)?\b|\bnever\b|\bdon'?t\b|\bdo\s+not\b"
    r"|\bdoes\s+not\b|\bdoesn'?t\b|\bnot\b|\bno\b|\bwithout\b|\bstop\s+using\b|\bnor\b"
    r"|\bbad\s+idea\b|\banti-?pattern\b|\bshould\s*n'?t\b|\bmust\s*n'?t\b|\bnot\s+use\b"
    r"|\breplac(?:e|es|ing)\b)",
    re.IGNORECASE,
)
_SENTENCE_BREAK = re.compile(r"[.!?;]\s|\n")


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a case pattern: case-insensitive and multiline.

    Args:
        pattern: A regular expression from a case or suite file (validated at load time).

    Returns:
        The compiled pattern (cached).
    """
    return re.compile(pattern, re.IGNORECASE | re.MULTILINE)


def is_negated(text: str, start: int) -> bool:
    """Whether the match starting at ``start`` sits in a negation context.

    Args:
        text: The whole text.
        start: Offset where the match begins.

    Returns:
        True if a negation cue precedes the match within the window and the same sentence.

    Examples:
        >>> text = "Use a polling loop instead of sleep 5."
        >>> is_negated(text, text.index("sleep"))
        True
        >>> text = "Run sleep 5 and hope."
        >>> is_negated(text, text.index("sleep"))
        False
    """
    window = text[max(0, start - NEGATION_WINDOW) : start]
    breaks = list(_SENTENCE_BREAK.finditer(window))
    if breaks:
        window = window[breaks[-1].end() :]
    return bool(_CUES.search(window))


def find_affirmed(pattern: str, text: str) -> list[re.Match[str]]:
    """Matches of ``pattern`` in ``text`` that are not negated.

    Args:
        pattern: A regular expression (matched case-insensitively).
        text: The text to search.

    Returns:
        The affirmed matches, in order.

    Examples:
        >>> [m.group(0) for m in find_affirmed(r"tmux", "Never use tmux. Use tmux here.")]
        ['tmux']
    """
    return [m for m in compile_pattern(pattern).finditer(text) if not is_negated(text, m.start())]


def first_match(pattern: str, text: str) -> int | None:
    """Offset of the first match of ``pattern`` (negations included), or None."""
    match = compile_pattern(pattern).search(text)
    return match.start() if match else None
