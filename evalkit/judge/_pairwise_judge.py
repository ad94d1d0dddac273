"""The pairwise judge: a blind comparator asked in both orders, cached by content.

Any provider of ``evalkit judge`` can be the comparator (through the same grader), or the
offline ``simulated`` pairwise judge, which knows the simulated agent's latent answer quality
and has a configurable position bias and error rate.

A pair is judged twice, baseline first and candidate first. The two verdicts, mapped back to
the variants, decide the pair for the candidate: a win (1), a loss (0) or a tie (0.5). When
the two orders disagree the judge followed the position, not the answers: the pair is a tie
and counts as *flipped*. Identical answers are a tie without asking.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from evalkit._redact import redact_settings
from evalkit._settings import RETRIES, SEED
from evalkit.cases import JudgeSpec, stable_hash
from evalkit.errors import ConfigError, ProviderError
from evalkit.judge._cache import JudgeCache
from evalkit.judge._core import Asker, JudgeCore, JudgeKind, provider_grader
from evalkit.judge._graders import SIMULATED, Answer, Question, SeededGrader
from evalkit.judge._pairwise_prompt import (
    PAIRWISE_PROMPT_HASH,
    PairVerdict,
    build_pairwise_prompt,
    parse_pair_verdict,
)
from evalkit.judge._probe_plant import planted_response
from evalkit.judge._retry import Usage
from evalkit.providers import OUTCOME, ProviderSettings, parse_settings

#: Where pairwise verdicts live under the runs directory.
PAIRWISE_CACHE_DIR = Path(".cache") / "judge-pairwise"


@dataclass(frozen=True)
class Side:
    """One answer of a pair, as the judge may see it.

    Attributes:
        answer: The agent's final answer.
        excerpt: Its bounded transcript excerpt (shown only with ``transcripts``).
        quality: The simulated agent's latent answer quality in [0, 1] (only the simulated
            judge reads it; never part of a prompt), None when unknown.
    """

    answer: str
    excerpt: str = ""
    quality: float | None = None


@dataclass(frozen=True)
class PairQuestion:
    """One ordered pairwise prompt.

    Attributes:
        prompt: The whole prompt.
        key: Content address of the question (the cache key).
        qualities: Latent qualities of Response 1 and Response 2 (simulated judge only).
    """

    prompt: str
    key: str
    qualities: tuple[float | None, float | None] = (None, None)


class SimulatedPairwiseSettings(ProviderSettings):
    """Settings of the ``simulated`` pairwise judge (``--judge-opt KEY=VALUE``)."""

    model: Annotated[str, OUTCOME] = "sim-pairwise-1"
    """Model name (recorded, and part of the cache key)."""
    error_rate: Annotated[float, OUTCOME, Field(ge=0, le=1)] = 0.0
    """Probability that a verdict is replaced by a wrong one (the other side, or a side for a
    true tie)."""
    position_bias: Annotated[float, OUTCOME, Field(ge=0, le=1)] = 0.0
    """Probability that the judge names Response 1 whatever the answers (first-position bias)."""
    tie_margin: Annotated[float, OUTCOME, Field(ge=0, le=1)] = 0.1
    """Quality difference below which the two answers are a tie."""
    malformed_rate: Annotated[float, OUTCOME, Field(ge=0, le=1)] = 0.0
    """Probability that an attempt answers prose instead of a JSON verdict (fault injection)."""
    seed: Annotated[int, OUTCOME] = SEED.default
    """Seed of the judge's errors and biases."""
    obedience: Annotated[float, OUTCOME, Field(ge=0, le=1)] = 0.0
    """Probability that the judge obeys an instruction planted in a response (the one
    ``judge calibrate --pairwise`` plants to probe robustness) and names that response better."""


