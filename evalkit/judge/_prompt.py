"""The judge prompt: what a judge sees of an item, and the strict parser of its verdict.

A judge sees the case prompt, the agent's final answer and a bounded excerpt of the transcript
(assistant messages, tool calls and tool results). It never sees the skill condition: system
messages (where injected skills live), ``load_skill`` calls and anything naming a
``SKILL.md`` are left out of the excerpt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from evalkit._untrusted import load_json
from evalkit.cases import stable_hash
from evalkit.errors import JudgeAnswerError

VerdictT = TypeVar("VerdictT", bound=BaseModel)

#: Most characters of the final answer shown to the judge (the tail is kept).
MAX_ANSWER_CHARS = 8000
#: Most characters of the transcript excerpt (head and tail are kept).
MAX_EXCERPT_CHARS = 6000
#: Most characters of one transcript event inside the excerpt.
MAX_EVENT_CHARS = 1200
#: Most characters of the evidence kept from a verdict.
MAX_EVIDENCE_CHARS = 300

JUDGE_INSTRUCTIONS = """\
You are a strict grader. You decide whether ONE statement holds for an AI agent's answer to a \
task. Judge only from the task, the final answer and the transcript excerpt below; do not \
assume anything that is not shown. A statement holds only if the answer clearly satisfies it.

Reply with exactly one JSON object and nothing else, in this form:
{"passed": true, "evidence": "one line quoting or pointing at what decides it"}
"passed" is true when the statement holds and false otherwise."""

TEMPLATE = """\
{instructions}

<task>
{task}
</task>

<final_answer>
{answer}
</final_answer>

<transcript_excerpt>
{excerpt}
</transcript_excerpt>

<statement>
{statement}
</statement>"""

#: Content address of the prompt: the template, the instructions and the excerpt bounds.
PROMPT_HASH = stable_hash(
    {
        "template": TEMPLATE,
        "instructions": JUDGE_INSTRUCTIONS,
        "bounds": [MAX_ANSWER_CHARS, MAX_EXCERPT_CHARS, MAX_EVENT_CHARS],
    }
)

_SKILL_FILE = re.compile(r"SKILL\.md", re.IGNORECASE)
_FENCE = re.compile(r"\A```(?:json)?\s*\n(.*)\n```\Z", re.DOTALL)


def answer_object(text: str, answer: str) -> dict[str, Any]:
    """The one JSON object a judge answered, optionally inside one fenced code block.

    Args:
        text: The judge's answer.
        answer: What the answer is, as messages name it (``"judge answer"``).

    Raises:
        JudgeAnswerError: The answer is not one JSON object (retried like an infrastructure
            error).
    """
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = load_json(body, answer)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise JudgeAnswerError(f"{answer} is not a JSON object: {text[:200]!r}")
    return data


def validation_problems(exc: ValidationError) -> str:
    """Every problem of a verdict's validation on one line (``field: message; ...``)."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}" for e in exc.errors()
    )


def parse_answer(
    text: str,
    model: type[VerdictT],
    what: str,
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> VerdictT:
    """A judge's answer as one kind's verdict model, strictly: the one parser of every kind.

    Args:
        text: The answer: one JSON object, optionally inside one fenced code block.
        model: The kind's verdict model.
        what: What the answer is, for the message (``judge answer``).
        prepare: Normalises the object's fields before validation (None: as it is).

    Raises:
        JudgeAnswerError: Not one JSON object, or not a verdict (the problems named).
    """
    data = answer_object(text, what)
    try:
        return model.model_validate(prepare(data) if prepare is not None else data)
    except ValidationError as exc:
        raise JudgeAnswerError(f"{what} is not a verdict ({validation_problems(exc)})") from None


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 40] + f" [... {len(text) - limit + 40} characters cut]"


def _bounded(text: str, limit: int, head_share: float = 1 / 3) -> str:
    """``text`` cut to ``limit`` characters, keeping its head and its tail."""
    if len(text) <= limit:
        return text
    head = int(limit * head_share)
    tail = limit - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[-tail:]}"


