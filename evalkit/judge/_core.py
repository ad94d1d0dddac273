"""What every kind of judge shares: its setup, its verdict cache, its retries.

evalkit has two kinds of judge, :class:`~evalkit.judge.Judge` (is each statement about one
answer true?) and :class:`~evalkit.judge.PairwiseJudge` (which of two answers is better?).
Both are a :class:`JudgeCore`: built from one :class:`~evalkit.cases.JudgeSpec` (the spec's
``model`` over its settings, the grader of its provider), identified by the same content
(provider, model, outcome settings, prompt-template hash) for their cache keys, and asking a
question the same way: one question in flight per key, a cached verdict read instead of a
call, retries with backoff after an infrastructure error or an unparsable answer, and only a
parsed verdict stored. A kind says what differs: its grader for the ``simulated`` provider,
its prompt hash, and the verdict model its answers parse into.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from evalkit._settings import RETRIES
from evalkit.cases import JudgeSpec
from evalkit.judge._cache import JudgeCache
from evalkit.judge._graders import Answer, create_grader
from evalkit.judge._retry import Retrier, Usage

QuestionT = TypeVar("QuestionT", bound="KeyedQuestion")
AskedT = TypeVar("AskedT", contravariant=True)
VerdictT = TypeVar("VerdictT", bound=BaseModel)


class KeyedQuestion(Protocol):
    """A question with its content address (the cache key)."""

    @property
    def key(self) -> str:
        """Content address of the question."""
        ...


class Asker(Protocol[AskedT]):
    """Who answers a kind's questions (a grader): the provider-backed one or a simulated one."""

    provider: str
    model: str
    version: str

    def outcome_settings(self) -> dict[str, Any]:
        """Settings that can change a verdict (they enter the cache key)."""
        ...

    def ask(self, question: AskedT, attempt: int) -> Answer:
        """Answer one question (``attempt`` counts retries from 0)."""
        ...


def judge_settings(spec: JudgeSpec) -> dict[str, Any]:
    """A judge's settings: the spec's settings, with its ``model`` over them when it names one."""
    settings = dict(spec.settings)
    if spec.model:
        settings["model"] = spec.model
    return settings


def provider_grader(spec: JudgeSpec, settings: Mapping[str, Any]) -> Asker[Any]:
    """The grader of the spec's provider (``simulated``: the offline statement judge)."""
    return create_grader(spec.provider, settings, timeout_s=spec.timeout_s)


@dataclass(frozen=True)
class JudgeKind(Generic[QuestionT, VerdictT]):
    """What a kind of judge sets itself: its prompt, its verdicts and its grader.

    Attributes:
        prompt_hash: Hash of the kind's prompt template (part of every cache key).
        verdict: The kind's verdict model (a cached entry is read back through it).
        parse: Parses a grader's answer strictly into a verdict (raises ``JudgeAnswerError``).
        grader: Builds the kind's grader from the spec and its settings (the spec's model
            over them); by default :func:`~evalkit.judge.create_grader`'s.
    """

    prompt_hash: str
    verdict: type[VerdictT]
    parse: Callable[[str], VerdictT]
    grader: Callable[[JudgeSpec, Mapping[str, Any]], Asker[QuestionT]] = provider_grader


class JudgeCore(Generic[QuestionT, VerdictT]):
    """The setup, identity, cache and retries every kind of judge shares.

    A kind is a subclass that sets :attr:`kind`.

    Args:
        spec: The judge's provider, model, settings and time limit.
        cache: Verdict cache (None: no caching).
        retries: Retries of a failed or unparsable judge call.
        retry_backoff_s: Base of the exponential backoff between retries.

    Raises:
        ConfigError: Unknown provider or invalid settings.
    """

    kind: JudgeKind[QuestionT, VerdictT]
    """The kind's prompt hash, verdict model, parser and grader."""

    def __init__(
        self,
        spec: JudgeSpec,
        cache: JudgeCache | None = None,
        *,
        retries: int = RETRIES.default,
        retry_backoff_s: float = 1.0,
    ) -> None:
        self.spec = spec
        self.grader = self.kind.grader(spec, judge_settings(spec))
        self.cache = cache
        self.prompt_hash = self.kind.prompt_hash
        self._retrier = Retrier(retries, retry_backoff_s)
        self.identity = {
            "provider": self.grader.provider,
            "model": self.grader.model,
            "outcome": self.grader.outcome_settings(),
            "prompt": self.prompt_hash,
        }
        self._lock = threading.Lock()
        self._asking: dict[str, threading.Lock] = {}

    @property
    def provider(self) -> str:
        """The judge's provider name."""
        return self.grader.provider

    @property
    def model(self) -> str:
        """The judge's model."""
        return self.grader.model

    @property
    def version(self) -> str:
        """The grader's version."""
        return self.grader.version

    def verdict(self, question: QuestionT, usage: Usage) -> VerdictT:
        """The verdict on one question: cached, or asked (with retries) and then cached.

        One question is in flight per key: a second item with the same question waits for
        the first verdict and reads it from the cache instead of paying for a second call.

        Args:
            question: The question.
            usage: Where calls, tokens, cost and cache hits are added up.

        Raises:
            InfraError: The last attempt failed.
            ProviderError: A failure not worth retrying.
        """
        with self._lock:
            asking = self._asking.setdefault(question.key, threading.Lock())
        with asking:
            hit = self._cached(question.key)
            if hit is not None:
                usage.cache_hits += 1
                return hit
            answer, verdict = self._retrier.ask(
                lambda attempt: self.grader.ask(question, attempt), self.kind.parse, usage
            )
            if self.cache is not None:
                self.cache.put(
                    question.key,
                    {
                        **verdict.model_dump(),
                        "input_tokens": answer.input_tokens,
                        "output_tokens": answer.output_tokens,
                        "cost_usd": answer.cost_usd,
                    },
                )
            return verdict

    def _cached(self, key: str) -> VerdictT | None:
        entry = self.cache.get(key) if self.cache is not None else None
        if entry is None:
            return None
        fields = self.kind.verdict.model_fields
        try:
            return self.kind.verdict.model_validate({f: entry.get(f) for f in fields})
        except ValidationError:
            return None  # a damaged or foreign entry is a miss: ask again
