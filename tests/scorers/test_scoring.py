"""Deterministic scoring: negation context, anti-patterns, workflow order, verifiers."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cases import AntiPatternRule, Case, find_affirmed, load_suite
from evalkit.providers import AgentResponse, Event
from evalkit.scorers import check_case, infer_skill, score_item

SLEEP = AntiPatternRule(id="blind-sleep", pattern=r"\bsleep\s+\d+", severity="error")
TMUX = AntiPatternRule(id="tmux", pattern=r"\btmux\b", severity="warning")


def answer(text: str, *tool_calls: tuple[str, str]) -> AgentResponse:
    events = [Event("tool_call", content, name=name) for name, content in tool_calls]
    return AgentResponse(events=(*events, Event("assistant", text)))


@pytest.mark.parametrize(
    ("text", "affirmed"),
    [
        ("Use agent-tty instead of tmux.", False),
        ("Never use tmux for this.", False),
        ("Don't reach for tmux here.", False),
        ("Do not use tmux; it hides the output.", False),
        ("Avoid tmux in CI.", False),
        ("Rather than tmux, use the session API.", False),
        ("Start a tmux session and attach to it.", True),
        ("tmux is what I would use.", True),
        # a negation in an earlier sentence does not reach into the next one
        ("That is not ideal. Use tmux.", True),
        # far away (beyond the window) the cue no longer applies
        (
            "Do not forget that the long-running build, once it completes, should run under tmux",
            True,
        ),
    ],
)
def test_negation_context(text: str, affirmed: bool) -> None:
    assert bool(find_affirmed(r"\btmux\b", text)) is affirmed


def _case(**kw: object) -> Case:
    base: dict[str, object] = {"id": "c", "prompt": "p", "expected_patterns": ["poll", "timeout"]}
    base.update(kw)
    return Case.model_validate(base)


def test_expected_patterns_drive_score() -> None:
    case = _case()
    full = score_item(case, answer("Poll with a timeout."), None, pass_threshold=0.6)
    half = score_item(case, answer("Poll until it is up."), None, pass_threshold=0.6)
    none = score_item(case, answer("Wait a bit."), None, pass_threshold=0.6)
    assert (full.score, full.passed) == (1.0, True)
    assert 0 < half.score < 1
    assert none.score == 0.0 and not none.passed


def test_forbidden_pattern_negated_is_not_penalised() -> None:
    case = _case(forbidden_patterns=[r"\bsleep\s+\d+"])
    ok = score_item(
        case, answer("Poll with a timeout instead of sleep 5."), None, pass_threshold=0.6
    )
    bad = score_item(case, answer("Poll with a timeout, then sleep 5."), None, pass_threshold=0.6)
    assert ok.score == 1.0
    assert bad.score < 1.0
    forbidden = next(c for c in bad.components if c.component == "forbidden_patterns")
    assert not forbidden.passed and "sleep" in forbidden.detail


def test_error_anti_pattern_fails_even_with_full_score_elsewhere() -> None:
    case = _case()
    result = score_item(
        case,
        answer("Poll with a timeout. Or just sleep 10."),
        None,
        pass_threshold=0.1,
        suite_anti_patterns=[SLEEP, TMUX],
    )
    assert not result.passed
    assert result.gate_failures == ("anti_patterns",)
    warned = score_item(
        case,
        answer("Poll with a timeout inside tmux."),
        None,
        pass_threshold=0.6,
        suite_anti_patterns=[SLEEP, TMUX],
    )
    assert warned.passed and warned.score < 1.0  # a warning lowers the score but does not gate


def test_workflow_partial_order() -> None:
    case = _case(
        expected_patterns=[],
        workflow_checks=[
            {"id": "reproduce", "pattern": r"pytest .*--count"},
            {"id": "fix", "pattern": r"git commit", "after": "reproduce"},
        ],
    )
    in_order = answer(
        "done", ("bash", "pytest tests/x.py --count 50"), ("bash", "git commit -am fix")
    )
    reversed_ = answer(
        "done", ("bash", "git commit -am fix"), ("bash", "pytest tests/x.py --count 50")
    )
    assert score_item(case, in_order, None, pass_threshold=0.6).passed
    result = score_item(case, reversed_, None, pass_threshold=0.6)
    workflow = next(c for c in result.components if c.component == "workflow")
    assert workflow.value == 1 and "fix: not after reproduce" in workflow.detail


def test_skill_inference_from_tool_calls() -> None:
    assert infer_skill(answer("x", ("load_skill", "safe-shell"))) == "safe-shell"
    read = ("Read", "/home/u/.claude/skills/flaky-test-triage/SKILL.md")
    assert infer_skill(answer("x", read)) == "flaky-test-triage"
    assert infer_skill(answer("I know about skills/ in general")) == "none"


def test_execution_verifier_judges_the_workspace(tmp_path: Path) -> None:
    suite = load_suite(Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "tiny")
    case = suite.case("make-report")
    response = answer("Counted with wc -l.", ("bash", "wc -l < data.txt > report.txt"))
    (tmp_path / "report.txt").write_text("3\n")
    good = score_item(case, response, tmp_path, pass_threshold=0.6)
    assert good.passed
    (tmp_path / "report.txt").write_text("4\n")  # the agent claims success; the file says no
    wrong = score_item(case, response, tmp_path, pass_threshold=0.6)
    assert not wrong.passed and "verifier" in wrong.gate_failures
    (tmp_path / "report.txt").unlink()
    missing = score_item(case, response, tmp_path, pass_threshold=0.6)
    verifier = next(c for c in missing.components if c.component == "verifier")
    assert verifier.value == 0 and "missing" in verifier.detail


def test_command_and_json_checks(tmp_path: Path) -> None:
    case = Case.model_validate(
        {
            "id": "cfg",
            "lane": "execution",
            "prompt": "set the port",
            "verifier": [
                {
                    "kind": "json_path_equals",
                    "path": "config.json",
                    "json_path": "server.ports.0",
                    "equals": 8080,
                },
                {"kind": "command", "run": "grep -q 8080 config.json"},
            ],
        }
    )
    (tmp_path / "config.json").write_text('{"server": {"ports": [8080, 9090]}}')
    assert score_item(case, answer("done"), tmp_path, pass_threshold=0.6).passed
    (tmp_path / "config.json").write_text('{"server": {"ports": [80]}}')
    result = score_item(case, answer("done"), tmp_path, pass_threshold=0.6)
    verifier = next(c for c in result.components if c.component == "verifier")
    assert verifier.value == 0 and "found 80" in verifier.detail


def test_verifier_cannot_escape_workspace(tmp_path: Path) -> None:
    case = Case.model_validate(
        {
            "id": "esc",
            "lane": "execution",
            "prompt": "p",
            "verifier": [{"kind": "file_exists", "path": "../../etc/passwd"}],
        }
    )
    assert not score_item(case, answer("x"), tmp_path, pass_threshold=0.6).passed


def test_reference_check_flags_a_case_whose_reference_fails() -> None:
    suite = load_suite(Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "tiny")
    assert check_case(suite, suite.case("wait-server")) == []
    broken = suite.case("wait-server").model_copy(update={"reference": "Just wait."})
    problems = check_case(suite, broken)
    assert problems and "expected_patterns" in problems[0]


def test_period_inside_a_call_is_not_a_sentence_break() -> None:
    assert not find_affirmed(r"sleep\(\d+\)", "Never add time.sleep(5) to a test.")
    assert find_affirmed(r"sleep\(\d+\)", "Fine. Add time.sleep(5) to the test.")
