"""The simulated judge: wrong at the configured rate, stable per question, strict to parse."""

from __future__ import annotations

import math

import pytest

from evalkit.cases import stable_hash
from evalkit.errors import ConfigError
from evalkit.judge import Question, create_grader, parse_verdict

N = 4000


def _disagreement(error_rate: float, seed: int = 0) -> float:
    grader = create_grader("simulated", {"error_rate": error_rate, "seed": seed})
    wrong = 0
    for i in range(N):
        truth = i % 3 != 0
        question = Question(prompt=f"question {i}", key=stable_hash(["q", i]), truth=truth)
        verdict = parse_verdict(grader.ask(question, 0).text)
        wrong += verdict.passed != truth
    return wrong / N


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.3])
def test_measured_disagreement_is_the_configured_error_rate(rate: float) -> None:
    measured = _disagreement(rate)
    if rate == 0.0:
        assert measured == 0.0
        return
    se = math.sqrt(rate * (1 - rate) / N)
    assert abs(measured - rate) < 4 * se, (measured, rate)


def test_verdicts_are_a_function_of_the_question_and_the_seed() -> None:
    grader = create_grader("simulated", {"error_rate": 0.5})
    question = Question("p", "k" * 16, truth=True)
    first = [grader.ask(question, attempt).text for attempt in range(5)]
    assert len(set(first)) == 1  # retries of one question give one verdict
    others = [
        parse_verdict(create_grader("simulated", {"error_rate": 0.5, "seed": s})
                      .ask(question, 0).text).passed
        for s in range(40)
    ]
    assert 0 < sum(others) < 40  # the seed moves the errors


def test_malformed_rate_produces_unparsable_answers() -> None:
    grader = create_grader("simulated", {"malformed_rate": 1.0})
    text = grader.ask(Question("p", "k", truth=True), 0).text
    with pytest.raises(Exception, match="not a JSON object"):
        parse_verdict(text)


def test_bad_judge_settings_name_the_option_and_the_flags() -> None:
    with pytest.raises(ConfigError, match=r"unknown option 'error_rat'.*--judge-opt"):
        create_grader("simulated", {"error_rat": 0.1})
    with pytest.raises(ConfigError, match=r"option 'error_rate'"):
        create_grader("simulated", {"error_rate": 2})
    with pytest.raises(ConfigError, match=r"judge 'no-such-judge'.*must be one of the providers"):
        create_grader("no-such-judge", {})
