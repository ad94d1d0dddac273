"""Redaction of secrets from transcripts before they are returned, stored or replayed.

Every real-agent provider passes its :class:`~evalkit.providers.AgentResponse` through
:func:`redact_response`: the values of API-key environment variables, bearer tokens,
``x-api-key`` headers and well-known key shapes (``sk-...``, ``sk-ant-...``, AWS, GitHub,
Slack tokens) are replaced by ``[REDACTED]`` in every event and anywhere in ``extra``.

Examples:
    >>> redact_text("curl -H 'Authorization: Bearer abc.def-123456' https://x")
    "curl -H 'Authorization: Bearer [REDACTED]' https://x"
    >>> redact_text("key=sk-proj-AAAAbbbbCCCCdddd1234", secrets=())
    'key=[REDACTED]'
    >>> redact_text("the token is hunter2-hunter2", secrets=("hunter2-hunter2",))
    'the token is [REDACTED]'
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from evalkit.providers._transcript import AgentResponse, Event

MARK = "[REDACTED]"

#: Environment variables whose values are secrets whatever their shape.
SECRET_ENV_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN", "_ACCESS_TOKEN", "_SECRET", "_SECRET_KEY")

#: Secret values shorter than this are not redacted literally (they would mangle prose).
MIN_LITERAL = 8

_PATTERNS = (
    # header-style credentials: keep the header name, drop the value
    re.compile(r"(?i)(\bauthorization\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+)[^\s\"',;]+"),
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?i)(\b(?:x-api-key|api[_-]?key|access[_-]?token)[\"']?\s*[:=]\s*[\"']?)"
               r"[A-Za-z0-9._~+/=-]{8,}"),
    # well-known key shapes
    re.compile(r"()\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}"),
    re.compile(r"()\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"()\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    re.compile(r"()\bxox[abprs]-[A-Za-z0-9-]{10,}"),
)


def secret_values(extra_env_names: Iterable[str] = ()) -> tuple[str, ...]:
    """Values of the secret environment variables of this process.

    Args:
        extra_env_names: More variable names to treat as secrets (e.g. a provider's
            ``api_key_env``).

    Returns:
        Distinct values at least :data:`MIN_LITERAL` characters long, longest first.
    """
    names = set(extra_env_names)
    names.update(k for k in os.environ if k.upper().endswith(SECRET_ENV_SUFFIXES))
    values = {os.environ.get(n, "") for n in names}
    return tuple(sorted((v for v in values if len(v) >= MIN_LITERAL), key=len, reverse=True))


def redact_text(text: str, secrets: Iterable[str] | None = None) -> str:
    """Replace secrets in one string.

    Args:
        text: Any text.
        secrets: Literal secret values (those shorter than :data:`MIN_LITERAL` are ignored);
            default: :func:`secret_values`.

    Returns:
        The text with every secret replaced by ``[REDACTED]``.
    """
    for value in secret_values() if secrets is None else secrets:
        if len(value) >= MIN_LITERAL and value in text:
            text = text.replace(value, MARK)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + MARK, text)
    return text


def redact_value(value: Any, secrets: Iterable[str] | None = None) -> Any:
    """Redact every string inside a JSON-like value (dicts, lists, tuples, strings).

    Args:
        value: The value.
        secrets: Literal secret values; default: :func:`secret_values`.

    Returns:
        A copy with redacted strings (dict keys included); other values are returned as is.
    """
    known = tuple(secret_values() if secrets is None else secrets)
    if isinstance(value, str):
        return redact_text(value, known)
    if isinstance(value, dict):
        return {redact_value(k, known): redact_value(v, known) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v, known) for v in value)
    return value


def redact_response(
    response: AgentResponse, extra_env_names: Iterable[str] = ()
) -> AgentResponse:
    """Redact a whole response: every event's content and everything in ``extra``.

    Args:
        response: The provider's response.
        extra_env_names: Environment variables holding this provider's credentials.

    Returns:
        A redacted copy.
    """
    known = secret_values(extra_env_names)
    events = tuple(
        Event(e.kind, redact_text(e.content, known), e.name) for e in response.events
    )
    return replace(response, events=events, extra=redact_value(dict(response.extra), known))
