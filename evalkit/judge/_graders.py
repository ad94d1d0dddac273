"""Graders: who answers a judge prompt (a provider, or the offline simulated judge)."""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol

from pydantic import Field

from evalkit._settings import SEED
from evalkit.cases import Budgets, Case, stable_hash
from evalkit.errors import ConfigError
from evalkit.providers import (
    OUTCOME,
    AgentRequest,
    Provider,
    ProviderSettings,
    cached_provider,
    parse_settings,
)

SIMULATED = "simulated"


@dataclass(frozen=True)
class Question:
    """One judge prompt.

    Attributes:
        prompt: The whole prompt (task, answer, excerpt, statement).
        key: Content address of the question (the cache key).
        truth: Known truth of the statement, when the suite gives one. Only the simulated
            judge reads it; it is never part of a prompt.
    """

    prompt: str
    key: str
    truth: bool | None = None


@dataclass(frozen=True)
class Answer:
    """What a grader answered, with its cost.

    Attributes:
        text: The raw answer (parsed by :func:`~evalkit.judge.parse_verdict`).
        input_tokens: Prompt tokens.
        output_tokens: Completion tokens.
        cost_usd: Cost of the call.
    """

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class Grader(Protocol):
    """Answers judge prompts; ``ask`` must be safe to call from several threads."""

    provider: str
    model: str
    version: str

    def outcome_settings(self) -> dict[str, Any]:
        """Settings that can change a verdict (they enter the cache key)."""
        ...

    def ask(self, question: Question, attempt: int) -> Answer:
        """Answer one question (``attempt`` counts retries from 0).

        Raises:
            evalkit.errors.InfraError: A retryable failure.
            evalkit.errors.ProviderError: A failure not worth retrying.
        """
        ...


class ProviderGrader:
    """A judge that is one of evalkit's providers (``anthropic``, ``openai_compat`` ...).

    Each question is sent as a prompt-lane request under the ``none`` condition: no skill is
    exposed and an API provider offers no tools, so the model answers in one turn.

    Args:
        provider: The provider instance (its limiter caps judge calls in flight).
        timeout_s: Wall-clock limit of one call.
    """

    def __init__(self, provider: Provider, timeout_s: float) -> None:
        info = provider.info()
        self.agent = provider
        self.provider = info.name
        self.model = info.model
        self.version = info.version
        self.timeout_s = timeout_s

    def outcome_settings(self) -> dict[str, Any]:
        """The provider's outcome settings."""
        return self.agent.outcome_settings()

    def ask(self, question: Question, attempt: int) -> Answer:
        """Send the prompt as a prompt-lane task under the ``none`` condition."""
        case = Case(id="judge", prompt=question.prompt, budgets=Budgets(timeout_s=self.timeout_s))
        with tempfile.TemporaryDirectory(prefix="judge-") as workspace:
            request = AgentRequest(
                item_key=f"judge:{question.key[:12]}",
                case=case,
                condition="none",
                exposure=(),
                workspace=Path(workspace),
                seed=attempt,
                timeout_s=self.timeout_s,
                log=lambda line: None,
            )
            response = self.agent.invoke(request)
        return Answer(
            text=response.final_text(),
            input_tokens=response.input_tokens,
            output_tokens=response.output_tokens,
            cost_usd=response.cost_usd,
        )


class SimulatedJudgeSettings(ProviderSettings):
    """Settings of the ``simulated`` judge (``--judge-opt KEY=VALUE``)."""

    model: Annotated[str, OUTCOME] = "sim-judge-1"
    """Model name (recorded, and part of the cache key)."""
    error_rate: Annotated[float, OUTCOME, Field(ge=0, le=1)] = 0.0
    """Probability that a verdict is the opposite of the known truth."""
    malformed_rate: Annotated[float, OUTCOME, Field(ge=0, le=1)] = 0.0
    """Probability that an attempt answers prose instead of a JSON verdict (fault injection)."""
    seed: Annotated[int, OUTCOME] = SEED.default
    """Seed of the judge's errors."""


class SeededGrader:
    """What the offline simulated judges share: their settings, and seeded draws.

    Every draw is a function of the judge's seed and the draw's parts (the question's key,
    the attempt), so asking again gives the same verdict and the cache stays consistent.

    Args:
        settings: The judge's settings (a ``model`` and a ``seed`` among them).
    """

    provider = SIMULATED

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.model: str = settings.model

    def outcome_settings(self) -> dict[str, Any]:
        """Every setting (all of them can change a verdict)."""
        outcome: dict[str, Any] = self.settings.outcome()
        return outcome

    def _uniform(self, *parts: Any) -> float:
        return random.Random(stable_hash([self.settings.seed, *parts])).random()


class SimulatedJudge(SeededGrader):
    """An offline judge that grades against each statement's known truth, wrong at a set rate.

    Its errors are a seeded function of the question, so re-asking the same question gives the
    same verdict (and the cache stays consistent), and over many questions the share of
    verdicts that disagree with the truth is ``error_rate``.
    """

    version = "simulated-judge-1"
    #: It can grade only statements with a known truth; the others stay ungraded.
    needs_truth = True
    settings: SimulatedJudgeSettings

    def ask(self, question: Question, attempt: int) -> Answer:
        """The JSON verdict: the truth, flipped with probability ``error_rate``."""
        if question.truth is None:
            raise ConfigError(
                "the simulated judge needs a known truth for every statement: give the "
                "expectation a 'truth' regex or the case a 'reference' answer"
            )
        tokens = len(question.prompt) // 4
        if self._uniform("malformed", question.key, attempt) < self.settings.malformed_rate:
            return Answer("I think the answer is mostly fine.", tokens, 8)
        wrong = self._uniform("verdict", question.key) < self.settings.error_rate
        passed = question.truth != wrong
        evidence = "the answer does what the statement asks" if passed else (
            "the answer does not show what the statement asks"
        )
        text = json.dumps({"passed": passed, "evidence": evidence})
        return Answer(text, tokens, 16)


def create_grader(
    provider: str, settings: Mapping[str, Any], *, timeout_s: float = 120.0
) -> Grader:
    """Build a judge's grader.

    Args:
        provider: ``simulated`` or a provider name (see ``evalkit.providers``).
        settings: Judge settings (``model`` included).
        timeout_s: Wall-clock limit of one judge call.

    Returns:
        The grader.

    Raises:
        ConfigError: Unknown provider or invalid settings.
    """
    try:
        if provider == SIMULATED:
            return SimulatedJudge(parse_settings(SimulatedJudgeSettings, SIMULATED, settings))
        # the per-process instance: a judge with the agent's provider and settings shares its
        # limiter (max_concurrency, requests_per_minute) with the agent's calls
        return ProviderGrader(cached_provider(provider, tuple(sorted(settings.items()))), timeout_s)
    except ConfigError as exc:
        raise ConfigError(
            f"judge '{provider}': {exc} (judge settings come from suite.yaml 'judge:' and "
            "--judge-provider/--judge-model/--judge-opt)"
        ) from None
