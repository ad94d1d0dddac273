"""The rule that combines the scorers with the judged statements."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evalkit.cases import Case
from evalkit.judge import Graded, combine, statements


def _graded(case: Case, verdicts: list[bool]) -> list[Graded]:
    return [Graded(s, v, "e") for s, v in zip(statements(case), verdicts, strict=True)]


def test_a_judged_rubric_needs_its_share_and_every_expectation_is_a_gate() -> None:
    case = Case(id="c", prompt="p", expectations=("must",), rubric=("a", "b", "c"),
                rubric_pass=0.6)
    assert [s.component for s in statements(case)] == [
        "expectation:1", "rubric:1", "rubric:2", "rubric:3"]
    ok = combine(case, _graded(case, [True, True, True, False]), scored_passed=True,
                 scored_score=0.8, has_scorers=True)
    assert ok.judge_passed and ok.passed
    assert ok.judge_score == pytest.approx(0.75)
    assert ok.score == pytest.approx((0.8 + 0.75) / 2)
    short = combine(case, _graded(case, [True, True, False, False]), scored_passed=True,
                    scored_score=1.0, has_scorers=True)
    assert not short.judge_passed and not short.passed  # 1/3 < 0.6 of the rubric
    gate = combine(case, _graded(case, [False, True, True, True]), scored_passed=True,
                   scored_score=1.0, has_scorers=True)
    assert not gate.passed and gate.judge_score == pytest.approx(0.75)
    scorers_fail = combine(case, _graded(case, [True] * 4), scored_passed=False,
                           scored_score=0.2, has_scorers=True)
    assert scorers_fail.judge_passed and not scorers_fail.passed


def test_a_case_judged_only_is_decided_by_the_judge() -> None:
    case = Case(id="c", prompt="p", expectations=("x", "y"))
    result = combine(case, _graded(case, [True, True]), scored_passed=False, scored_score=0.0,
                     has_scorers=False)
    assert (result.passed, result.score) == (True, 1.0)


def test_rubric_pass_needs_a_rubric() -> None:
    with pytest.raises(ValidationError, match="'rubric_pass' needs a 'rubric'"):
        Case(id="c", prompt="p", rubric_pass=0.5)
    assert not Case(id="c", prompt="p", rubric=("note",)).is_judged  # notes stay notes
