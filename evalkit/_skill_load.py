"""Which skill a transcript event loads: the one rule the reports and the forensics share."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: A tool call reading ``skills/NAME/SKILL.md`` loads skill ``NAME`` (Claude Code, Codex).
_SKILL_PATH = re.compile(r"skills/([^/\s\"']+)/SKILL\.md")


def skill_loaded(event: Mapping[str, Any]) -> str | None:
    """The skill an event loads: a ``load_skill`` call, or a tool call reading a ``SKILL.md``.

    Args:
        event: One transcript event (``kind``, ``name``, ``content``).

    Returns:
        The skill's name, or None when the event loads no skill.

    Examples:
        >>> skill_loaded({"kind": "tool_call", "name": "load_skill", "content": "safe-shell"})
        'safe-shell'
        >>> skill_loaded({"kind": "tool_call", "name": "bash", "content": "cat skills/x/SKILL.md"})
        'x'
        >>> skill_loaded({"kind": "assistant", "content": "skills/x/SKILL.md"}) is None
        True
    """
    if str(event.get("kind", "")) != "tool_call":
        return None
    content = str(event.get("content", "") or "")
    if str(event.get("name", "") or "") == "load_skill":
        return content.strip().strip("\"'") or None
    match = _SKILL_PATH.search(content)
    return match.group(1) if match else None