class SimulatedPairwiseJudge(SeededGrader):
    """An offline comparator that prefers the answer of higher latent quality.

    Each ordered question draws its own errors from a seeded function of its key, so asking
    again gives the same verdict, while the two orders of one pair err independently.
    """

    version = "simulated-pairwise-1"
    settings: SimulatedPairwiseSettings

    def ask(self, question: PairQuestion, attempt: int) -> Answer:
        """The JSON verdict from the latent qualities, with position bias and errors."""
        q1, q2 = question.qualities
        if q1 is None or q2 is None:
            raise ConfigError(
                "the simulated pairwise judge needs the simulated agent's latent answer "
                "quality: compare runs of the simulated provider, or name a model judge "
                "(--judge-provider)"
            )
        tokens = len(question.prompt) // 4
        s = self.settings
        if self._uniform("malformed", question.key, attempt) < s.malformed_rate:
            return Answer("Both responses have merit.", tokens, 6)
        if abs(q1 - q2) < s.tie_margin:
            truth = "tie"
        else:
            truth = "1" if q1 > q2 else "2"
        better, reason = truth, "the better response solves more of the task"
        if truth == "tie":
            reason = "the two responses are about equally good"
        if self._uniform("error", question.key) < s.error_rate:
            if truth == "tie":
                better = "1" if self._uniform("side", question.key) < 0.5 else "2"
            else:
                better = "2" if truth == "1" else "1"
            reason = "judged on a detail that does not decide the task"
        if self._uniform("position", question.key) < s.position_bias:
            better, reason = "1", "the first response reads as more complete"
        planted = planted_response(question.prompt) if s.obedience else None
        if planted is not None and self._uniform("obey", question.key) < s.obedience:
            better, reason = planted, "the reviewer's note says this response is better"
        return Answer(json.dumps({"better": better, "reason": reason}), tokens, 20)


@dataclass
class PairJudgement:
    """Both orders of one pair, decided for the candidate.

    Attributes:
        outcome: 1 the candidate won, 0 it lost, 0.5 a tie (flipped pairs included); None
            when the pair could not be judged (``error``).
        verdict_baseline_first: The verdict with the baseline shown as Response 1.
        verdict_candidate_first: The verdict with the candidate shown as Response 1.
        reason_baseline_first: The judge's reason in that order.
        reason_candidate_first: Its reason in the other order.
        flipped: The two orders disagree (the pair counts as a tie).
        identical: The two answers are the same text (a tie, the judge not asked).
        first_wins: Orders won by the answer shown first (0-2).
        decisive: Orders that named a winner (0-2).
        usage: Judge calls, cache hits and cost.
        error: Why the pair could not be judged.
    """

    outcome: float | None = None
    verdict_baseline_first: str = ""
    verdict_candidate_first: str = ""
    reason_baseline_first: str = ""
    reason_candidate_first: str = ""
    flipped: bool = False
    identical: bool = False
    first_wins: int = 0
    decisive: int = 0
    usage: Usage = field(default_factory=Usage)
    error: str | None = None


def decide(baseline_first: str, candidate_first: str) -> tuple[float, bool]:
    """The candidate's outcome from the verdicts of the two orders, and whether they flipped.

    Examples:
        >>> decide("2", "1")      # candidate better in both orders
        (1.0, False)
        >>> decide("1", "1")      # the first-shown answer won twice: a flip, a tie
        (0.5, True)
        >>> decide("tie", "tie")
        (0.5, False)
    """
    as_candidate = {"1": 0.0, "2": 1.0, "tie": 0.5}[baseline_first]
    as_candidate_2 = {"1": 1.0, "2": 0.0, "tie": 0.5}[candidate_first]
    if as_candidate == as_candidate_2:
        return as_candidate, False
    return 0.5, True


def pairwise_grader(spec: JudgeSpec, settings: Mapping[str, Any]) -> Asker[PairQuestion]:
    """The comparator: the offline simulated pairwise judge, or the provider's grader.

    Raises:
        ConfigError: Unknown provider or invalid settings (named as the pairwise judge's).
    """
    if spec.provider != SIMULATED:
        return _ProviderComparator(provider_grader(spec, settings))
    try:
        parsed = parse_settings(SimulatedPairwiseSettings, SIMULATED, settings)
    except ConfigError as exc:
        raise ConfigError(
            f"pairwise judge 'simulated': {exc} (settings come from suite.yaml "
            "'pairwise: judge:' or 'judge:', and --judge-opt)"
        ) from None
    return SimulatedPairwiseJudge(parsed)


class _ProviderComparator:
    """A provider's grader asked a pairwise question (its prompt under its key)."""

    def __init__(self, grader: Asker[Question]) -> None:
        self.grader = grader
        self.provider, self.model, self.version = grader.provider, grader.model, grader.version

    def outcome_settings(self) -> dict[str, Any]:
        """The grader's settings that can change a verdict."""
        return self.grader.outcome_settings()

    def ask(self, question: PairQuestion, attempt: int) -> Answer:
        """Ask the grader the ordered pair's prompt."""
        return self.grader.ask(Question(question.prompt, question.key), attempt)


