"""Exceptions raised by evalkit.

The tree::

    EvalkitError
    ├── InputError            bad user input; the CLI exits with code 2
    │   ├── SuiteError        a suite failed validation (carries every problem at once)
    │   ├── RunNotFoundError  a run directory or run id does not exist
    │   ├── CorruptFileError  a file of a run cannot be read (truncated, damaged, empty)
    │   ├── InputBoundError   an untrusted JSON/YAML text is too large or nested too deeply
    │   └── ConfigError       an invalid option, provider setting or flag combination
    ├── PlanError             the work plan is inconsistent (e.g. duplicate item keys)
    └── ProviderError         an agent invocation failed (becomes an error row, never a crash)
        ├── AuthError         the provider refused the credentials: stops the run (exit 2)
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

    def to_dict(self) -> dict[str, str | int | None]:
        """The problem as JSON: its parts, and ``text`` as the CLI prints it."""
        return {
            "file": self.file,
            "line": self.line,
            "field": self.field,
            "case_id": self.case_id,
            "message": self.message,
            "text": str(self),
        }

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
        self.problems = unique_problems(problems)
        lines = [f"suite is invalid ({problem_count(self.problems)}):"]
        lines += grouped_lines(self.problems)
        super().__init__("\n".join(lines))


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, in the plural unless ``n`` is 1.

    Examples:
        >>> plural(1, "problem"), plural(3, "problem"), plural(2, "reference check")
        ('1 problem', '3 problems', '2 reference checks')
    """
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def unique_problems(problems: list[Problem]) -> list[Problem]:
    """``problems`` in order, each told once."""
    return list(dict.fromkeys(problems))


def problem_count(problems: list[Problem]) -> str:
    """``"1 problem"``, or ``"5 problems in 3 files"``."""
    files = len({p.file for p in problems})
    counted = plural(len(problems), "problem")
    return counted if files < 2 else f"{counted} in {files} files"


def grouped_lines(problems: list[Problem], indent: str = "  ") -> list[str]:
    """Problems grouped by file (files in order of appearance, each by line).

    Returns:
        One header line per file (``<file> (2 problems):``), then its problems, one a line.
    """
    by_file: dict[str, list[Problem]] = {}
    for problem in problems:
        by_file.setdefault(problem.file, []).append(problem)
    lines: list[str] = []
    for file, found in by_file.items():
        lines.append(f"{indent}{file} ({plural(len(found), 'problem')}):")
        ordered = sorted(found, key=lambda p: p.line or 0)
        lines += [f"{indent}  - {p}" for p in ordered]
    return lines


class RunNotFoundError(InputError):
    """A run directory or run id does not exist."""


class CorruptFileError(InputError):
    """A file of a run directory is truncated, damaged or empty; the CLI exits with code 2.

    The message names the file, what is wrong with it and what to do (delete a part and
    resume, re-run, ...).

    Attributes:
        path: The unreadable file.
        problem: What is wrong with it.
        fix: What to do about it.
    """

    def __init__(self, path: str, problem: str, fix: str) -> None:
        self.path = path
        self.problem = problem
        self.fix = fix
        super().__init__(f"{path}: {problem}; {fix}")


class InputBoundError(InputError, ValueError):
    """An untrusted text is larger or more deeply nested than evalkit reads.

    An ``InputError`` (exit code 2) and a ``ValueError``, so code that skips a line it cannot
    parse (``except ValueError``) skips this one too.

    Attributes:
        source: The file (or stream) the text came from.
        bound: Which bound: ``"size"`` or ``"depth"``.
    """

    def __init__(self, source: object, bound: str, message: str) -> None:
        """Build the error.

        Args:
            source: The file or stream.
            bound: ``"size"`` or ``"depth"``.
            message: What was found and the bound (after ``<source>: ``).
        """
        super().__init__(f"{source}: {message}")
        self.source = str(source)
        self.bound = bound


class ConfigError(InputError):
    """An invalid option, provider setting or combination of flags."""


class PlanError(EvalkitError):
    """The work plan is inconsistent, e.g. two work items share a key."""


class ProviderError(EvalkitError):
    """An agent invocation failed; the runner records it as an ``error`` row."""

    error_class: str = "provider_error"


class AuthError(ProviderError):
    """The provider refused the credentials (HTTP 401/403, "Invalid API key").

    A configuration error, not an outcome: never retried, and the runner stops the run at the
    first one (every other item would fail the same way) instead of recording it as a row.
    """

    error_class = "auth"


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
