"""Exceptions raised by evalkit.

The tree::

    EvalkitError
    ├── InputError            bad user input; the CLI exits with code 2
    │   ├── SuiteError        a suite failed validation (carries every problem at once)
    │   ├── RunNotFoundError  a run directory or run id does not exist
    │   └── ConfigError       an invalid option, provider setting or flag combination
    ├── PlanError             the work plan is inconsistent (e.g. duplicate item keys)
    └── ProviderError         an agent invocation failed (becomes an error row, never a crash)
        └── InfraError        retryable infrastructure failure
            ├── ProviderTimeout   the invocation exceeded its time budget
            ├── RateLimited       HTTP 429 or an equivalent signal
            ├── ServerError       HTTP 5xx or a malformed response stream
            ├── ConnectionFailed  the endpoint could not be reached
            └── JudgeAnswerError  a judge's answer could not be parsed as a verdict
"""

from __future__ import annotations

from dataclasses import dataclass


class EvalkitError(Exception):
    """Base class of every error evalkit raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One validation problem, located precisely enough to fix.

    Attributes:
        file: Path of the file at fault (as the user gave it, or relative to the suite).
        field: Dotted location inside the file (``cases[3].verifier.pattern``), or ``""``.
        message: What is wrong and, where possible, how to fix it.
        line: 1-based line of the offending YAML node, when known.
        case_id: Id of the case the problem belongs to, when known.
    """

    file: str
    field: str
    message: str
    line: int | None = None
    case_id: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        field = self.field
        if self.case_id:
            field = f"{field} (case '{self.case_id}')" if field else f"case '{self.case_id}'"
        return f"{where}: {field}: {self.message}" if field else f"{where}: {self.message}"


class InputError(EvalkitError):
    """Bad user input: a file, an option or a path. The CLI exits with code 2."""


class SuiteError(InputError):
    """A suite failed validation; ``problems`` lists every problem found.

    Args:
        problems: All problems found, in file order.
    """

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        lines = [f"suite is invalid ({len(self.problems)} problem(s)):"]
        lines += [f"  - {p}" for p in self.problems]
        super().__init__("\n".join(lines))


class RunNotFoundError(InputError):
    """A run directory or run id does not exist."""


class ConfigError(InputError):
    """An invalid option, provider setting or combination of flags."""


class PlanError(EvalkitError):
    """The work plan is inconsistent, e.g. two work items share a key."""


class ProviderError(EvalkitError):
    """An agent invocation failed; the runner records it as an ``error`` row."""

    error_class: str = "provider_error"


class InfraError(ProviderError):
    """A retryable infrastructure failure (never a wrong answer)."""

    error_class = "infra_error"


class ProviderTimeout(InfraError):
    """The invocation exceeded its time budget; recorded with status ``timeout``."""

    error_class = "timeout"


class RateLimited(InfraError):
    """The provider signalled a rate limit (HTTP 429 or equivalent)."""

    error_class = "rate_limited"


class ServerError(InfraError):
    """The provider answered with a server error or a malformed stream."""

    error_class = "server_error"


class ConnectionFailed(InfraError):
    """The provider endpoint could not be reached."""

    error_class = "connection_error"


class JudgeAnswerError(InfraError):
    """A judge answered something that is not a verdict; retried, then a judge error."""

    error_class = "judge_answer_error"