class PairwiseJudge(JudgeCore[PairQuestion, PairVerdict]):
    """The pairwise judge: which of two answers is better, asked in both orders?

    One kind of :class:`~evalkit.judge._core.JudgeCore`, like the statement judge: the same
    setup from a :class:`~evalkit.cases.JudgeSpec`, identity, cache and retries; this kind's
    grader is the comparator and its verdicts are :class:`PairVerdict`.

    Args:
        spec: The judge's provider, model, settings and time limit.
        cache: Cache of pairwise verdicts (None: no caching).
        retries: Retries of a failed or unparsable judge call.
        retry_backoff_s: Base of the exponential backoff between retries.

    Raises:
        ConfigError: Unknown provider or invalid settings.
    """

    kind = JudgeKind(PAIRWISE_PROMPT_HASH, PairVerdict, parse_pair_verdict, pairwise_grader)

    def record(self) -> dict[str, Any]:
        """The judge's identity as reports and calibrations name it (secrets masked)."""
        return {
            "provider": self.provider,
            "model": self.model,
            "version": self.version,
            "prompt_hash": PAIRWISE_PROMPT_HASH,
            "settings": redact_settings(self.spec.settings),
            "min_kappa": self.spec.min_kappa,
            "max_follow_rate": self.spec.max_follow_rate,
        }

    def _question(
        self, task: str, rubric: str, first: Side, second: Side, transcripts: bool
    ) -> PairQuestion:
        excerpts = (first.excerpt, second.excerpt) if transcripts else None
        prompt = build_pairwise_prompt(task, rubric, (first.answer, second.answer), excerpts)
        qualities = (first.quality, second.quality)
        content: dict[str, Any] = {"judge": self.identity, "prompt": stable_hash(prompt)}
        if isinstance(self.grader, SimulatedPairwiseJudge):
            content["qualities"] = list(qualities)
        return PairQuestion(prompt, stable_hash(content), qualities)

    def judge_pair(
        self,
        task: str,
        rubric: str,
        baseline: Side,
        candidate: Side,
        *,
        transcripts: bool = False,
    ) -> PairJudgement:
        """Judge one pair in both orders.

        Args:
            task: The case prompt (and context).
            rubric: What "better" means.
            baseline: The baseline's answer.
            candidate: The candidate's answer.
            transcripts: Also show each answer's transcript excerpt.

        Returns:
            The pair's judgement (with ``error`` set when a verdict could not be had).
        """
        out = PairJudgement()
        if baseline.answer == candidate.answer and (
            not transcripts or baseline.excerpt == candidate.excerpt
        ):
            out.outcome, out.identical = 0.5, True
            out.verdict_baseline_first = out.verdict_candidate_first = "tie"
            out.reason_baseline_first = out.reason_candidate_first = "identical answers"
            return out
        verdicts: list[PairVerdict] = []
        for first, second in ((baseline, candidate), (candidate, baseline)):
            question = self._question(task, rubric, first, second, transcripts)
            try:
                verdicts.append(self.verdict(question, out.usage))
            except ProviderError as exc:
                out.error = f"{getattr(exc, 'error_class', 'error')}: {exc}"
                return out
        v_b, v_c = verdicts
        out.verdict_baseline_first, out.reason_baseline_first = v_b.better, v_b.reason
        out.verdict_candidate_first, out.reason_candidate_first = v_c.better, v_c.reason
        out.outcome, out.flipped = decide(v_b.better, v_c.better)
        out.first_wins = sum(v.better == "1" for v in verdicts)
        out.decisive = sum(v.better != "tie" for v in verdicts)
        return out


def make_pairwise_judge(
    spec: JudgeSpec,
    runs_dir: str | Path,
    *,
    use_cache: bool = True,
    retries: int = RETRIES.default,
    retry_backoff_s: float = 1.0,
) -> PairwiseJudge:
    """A :class:`PairwiseJudge` with the pairwise verdict cache of ``runs_dir``."""
    cache = JudgeCache(Path(runs_dir) / PAIRWISE_CACHE_DIR) if use_cache else None
    return PairwiseJudge(spec, cache, retries=retries, retry_backoff_s=retry_backoff_s)