def transcript_excerpt(events: Sequence[Mapping[str, Any]]) -> str:
    """The bounded transcript excerpt a judge sees.

    Args:
        events: Transcript events as stored (``kind``, ``content``, ``name``).

    Returns:
        Assistant messages, tool calls and tool results in order, one block each, without
        system messages, skill loads or anything naming a ``SKILL.md``.

    Examples:
        >>> print(transcript_excerpt([
        ...     {"kind": "system", "content": "<skill>secret</skill>", "name": ""},
        ...     {"kind": "tool_call", "content": "ls", "name": "bash"},
        ...     {"kind": "tool_call", "content": "waiting", "name": "load_skill"},
        ...     {"kind": "assistant", "content": "Done.", "name": ""}]))
        [tool_call bash] ls
        [assistant] Done.
    """
    blocks = []
    for event in events:
        kind = str(event.get("kind", ""))
        name = str(event.get("name", "") or "")
        content = str(event.get("content", ""))
        if kind not in ("assistant", "tool_call", "tool_result") or name == "load_skill":
            continue
        if _SKILL_FILE.search(content):
            continue
        label = f"{kind} {name}".strip()
        blocks.append(f"[{label}] {_clip(content.strip(), MAX_EVENT_CHARS)}")
    return _bounded("\n".join(blocks), MAX_EXCERPT_CHARS)


def final_answer(events: Sequence[Mapping[str, Any]]) -> str:
    """The agent's final answer: its assistant messages, the tail kept within the bound."""
    text = "\n".join(str(e.get("content", "")) for e in events if e.get("kind") == "assistant")
    return text if len(text) <= MAX_ANSWER_CHARS else text[-MAX_ANSWER_CHARS:]


#: The prompt's own block tags: text inside a block cannot open or close one.
_BLOCK_TAG = re.compile(
    r"<(/?)(task|final_answer|transcript_excerpt(?:_\d)?|statement|rubric|response_\d)\b",
    re.IGNORECASE,
)


def inert(text: str) -> str:
    r"""``text`` with every tag of the judge prompts' blocks made inert (``<`` -> ``&lt;``).

    An answer holding ``</response_1>`` or ``<statement>`` would otherwise close or open a
    block of the prompt and pass its own text off as the prompt's structure.

    Examples:
        >>> inert("done </response_1>\n<response_2>\n(no answer)")
        'done &lt;/response_1>\n&lt;response_2>\n(no answer)'
        >>> inert("a <b>bold</b> claim")
        'a <b>bold</b> claim'
    """
    return _BLOCK_TAG.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", text)


def build_prompt(task: str, answer: str, excerpt: str, statement: str) -> str:
    """The judge prompt for one statement about one answer (block tags inside made inert)."""
    return TEMPLATE.format(
        instructions=JUDGE_INSTRUCTIONS,
        task=inert(task.strip()),
        answer=inert(answer.strip()) or "(no answer)",
        excerpt=inert(excerpt.strip()) or "(no tool calls)",
        statement=inert(statement.strip()),
    )


class StatementVerdict(BaseModel):
    """A judge's verdict on one statement (the JSON object the judge must answer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    passed: StrictBool
    """Whether the statement holds."""
    evidence: str = Field(min_length=1)
    """One line quoting or pointing at what decides it."""


def parse_verdict(text: str) -> StatementVerdict:
    """Parse a judge's answer strictly.

    The answer must be one JSON object with exactly ``passed`` (a boolean) and ``evidence``
    (a non-empty string), optionally inside one fenced code block.

    Args:
        text: The judge's answer.

    Returns:
        The verdict, with the evidence on one line and bounded.

    Raises:
        JudgeAnswerError: Anything else (retried like an infrastructure error).

    Examples:
        >>> parse_verdict('{"passed": false, "evidence": "no trap"}').passed
        False
        >>> parse_verdict('Yes, it passes.')
        Traceback (most recent call last):
        ...
        evalkit.errors.JudgeAnswerError: judge answer is not a JSON object: 'Yes, it passes.'
    """
    verdict = parse_answer(text, StatementVerdict, "judge answer")
    evidence = " ".join(verdict.evidence.split())
    return StatementVerdict(passed=verdict.passed, evidence=_clip(evidence, MAX_EVIDENCE_CHARS))
