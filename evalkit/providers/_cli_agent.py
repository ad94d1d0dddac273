"""The base of the CLI agents (``claude_code``, ``codex``): one invocation pipeline, few hooks.

For each work item :meth:`CliAgentProvider.invoke`

1. takes a slot of the provider's :class:`~evalkit.providers._limiter.Limiter`;
2. creates private HOME/config/TMPDIR directories (:func:`agent_dirs`), installs the
   discoverable skills (self-load) in ``<config>/skills/<name>/SKILL.md``, the files of
   injected skills (preloaded, stale) in ``<root>/skill-files/<name>/`` without a
   ``SKILL.md`` (not a folder the CLI discovers skills in: an injected skill is not also
   discoverable), and lets the flavour write its own files
   (:meth:`~CliAgentProvider.write_files`);
3. runs the CLI (:func:`run_cli`) with the flavour's command line and allowlisted
   environment (:meth:`~CliAgentProvider.argv`, :meth:`~CliAgentProvider.own_env`);
4. parses its JSON-lines output (:meth:`~CliAgentProvider.parse`, built on
   :func:`json_objects`);
5. turns a failed invocation into evalkit's exception tree
   (:meth:`~CliAgentProvider.classify`); whatever the flavour says, a failure whose text or
   output says the credentials were refused ("Invalid API key", "authentication failed",
   "401 Unauthorized", ...) is an :class:`~evalkit.errors.AuthError` (:data:`AUTH_REFUSED`),
   never a crash: the runner stops the run on it;
6. builds the response (:meth:`~CliAgentProvider.usage` gives what differs) and redacts it.

A flavour module sets the class attributes and overrides those hooks; nothing else.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Generic, TypeVar

from pydantic import Field, field_validator

from evalkit._redact import clip_tail, redact_text, secret_values
from evalkit._untrusted import load_json
from evalkit.errors import (
    AgentCrashed,
    AuthError,
    ProviderError,
    ProviderTimeout,
    RateLimited,
)
from evalkit.providers._limiter import Limiter
from evalkit.providers._prompting import (
    injected_text,
    install_skill_files,
    install_skills,
    user_prompt,
)
from evalkit.providers._protocol import AgentRequest, ProviderInfo
from evalkit.providers._redact import redact_response
from evalkit.providers._settings import OUTCOME, RUNTIME, AgentSettings, split_args, split_list
from evalkit.providers._subprocess import (
    AgentDirs,
    CliResult,
    LineHook,
    agent_dirs,
    binary_version,
    cli_env,
    find_binary,
    run_cli,
    version_number,
)
from evalkit.providers._transcript import AgentResponse, Event

#: What agent CLIs and model servers say when they refuse the credentials.
AUTH_REFUSED = re.compile(
    r"(?i)invalid[ _-]?(?:x-)?api[ _-]?key|incorrect api key|api key is invalid"
    r"|authentication[ _](?:failed|failure|error|required)|\bunauthori[sz]ed\b"
    r"|\b(?:status|http)[ :]*40[13]\b|please run /login|not logged in"
)


class CliSettings(AgentSettings):
    """Settings shared by the CLI providers (``--provider-opt KEY=VALUE``).

    Outcome settings: ``model``, ``effort``, ``max_turns``, ``base_url``, ``extra_args`` (and
    each provider's permission settings). Not: ``binary``, ``api_key_env``, ``cli_retries``,
    ``pass_env``, ``state_dir``, ``max_concurrency``, ``requests_per_minute``.
    """

    binary: Annotated[str | None, RUNTIME] = None
    """Path of the CLI (default: ``$EVALKIT_CLAUDE_BIN`` / ``$EVALKIT_CODEX_BIN``, then
    ``PATH``)."""
    cli_retries: Annotated[int, RUNTIME, Field(ge=0)] = 2
    """Retries of one API request inside the CLI (evalkit retries whole items on top)."""
    pass_env: Annotated[tuple[str, ...], RUNTIME] = ()
    """More caller environment variables to pass through (e.g. ``HTTPS_PROXY``)."""
    state_dir: Annotated[str | None, RUNTIME] = None
    """Parent of the per-item HOME/config/TMPDIR directories (default: the temp dir)."""
    extra_args: Annotated[tuple[str, ...], OUTCOME] = ()
    """More CLI arguments, inserted before the prompt (an outcome setting)."""

    _lists = field_validator("pass_env", mode="before")(split_list)
    _args = field_validator("extra_args", mode="before")(split_args)


@dataclass
class CliStream:
    """What an agent CLI printed, normalized; each flavour adds its own fields.

    Attributes:
        events: Transcript events (after the system and user messages).
        loaded: Skills the agent loaded successfully.
        json_lines: Stdout lines that were JSON objects.
        bad_lines: Non-empty stdout lines that were not.
    """

    events: list[Event] = field(default_factory=list)
    loaded: list[str] = field(default_factory=list)
    json_lines: int = 0
    bad_lines: int = 0


def json_objects(lines: list[str], stream: CliStream) -> Iterator[dict[str, Any]]:
    """The JSON objects among stdout lines, counting the others in ``stream``.

    Examples:
        >>> stream = CliStream()
        >>> list(json_objects(['{"type": "x"}', "", "oops", "[1]"], stream))
        [{'type': 'x'}]
        >>> (stream.json_lines, stream.bad_lines)
        (1, 2)
    """
    for line in lines:
        if not line.strip():
            continue
        try:
            msg = load_json(line, "agent CLI output")
        except ValueError:
            stream.bad_lines += 1
            continue
        if not isinstance(msg, dict):
            stream.bad_lines += 1
            continue
        stream.json_lines += 1
        yield msg


def stderr_tail(run: CliResult) -> str:
    """The end of a CLI's stderr, as quoted in error messages (500 characters at most)."""
    return clip_tail(run.stderr.strip(), 500)


@dataclass(frozen=True)
class CliUsage:
    """The flavour-specific part of a response.

    Attributes:
        model: The model that answered.
        input_tokens: Prompt tokens.
        output_tokens: Completion tokens.
        cost_usd: Cost of the invocation.
        n_steps: Agent steps.
        extra: Flavour details kept with the transcript (before the shared ones).
    """

    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    n_steps: int
    extra: dict[str, Any]


SettingsT = TypeVar("SettingsT", bound=CliSettings)
StreamT = TypeVar("StreamT", bound=CliStream)


#: Folder of an invocation's private directory holding the files of injected skills.
SKILL_FILES_DIR = "skill-files"


def skill_files_root(dirs: AgentDirs) -> Path:
    """Where the files of injected skills go: beside HOME and the config, never a skills dir."""
    return dirs.root / SKILL_FILES_DIR


def cli_injected_text(request: AgentRequest, dirs: AgentDirs) -> str:
    """The injected skill text of a CLI agent: its files named where they are, no ``load_skill``."""
    root = skill_files_root(dirs)
    return injected_text(
        request.injected,
        files_at={s.name: root / s.name for s in request.injected if s.resource_files()},
    )


class CliAgentProvider(Generic[SettingsT, StreamT]):
    """An agent CLI as an evalkit provider (see the module docstring for the pipeline).

    Subclasses set ``name``, ``binary_name``, ``binary_env``, ``key_required`` and implement
    :meth:`argv`, :meth:`own_env`, :meth:`parse`, :meth:`classify` and :meth:`usage`;
    :meth:`write_files` and :meth:`line_hook` are optional.
    """

    name: ClassVar[str] = "cli"
    #: Executable name looked up on ``PATH``.
    binary_name: ClassVar[str] = ""
    #: Environment variable that may name the binary.
    binary_env: ClassVar[str] = ""
    #: Whether a missing ``api_key_env`` is an error even when it is the empty string.
    key_required: ClassVar[bool] = True

    def __init__(self, settings: SettingsT) -> None:
        self.settings = settings
        self.binary = find_binary(settings.binary, self.binary_env, self.binary_name, self.name)
        settings.api_key(self.name, required=bool(settings.api_key_env) or self.key_required)
        self.limiter = Limiter(settings.max_concurrency, settings.requests_per_minute)
        self._version = ""

    @property
    def version(self) -> str:
        """The CLI's version number (``BINARY --version``, detected once)."""
        if not self._version:
            self._version = version_number(binary_version(self.binary))
        return self._version

    def info(self) -> ProviderInfo:
        """Identity: the provider name, the model setting (or ``default``), the CLI version."""
        return ProviderInfo(self.name, self.settings.model or "default", self.version)

    def outcome_settings(self) -> dict[str, Any]:
        """The settings marked as outcome settings, plus the CLI version."""
        out = self.settings.outcome()
        out["cli_version"] = self.version
        return out

    # -- hooks ------------------------------------------------------------------------------

    def argv(self, request: AgentRequest, dirs: AgentDirs) -> list[str]:
        """The command line for one item."""
        raise NotImplementedError

    def own_env(self, dirs: AgentDirs) -> dict[str, str]:
        """The variables the CLI needs (HOME, its config dir, key, switches)."""
        raise NotImplementedError

    def write_files(self, request: AgentRequest, dirs: AgentDirs) -> None:
        """Write the flavour's own files (config, prompt files) before the CLI starts."""

    def line_hook(self, request: AgentRequest) -> LineHook | None:
        """A hook on each stdout line that may stop the CLI early (default: none)."""
        return None

    def parse(self, lines: list[str]) -> StreamT:
        """Normalize the CLI's stdout lines."""
        raise NotImplementedError

    def classify(self, stream: StreamT, run: CliResult) -> ProviderError | None:
        """The exception for a failed invocation that did not time out, else ``None``."""
        raise NotImplementedError

    def usage(self, stream: StreamT, run: CliResult) -> CliUsage:
        """Model, tokens, cost, steps and flavour details of a successful invocation."""
        raise NotImplementedError

    # -- the pipeline -----------------------------------------------------------------------

    def env(self, dirs: AgentDirs) -> dict[str, str]:
        """The CLI's allowlisted environment (see :func:`cli_env`)."""
        return cli_env(self.own_env(dirs), self.settings.pass_env)

    def turn_limit(self, request: AgentRequest) -> int | None:
        """The lower of the ``max_turns`` setting and the case's step budget."""
        turns = [t for t in (self.settings.max_turns, request.max_steps) if t]
        return min(turns) if turns else None

    def crashed(self, stream: StreamT, run: CliResult) -> AgentCrashed | None:
        """An :class:`AgentCrashed` when the CLI exited non-zero before any JSON output."""
        if stream.json_lines == 0 and run.returncode not in (0, None):
            return AgentCrashed(
                f"{self.name} exited {run.returncode} before any output: {stderr_tail(run)}"
            )
        return None

    def refused(self, failure: ProviderError, run: CliResult) -> AuthError | None:
        """An :class:`AuthError` when a failure means the credentials were refused, else None.

        The failure's message, the CLI's stderr and its non-JSON stdout lines are searched for
        :data:`AUTH_REFUSED`; the error names the key variable to fix, with secrets redacted.
        """
        if isinstance(failure, ProviderTimeout | RateLimited):
            return None
        plain = [line for line in run.lines if not line.lstrip().startswith("{")]
        said = [str(failure), *run.stderr[-2000:].splitlines(), *plain[-20:]]
        matched = next((line for line in said if AUTH_REFUSED.search(line)), None)
        if not isinstance(failure, AuthError) and matched is None:
            return None
        detail = str(failure)
        if matched is not None and matched.strip() not in detail:
            detail += f" ({matched.strip()[:300]})"
        env = self.settings.api_key_env
        detail = redact_text(detail, secret_values([env]))
        return AuthError(
            f"{detail}; the credentials were refused: export a valid key in {env} (or name "
            "another variable with --provider-opt api_key_env=NAME)"
        )

    def invoke(self, request: AgentRequest) -> AgentResponse:
        """Run the CLI on one work item.

        Raises:
            ProviderTimeout: No result before the item's deadline (the process group is
                killed).
            RateLimited: The API answered 429.
            ServerError: 5xx, a malformed or truncated stream.
            ConnectionFailed: The model server could not be reached.
            AgentCrashed: The CLI died before printing anything.
            AuthError: The credentials were refused (see :meth:`refused`).
            ProviderError: A non-retryable API error (bad request, unknown model).
        """
        started = time.monotonic()
        deadline = started + request.timeout_s
        prefix = f"evalkit-{self.binary_name}-"
        with self.limiter.slot(deadline), agent_dirs(prefix, self.settings.state_dir) as dirs:
            # only discoverable skills go where the CLI discovers skills; the files of injected
            # ones go to a folder of their own, which the injected text names
            install_skills(request.discoverable, dirs.config / "skills")
            install_skill_files(request.injected, skill_files_root(dirs))
            self.write_files(request, dirs)
            run = run_cli(
                self.argv(request, dirs),
                cwd=request.workspace,
                env=self.env(dirs),
                timeout_s=max(0.1, deadline - time.monotonic()),
                on_line=self.line_hook(request),
            )
        stream = self.parse(run.lines)
        if run.timed_out:
            raise ProviderTimeout(
                f"{self.name}: no result within {request.timeout_s:g}s; its process group "
                "was killed"
            )
        failure = self.classify(stream, run)
        if failure is not None:
            raise self.refused(failure, run) or failure
        usage = self.usage(stream, run)
        injected = cli_injected_text(request, dirs)
        head = [Event("system", injected)] if injected else []
        head.append(Event("user", user_prompt(request.case)))
        response = AgentResponse(
            events=(*head, *stream.events),
            model=usage.model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=usage.cost_usd,
            n_steps=usage.n_steps,
            skill_loaded=bool(stream.loaded),
            extra={
                "cli_version": self.version,
                **usage.extra,
                "skills_loaded": stream.loaded,
                "exit_code": run.returncode,
                "elapsed_s": round(time.monotonic() - started, 3),
            },
        )
        return redact_response(response, [self.settings.api_key_env])
