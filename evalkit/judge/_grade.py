"""Grade one item's statements: questions, cache, retries, and the rule that combines them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit._redact import redact_settings
from evalkit.cases import Case, Expectation, find_affirmed, stable_hash
from evalkit.errors import ProviderError
from evalkit.judge._core import JudgeCore, JudgeKind
from evalkit.judge._graders import Question
from evalkit.judge._prompt import (
    PROMPT_HASH,
    StatementVerdict,
    build_prompt,
    final_answer,
    parse_verdict,
    transcript_excerpt,
)
from evalkit.judge._retry import Usage
from evalkit.results import JudgeRecord


@dataclass(frozen=True)
class Statement:
    """One judged statement of a case.

    Attributes:
        component: Its ``scores.parquet`` component: ``expectation:N`` or ``rubric:N``.
        text: The statement.
        truth: The known-truth regex, when the suite gives one.
    """

    component: str
    text: str
    truth: str | None = None


def statements(case: Case) -> tuple[Statement, ...]:
    """The statements a judge grades for ``case``: expectations, then a judged rubric."""
    out = [
        Statement(f"expectation:{i}", e.text, e.truth)
        for i, e in enumerate(case.judged_expectations, start=1)
    ]
    if case.rubric_pass is not None:
        out += [Statement(f"rubric:{i}", note) for i, note in enumerate(case.rubric, start=1)]
    return tuple(out)


def known_truth(statement: Statement | Expectation, case: Case, graded_text: str) -> bool | None:
    """The known truth of a statement about an answer, for the simulated judge.

    With a ``truth`` regex: whether it matches the answer outside negation contexts. Without
    one: whether the answer carries at least half of the lines of the case's ``reference``
    (None when the case has no reference).
    """
    if statement.truth:
        return bool(find_affirmed(statement.truth, graded_text))
    if not case.reference:
        return None
    lines = [" ".join(line.split()) for line in case.reference.splitlines() if line.strip()]
    flat = " ".join(graded_text.split())
    return sum(line in flat for line in lines) * 2 >= len(lines)


@dataclass(frozen=True)
class Graded:
    """A statement with its verdict."""

    statement: Statement
    passed: bool
    evidence: str


@dataclass
class ItemJudgement:
    """Every verdict of one item (or the error that stopped its grading).

    ``ungraded`` holds the statements this judge cannot grade (the offline simulated judge,
    for a statement with no known truth): neither passed nor failed.
    """

    graded: list[Graded] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    ungraded: list[Statement] = field(default_factory=list)


class Judge(JudgeCore[Question, StatementVerdict]):
    """The statement judge: is each expectation (or rubric note) true of one answer?

    One kind of :class:`~evalkit.judge._core.JudgeCore` (setup, identity, cache, retries);
    this kind builds one question per statement and combines the verdicts of an item.

    Args:
        spec: The judge's provider, model, settings and time limit.
        cache: Verdict cache (None: no caching).
        retries: Retries of a failed or unparsable judge call.
        retry_backoff_s: Base of the exponential backoff between retries.
    """

    kind = JudgeKind(PROMPT_HASH, StatementVerdict, parse_verdict)

    def record(self) -> JudgeRecord:
        """The manifest record of this judge (secret-looking settings masked)."""
        settings = redact_settings(self.spec.settings)
        return JudgeRecord(
            provider=self.grader.provider,
            model=self.grader.model,
            version=self.grader.version,
            prompt_hash=PROMPT_HASH,
            settings=settings,
            min_kappa=self.spec.min_kappa,
        )

    def question_key(self, statement: str, graded: Sequence[str]) -> str:
        """Content address of one question (judge identity, prompt, statement, answer)."""
        return stable_hash(
            {"judge": self.identity, "statement": statement, "graded": stable_hash(list(graded))}
        )

    def judge_item(self, case: Case, events: Sequence[Mapping[str, Any]]) -> ItemJudgement:
        """Grade every statement of ``case`` about one transcript.

        Args:
            case: The case (its prompt and statements).
            events: The item's transcript events as stored.

        Returns:
            The verdicts, or an ``error`` once a statement could not be graded after retries.
        """
        task = case.prompt + (f"\n\n{case.context}" if case.context else "")
        answer = final_answer(events)
        excerpt = transcript_excerpt(events)
        graded_text = "\n".join(
            str(e.get("content", "")) for e in events if e.get("kind") in ("assistant", "tool_call")
        )
        out = ItemJudgement()
        needs_truth = bool(getattr(self.grader, "needs_truth", False))
        for statement in statements(case):
            truth = known_truth(statement, case, graded_text)
            if truth is None and needs_truth:
                out.ungraded.append(statement)
                continue
            question = Question(
                prompt=build_prompt(task, answer, excerpt, statement.text),
                key=self.question_key(statement.text, (task, answer, excerpt)),
                truth=truth,
            )
            try:
                verdict = self.verdict(question, out.usage)
            except ProviderError as exc:
                out.error = f"{statement.component}: {getattr(exc, 'error_class', 'error')}: {exc}"
                return out
            out.graded.append(Graded(statement, verdict.passed, verdict.evidence))
        return out


@dataclass(frozen=True)
class Combined:
    """An item's outcome once its judged statements are combined with its scorers.

    Attributes:
        passed: The item's pass bit.
        score: The item's score in [0, 1].
        judge_passed: Every expectation passed and the rubric share reached ``rubric_pass``.
        judge_score: Share of the judged statements that passed.
    """

    passed: bool
    score: float
    judge_passed: bool
    judge_score: float


def combine(
    case: Case,
    graded: Sequence[Graded],
    *,
    scored_passed: bool,
    scored_score: float,
    has_scorers: bool,
) -> Combined:
    """The documented rule that combines deterministic scorers and judged statements.

    - ``judge_passed``: every expectation passed, and the share of rubric notes passed is at
      least ``rubric_pass`` (when the rubric is judged);
    - ``judge_score``: the share of all judged statements that passed;
    - ``passed``: ``judge_passed`` and, when the case has weighted scorers (patterns,
      anti-patterns, workflow, verifier, artifacts), their own pass bit too;
    - ``score``: the mean of the scorers' score and ``judge_score`` (``judge_score`` alone
      for a case judged only).

    Examples:
        >>> from evalkit.cases import Case
        >>> case = Case(id="c", prompt="p", expectations=("a", "b"))
        >>> s = [Statement("expectation:1", "a"), Statement("expectation:2", "b")]
        >>> combine(case, [Graded(s[0], True, ""), Graded(s[1], False, "")],
        ...         scored_passed=True, scored_score=1.0, has_scorers=True)
        Combined(passed=False, score=0.75, judge_passed=False, judge_score=0.5)
    """
    expectations = [g for g in graded if g.statement.component.startswith("expectation:")]
    rubric = [g for g in graded if g.statement.component.startswith("rubric:")]
    judge_passed = all(g.passed for g in expectations)
    if case.rubric_pass is not None and rubric:
        judge_passed = judge_passed and (
            sum(g.passed for g in rubric) / len(rubric) >= case.rubric_pass - 1e-12
        )
    judge_score = sum(g.passed for g in graded) / len(graded) if graded else 1.0
    if has_scorers:
        return Combined(
            passed=judge_passed and scored_passed,
            score=(scored_score + judge_score) / 2,
            judge_passed=judge_passed,
            judge_score=judge_score,
        )
    return Combined(judge_passed, judge_score, judge_passed, judge_score)
