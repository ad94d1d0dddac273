"""Redaction of a provider's response before it is returned, stored or replayed.

Every real-agent provider passes its :class:`~evalkit.providers.AgentResponse` through
:func:`redact_response`, and registers the variable it reads its key from
(:func:`~evalkit._redact.register_secret_env`), so the runner's redaction of each item's
outcome knows the key too. The patterns and the transformations they catch are described in
:mod:`evalkit._redact`.

Examples:
    >>> redact_text("curl -H 'Authorization: Bearer abc.def-123456' https://x")
    "curl -H 'Authorization: Bearer [REDACTED]' https://x"
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from evalkit._redact import redact_text, redact_value, secret_values
from evalkit.providers._transcript import AgentResponse, Event


def redact_response(
    response: AgentResponse, extra_env_names: Iterable[str] = ()
) -> AgentResponse:
    """Redact a whole response: every event's content and name, everything in ``extra``.

    Args:
        response: The provider's response.
        extra_env_names: Environment variables holding this provider's credentials.

    Returns:
        A redacted copy.
    """
    known = secret_values(extra_env_names)
    events = tuple(
        Event(e.kind, redact_text(e.content, known), redact_text(e.name, known))
        for e in response.events
    )
    return replace(
        response,
        events=events,
        model=redact_text(response.model, known),
        extra=redact_value(dict(response.extra), known),
    )
