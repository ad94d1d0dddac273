"""What a judge sees, and the strict parser of what it answers."""

from __future__ import annotations

import pytest

from evalkit.errors import InfraError, JudgeAnswerError
from evalkit.judge import build_prompt, final_answer, parse_verdict, transcript_excerpt
from evalkit.judge._prompt import MAX_EXCERPT_CHARS


@pytest.mark.parametrize(
    "text",
    [
        "It passes.",
        '{"passed": "true", "evidence": "x"}',  # a string is not a boolean
        '{"passed": 1, "evidence": "x"}',
        '{"passed": true}',
        '{"passed": true, "evidence": ""}',
        '{"passed": true, "evidence": "x", "confidence": 0.9}',
        '[{"passed": true, "evidence": "x"}]',
        '{"passed": true, "evidence": "x"} and more text',
        "",
    ],
)
def test_anything_but_a_verdict_is_a_retryable_judge_error(text: str) -> None:
    with pytest.raises(JudgeAnswerError) as info:
        parse_verdict(text)
    assert isinstance(info.value, InfraError)


def test_a_verdict_is_parsed_with_one_line_evidence() -> None:
    verdict = parse_verdict('  {"passed": true, "evidence": "uses\\n  until   curl"}\n')
    assert verdict.passed is True
    assert verdict.evidence == "uses until curl"
    fenced = parse_verdict('```json\n{"passed": false, "evidence": "no deadline"}\n```')
    assert (fenced.passed, fenced.evidence) == (False, "no deadline")


def test_the_excerpt_leaves_out_the_skill_and_the_condition() -> None:
    events = [
        {"kind": "system", "content": "<skill name='waiting'>SECRET SKILL</skill>", "name": ""},
        {"kind": "user", "content": "the task", "name": ""},
        {"kind": "tool_call", "content": "waiting", "name": "load_skill"},
        {"kind": "tool_result", "content": "SECRET SKILL", "name": "load_skill"},
        {"kind": "tool_call", "content": "cat ~/.claude/skills/waiting/SKILL.md", "name": "bash"},
        {"kind": "tool_call", "content": "curl -fsS localhost:8080/health", "name": "bash"},
        {"kind": "tool_result", "content": "exit code 0", "name": "bash"},
        {"kind": "assistant", "content": "Poll with until.", "name": ""},
    ]
    excerpt = transcript_excerpt(events)
    assert "SECRET SKILL" not in excerpt
    assert "SKILL.md" not in excerpt
    assert "the task" not in excerpt
    assert "[tool_call bash] curl -fsS localhost:8080/health" in excerpt
    assert "[tool_result bash] exit code 0" in excerpt
    assert excerpt.endswith("[assistant] Poll with until.")
    prompt = build_prompt("the task", final_answer(events), excerpt, "Polls readiness")
    assert "SECRET SKILL" not in prompt
    assert "<statement>\nPolls readiness\n</statement>" in prompt


def test_the_excerpt_is_bounded_keeping_head_and_tail() -> None:
    events = [
        {"kind": "tool_call", "content": f"step {i} " + "x" * 500, "name": "bash"}
        for i in range(100)
    ]
    excerpt = transcript_excerpt(events)
    assert len(excerpt) <= MAX_EXCERPT_CHARS + 60
    assert "step 0 " in excerpt and "step 99 " in excerpt
    assert "characters omitted" in excerpt
