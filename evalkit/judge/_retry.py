"""One judge question asked until its answer parses: retries, jittered backoff, usage counted.

The expectation judge and the pairwise judge ask their questions the same way; only the
question, the grader and the parser of the answer differ.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from evalkit.errors import InfraError
from evalkit.judge._graders import Answer

VerdictT = TypeVar("VerdictT")


@dataclass
class Usage:
    """Judge calls of one item (or one pair) and what they cost."""

    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class Retrier:
    """Asks a question again after an infrastructure error or an unparsable answer.

    Attempt ``n`` that fails waits ``backoff_s * 2**n`` seconds times a jitter in
    ``[0.5, 1.5)`` (from one seeded generator shared by the threads of a judge) before the
    next.

    Args:
        retries: Retries after the first attempt.
        backoff_s: Base of the exponential backoff.
    """

    def __init__(self, retries: int, backoff_s: float) -> None:
        self.retries = retries
        self.backoff_s = backoff_s
        self._rng = random.Random(0)
        self._lock = threading.Lock()

    def ask(
        self,
        ask: Callable[[int], Answer],
        parse: Callable[[str], VerdictT],
        usage: Usage,
    ) -> tuple[Answer, VerdictT]:
        """Ask until an answer parses, counting every call in ``usage``.

        Args:
            ask: Asks once, given the attempt number (0 first).
            parse: Parses the answer's text; raises ``JudgeAnswerError`` (an ``InfraError``)
                when it cannot.
            usage: Where calls, tokens and cost are added up.

        Returns:
            The answer that parsed and its verdict.

        Raises:
            InfraError: The last attempt failed.
        """
        for attempt in range(self.retries + 1):
            try:
                usage.calls += 1
                answer = ask(attempt)
                usage.input_tokens += answer.input_tokens
                usage.output_tokens += answer.output_tokens
                usage.cost_usd += answer.cost_usd
                return answer, parse(answer.text)
            except InfraError:
                if attempt == self.retries:
                    raise
                with self._lock:
                    jitter = 0.5 + self._rng.random()
                time.sleep(self.backoff_s * (2**attempt) * jitter)
        raise AssertionError("unreachable")  # pragma: no cover
