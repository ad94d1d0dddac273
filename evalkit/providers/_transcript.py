"""Transcripts: the normalized record of what an agent said and did."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

EventKind = Literal["system", "user", "assistant", "tool_call", "tool_result"]


@dataclass(frozen=True)
class Event:
    """One transcript event.

    Attributes:
        kind: ``system``, ``user``, ``assistant`` (text), ``tool_call`` or ``tool_result``.
        content: Text of the message, the tool call's input (e.g. the shell command), or the
            tool's output.
        name: Tool name for tool calls and results (``bash``, ``load_skill``, ``Read`` ...).
    """

    kind: EventKind
    content: str
    name: str = ""


@dataclass(frozen=True)
class AgentResponse:
    """What a provider returns for one work item.

    Attributes:
        events: The transcript, in order.
        model: The model that answered (as reported by the provider).
        input_tokens: Prompt tokens consumed.
        output_tokens: Completion tokens produced.
        cost_usd: Cost of the invocation.
        n_steps: Agent steps (turns or tool calls).
        skill_loaded: Whether the agent loaded a skill, when the provider knows for sure;
            ``None`` lets the scorers infer it from the transcript.
        extra: Provider-specific details kept with the transcript (never parsed by scorers).
    """

    events: tuple[Event, ...]
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    n_steps: int = 0
    skill_loaded: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def final_text(self) -> str:
        """Text of the assistant messages, joined by newlines."""
        return "\n".join(e.content for e in self.events if e.kind == "assistant")

    def scored_text(self) -> str:
        """What text scorers read: assistant messages and tool-call inputs, in order."""
        return "\n".join(e.content for e in self.events if e.kind in ("assistant", "tool_call"))

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict (inverse of :meth:`from_json`)."""
        return {
            "events": [{"kind": e.kind, "content": e.content, "name": e.name} for e in self.events],
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "n_steps": self.n_steps,
            "skill_loaded": self.skill_loaded,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentResponse:
        """Rebuild a response written by :meth:`to_json`.

        Raises:
            KeyError: A required key is missing.
            TypeError: A value has the wrong type.
        """
        events = tuple(Event(**e) for e in data["events"])
        fields = {k: v for k, v in data.items() if k != "events"}
        return cls(events=events, **fields)


#: Anthropic usage fields that count as input: fresh tokens, cache writes and cache reads.
ANTHROPIC_INPUT_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def anthropic_input_tokens(usage: Mapping[str, Any]) -> int:
    """Input tokens of an Anthropic ``usage`` object (Messages API or Claude Code's result).

    Examples:
        >>> anthropic_input_tokens({"input_tokens": 3, "cache_read_input_tokens": 40})
        43
    """
    return sum(int(usage.get(k) or 0) for k in ANTHROPIC_INPUT_FIELDS)
