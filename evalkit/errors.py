"""Exceptions raised by evalkit: every exception class lives here.

This module is their one public home; a package that raises one also answers its name
(``evalkit.runner.RunStopped``, ``evalkit.sandbox.FixtureLinkError``, ...) on its internal
surface, outside its ``__all__``. The CLI maps the branches to exit codes: an ``InputError`` or a
``PlanError`` exits with 2, ``RunOutOfSpace`` with 75 (:data:`EXIT_NO_SPACE`),
``RunInterrupted`` with 130/143. docs/architecture.md draws the tree of these classes from
their docstrings.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: Exit code of ``evalkit run`` stopped by a full disk (``EX_TEMPFAIL`` of ``sysexits.h``:
#: a temporary failure, the same command succeeds once space is freed).
EXIT_NO_SPACE = 75


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


class FixtureLinkError(InputError):
    """A fixture holds a symlink that leaves the fixture, loops or cannot be resolved.

    Args:
        link: The offending symlink.
        reason: What is wrong with it.
    """

    def __init__(self, link: Path, reason: str) -> None:
        self.link = link
        self.reason = reason
        super().__init__(
            f"{link}: {reason}; fixtures may only hold symlinks to files inside the fixture "
            "(replace the link by a copy of what it should contain, or remove it)"
        )


class ConfigError(InputError):
    """An invalid option, provider setting or combination of flags.

    Args:
        message: What is wrong and how to fix it.
        setting: The Python field or parameter the message is about (``round_cases``), when
            there is one: the command line rewrites it as its flag (``--round-cases``).
    """

    def __init__(self, message: str = "", *, setting: str = "") -> None:
        self.setting = setting
        self.problems: tuple[tuple[str, str], ...] = ()
        super().__init__(message)


class UnknownPluginError(ConfigError):
    """No plugin of this kind has the name asked for.

    One error for every kind (provider, import format, optimizer), worded as every bad
    setting is: it names the command-line flag and the Python field, the names that exist, and
    how to add one.

    Attributes:
        kind: The plugin kind (``provider``, ``importer``, ``optimizer``).
        name: The name asked for.
        available: The names that exist, in the order the registry lists them.
        option: The command-line flag the name was given to (``--provider``).
        field: The Python parameter or field it was given to (``provider``).
    """

    def __init__(
        self,
        kind: str,
        name: str,
        available: tuple[str, ...],
        option: str,
        field: str,
        hint: str = "",
    ) -> None:
        self.kind = kind
        self.name = name
        self.available = available
        self.option = option
        self.field = field
        super().__init__(
            f"{option} / {field} must be one of the {kind}s {', '.join(available)}{hint}, "
            f"but {name!r} was passed (add your own as 'package.module:attribute', with "
            f"evalkit.register({kind!r}, NAME, ...), or from an installed package's "
            f"'evalkit.plugins' entry point '{kind}.NAME')"
        )


class SandboxUnavailableError(ConfigError):
    """bubblewrap is missing and the sandbox was not switched off explicitly."""


class RunLocked(ConfigError):
    """Another live process writes this run.

    Attributes:
        run_dir: The locked run directory.
        holder: What the holder wrote into the lock file (``pid``, ``host``, ``started_at``),
            empty when it could not be read.
    """

    def __init__(self, run_dir: Path, holder: dict[str, object]) -> None:
        self.run_dir = run_dir
        self.holder = holder
        if holder:
            who = (
                f"pid {holder.get('pid')} on host {holder.get('host')}, "
                f"started {holder.get('started_at')}"
            )
        else:
            who = "a process that has not written its details yet"
        super().__init__(
            f"run directory {run_dir} is in use by another evalkit process ({who}); "
            "wait until it finishes or stop it, then resume with --resume"
        )


class RunStopped(ConfigError):
    """A run stopped at its first configuration error; everything finished is on disk.

    Raised when an item fails in a way every other item would too: the provider refused the
    credentials (``error_class`` ``auth``) or could not be built in a worker (``config``, e.g.
    its binary is gone). The remaining items are not started, the failing item is not
    recorded, the manifest's status is ``stopped``, and ``--resume`` continues once the cause
    is fixed. The CLI exits with code 2.

    Attributes:
        run_id: The run.
        provider: The provider at fault.
        error_class: ``auth`` or ``config``.
        detail: The provider's message (secrets redacted), naming what to fix.
        finished: Items finished and kept.
        resume_command: The command that continues the run once fixed.
    """

    def __init__(
        self,
        run_id: str,
        provider: str,
        error_class: str,
        detail: str,
        finished: int,
        resume_command: str,
    ) -> None:
        self.run_id = run_id
        self.provider = provider
        self.error_class = error_class
        self.detail = detail
        self.finished = finished
        self.resume_command = resume_command
        what = "refused credentials" if error_class == "auth" else "a configuration error"
        super().__init__(
            f"run '{run_id}' stopped on {what} ({error_class}) of provider '{provider}': "
            f"{detail}\n"
            f"the remaining items were not started ({finished} finished item(s) kept); "
            f"once fixed, resume with: {resume_command}"
        )


class PlanError(EvalkitError):
    """The work plan is inconsistent, e.g. two work items share a key."""


class RunInterrupted(EvalkitError):
    """A run stopped by SIGINT or SIGTERM; everything finished is on disk.

    Attributes:
        run_id: The run.
        resume_command: The command that continues it.
        exit_code: 130 for SIGINT, 143 for SIGTERM.
    """

    def __init__(self, run_id: str, resume_command: str, exit_code: int) -> None:
        self.run_id = run_id
        self.resume_command = resume_command
        self.exit_code = exit_code
        super().__init__(f"run '{run_id}' interrupted; resume with: {resume_command}")


class RunOutOfSpace(EvalkitError):
    """A run stopped because its storage is full; everything flushed before is kept.

    Attributes:
        run_id: The run.
        run_dir: Its directory.
        location: The filesystem (device and mount point) or the limit that was hit.
        resume_command: The command that continues the run once space is freed.
        exit_code: :data:`EXIT_NO_SPACE`.
    """

    exit_code = EXIT_NO_SPACE

    def __init__(self, run_id: str, run_dir: Path, location: str, resume_command: str) -> None:
        self.run_id = run_id
        self.run_dir = run_dir
        self.location = location
        self.resume_command = resume_command
        super().__init__(
            f"no space left on {location}: free space and resume with: {resume_command}"
        )


class ReportError(EvalkitError):
    """A report notebook failed while executing; the executed notebook was kept.

    Attributes:
        notebook: The report notebook (source).
        executed_path: Where the executed notebook (with the error output) was written.
        cell_index: Index of the failing cell in the source notebook (None if unknown).
        execution_count: Its ``In [n]`` number in the executed notebook (None if unknown).
        source_line: The first non-empty line of the failing cell.
        ename: Exception class raised in the kernel.
        evalue: Exception message.
    """

    def __init__(
        self,
        message: str,
        *,
        notebook: Path,
        executed_path: Path,
        cell_index: int | None = None,
        execution_count: int | None = None,
        source_line: str = "",
        ename: str = "",
        evalue: str = "",
    ) -> None:
        super().__init__(message)
        self.notebook = notebook
        self.executed_path = executed_path
        self.cell_index = cell_index
        self.execution_count = execution_count
        self.source_line = source_line
        self.ename = ename
        self.evalue = evalue


class ReportInputError(ReportError, InputError):
    """A report notebook stopped on bad input: evalkit raised an ``InputError`` in the kernel.

    For example an unknown condition in ``conditions``: the CLI exits with code 2, as for any
    other bad input, and the executed notebook is kept like for any failed cell.
    """


class TamperError(EvalkitError):
    """Something the optimizer must not touch changed; the run is aborted.

    Attributes:
        changed: ``{what: (before, after)}`` for every protected item that changed.
    """

    def __init__(self, changed: dict[str, tuple[str | None, str | None]]) -> None:
        self.changed = changed
        lines = [f"  {name}: {before} -> {after}" for name, (before, after) in changed.items()]
        super().__init__(
            "honesty violation: protected files changed during optimisation; aborted.\n"
            + "\n".join(lines)
        )


class SealError(EvalkitError):
    """The sealed test split was already unsealed (it is evaluated exactly once)."""


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


class AgentCrashed(InfraError):
    """The agent CLI exited before producing any output (retryable)."""

    error_class = "agent_crashed"


class JudgeAnswerError(InfraError):
    """A judge answered something that is not a verdict; retried, then a judge error."""

    error_class = "judge_answer_error"
