"""Samples that did not finish, as the importers record them: a score row naming what happened.

Inspect AI scorers can mark a score as not a real verdict: ``metadata: {"incomplete": true}``,
or an explanation that starts ``INCOMPLETE`` (e.g. ``"INCOMPLETE: HTTP timeout after 120 s"``
when the agent's server did not answer). Such a sample failed because it did not finish, not
because it answered wrong, so the importer adds an ``incomplete`` score row whose detail is the
scorer's explanation; :mod:`evalkit.results` reads it as the sample's primary cause
(``timeout`` when the explanation names one, else ``incomplete``).
"""

from __future__ import annotations

from typing import Any

from evalkit.interop._import_common import as_dict, source_text

#: The score component recording a scorer that marked its score incomplete.
INCOMPLETE_COMPONENT = "incomplete"
_MARKER = "INCOMPLETE"


def is_incomplete(score: dict[str, Any]) -> bool:
    """Whether a scorer marked its score incomplete (metadata flag or explanation prefix).

    Examples:
        >>> is_incomplete({"value": "I", "metadata": {"incomplete": True}})
        True
        >>> is_incomplete({"value": "I", "explanation": "INCOMPLETE: HTTP timeout"})
        True
        >>> is_incomplete({"value": "I", "explanation": "wrong port"})
        False
    """
    if as_dict(score.get("metadata")).get("incomplete") is True:
        return True
    explanation = score.get("explanation")
    return isinstance(explanation, str) and explanation.lstrip().startswith(_MARKER)


def incomplete_row(scorer: str, score: dict[str, Any]) -> dict[str, Any]:
    """The ``incomplete`` score row of a scorer that marked its failing score incomplete.

    Args:
        scorer: The scorer's name.
        score: Its entry in the sample's ``scores``.

    Returns:
        The row: ``passed`` False, detail ``"SCORER: EXPLANATION"`` (the explanation cleaned,
        redacted and cut, never dropped; ``"SCORER marked its score incomplete"`` without one).

    Examples:
        >>> incomplete_row("agent_scorer", {"explanation": "INCOMPLETE: HTTP timeout"})["detail"]
        'agent_scorer: INCOMPLETE: HTTP timeout'
    """
    explanation = source_text(score.get("explanation"))
    detail = f"{scorer}: {explanation}" if explanation else f"{scorer} marked its score incomplete"
    return {
        "component": INCOMPLETE_COMPONENT,
        "value": None,
        "max_value": None,
        "passed": False,
        "detail": detail,
    }
