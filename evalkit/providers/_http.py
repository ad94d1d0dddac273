"""HTTP plumbing of the API providers: error classification, the tool loop, the base class.

- :func:`post_json`: one JSON request with a deadline, failures mapped onto evalkit's
  exception tree (429 → :class:`RateLimited`, 5xx and malformed bodies → :class:`ServerError`,
  unreachable endpoint → :class:`ConnectionFailed`, time out → :class:`ProviderTimeout`, 401
  and 403 → :class:`AuthError` (the run stops), other 4xx → non-retryable
  :class:`ProviderError`).
- :func:`run_tool_loop`: the agent loop shared by the API providers (model turn, tool calls,
  tool results, until a final answer or the turn limit).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Protocol, TypeVar

import httpx
from pydantic import Field

from evalkit._redact import clip, redact_text, secret_values
from evalkit._untrusted import load_json
from evalkit.errors import (
    AuthError,
    ConfigError,
    ConnectionFailed,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    ServerError,
)
from evalkit.providers._limiter import Limiter
from evalkit.providers._prompting import Toolbox, ToolSpec, ToolUse, system_prompt, user_prompt
from evalkit.providers._protocol import AgentRequest, ProviderInfo
from evalkit.providers._redact import redact_response
from evalkit.providers._settings import OUTCOME, RUNTIME, AgentSettings
from evalkit.providers._transcript import AgentResponse, Event


def error_for_status(status: int, detail: str, where: str) -> ProviderError:
    """The evalkit exception for an HTTP error status.

    Examples:
        >>> type(error_for_status(429, "slow down", "x")).__name__
        'RateLimited'
        >>> type(error_for_status(529, "overloaded", "x")).__name__
        'ServerError'
        >>> type(error_for_status(401, "bad key", "x")).__name__
        'AuthError'
        >>> type(error_for_status(404, "no such model", "x")).__name__
        'ProviderError'
    """
    message = f"{where}: HTTP {status}: {clip(detail, 500)}"
    if status in (401, 403):
        return AuthError(message)
    if status == 429:
        return RateLimited(message)
    if status >= 500 or status in (408, 409):
        return ServerError(message)
    return ProviderError(message)


def post_json(
    client: httpx.Client,
    url: str,
    body: Mapping[str, Any],
    *,
    headers: Mapping[str, str],
    deadline: float,
    request_timeout_s: float,
) -> dict[str, Any]:
    """POST a JSON body and return the JSON object answered.

    Args:
        client: The provider's client.
        url: Absolute URL.
        body: Request body.
        headers: Request headers (credentials included).
        deadline: ``time.monotonic()`` deadline of the whole invocation.
        request_timeout_s: Ceiling of this one request.

    Returns:
        The decoded JSON object.

    Raises:
        ProviderTimeout: The deadline or the request timeout passed.
        ConnectionFailed: The endpoint could not be reached.
        RateLimited: HTTP 429.
        ServerError: HTTP 5xx, a broken connection or a body that is not a JSON object.
        AuthError: HTTP 401 or 403 (credentials refused).
        ProviderError: Another HTTP error (bad request, unknown model): not retried.
    """
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise ProviderTimeout("the invocation's time budget is spent")
    timeout = min(remaining, request_timeout_s)
    try:
        response = client.post(url, json=dict(body), headers=dict(headers), timeout=timeout)
    except httpx.ConnectTimeout as exc:
        raise ConnectionFailed(f"{url}: connect timed out: {exc}") from exc
    except httpx.TimeoutException as exc:
        raise ProviderTimeout(f"{url}: no answer within {timeout:.1f}s") from exc
    except httpx.ConnectError as exc:
        raise ConnectionFailed(f"{url}: cannot connect: {exc}") from exc
    except httpx.TransportError as exc:
        raise ServerError(f"{url}: broken response: {type(exc).__name__}: {exc}") from exc
    if response.status_code >= 400:
        raise error_for_status(response.status_code, response.text, url)
    try:
        data = response.json()
    except ValueError as exc:
        raise ServerError(
            f"{url}: malformed response (not JSON): {clip(response.text, 200)!r}"
        ) from exc
    if not isinstance(data, dict):
        raise ServerError(f"{url}: malformed response (not a JSON object)")
    return data


def make_client() -> httpx.Client:
    """An httpx client that ignores proxy and certificate settings of the environment."""
    return httpx.Client(trust_env=False, follow_redirects=False)


@dataclass(frozen=True)
class ModelTurn:
    """One model answer, independent of the wire format.

    Attributes:
        text: Assistant text (may be empty when the model only calls tools).
        tool_uses: Tool calls requested.
        input_tokens: Prompt tokens of this request.
        output_tokens: Completion tokens of this request.
        model: Model that answered.
        stop_reason: The API's stop/finish reason.
    """

    text: str
    tool_uses: tuple[ToolUse, ...]
    input_tokens: int
    output_tokens: int
    model: str
    stop_reason: str


Poster = Callable[[str, Mapping[str, Any], float], dict[str, Any]]
"""Sends one request: ``post(path, body, deadline) -> JSON object``."""


class Conversation(Protocol):
    """A conversation in one wire format (Chat Completions, Responses, Messages)."""

    def call(self, deadline: float) -> ModelTurn:
        """Send the conversation so far; return the model's turn."""
        ...

    def add_results(self, turn: ModelTurn, results: list[tuple[ToolUse, str]]) -> None:
        """Append the model's turn and the tool results to the conversation."""
        ...


ProviderT = TypeVar("ProviderT", bound="HttpProvider")


class WireConversation(Generic[ProviderT]):
    """What a conversation of every wire format keeps: its provider, poster, prompt and tools.

    A subclass converts a tool to its wire format (:meth:`wire_tool`), builds its request
    body from ``system`` and ``messages`` (the user message, then the turns and tool results
    it appends) and adds :meth:`optional_fields` to it.

    Args:
        provider: The provider whose settings and model the requests carry.
        post: Sends one request.
        system: The system prompt.
        user: The user message.
        tools: The tools offered to the model.
    """

    def __init__(
        self, provider: ProviderT, post: Poster, system: str, user: str, tools: list[ToolSpec]
    ) -> None:
        self.provider = provider
        self.post = post
        self.system = system
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
        self.tools = [self.wire_tool(t) for t in tools]

    def wire_tool(self, tool: ToolSpec) -> dict[str, Any]:
        """One tool in the wire format."""
        raise NotImplementedError

    def optional_fields(
        self, *, max_tokens: str | None, effort: tuple[str, ...]
    ) -> dict[str, Any]:
        """The request fields sent only when set: tools, token limit, temperature, effort.

        Args:
            max_tokens: The field of the output token limit (None: the body always has one).
            effort: Where the reasoning effort goes, e.g. ``("reasoning", "effort")`` for
                ``{"reasoning": {"effort": ...}}``.

        Returns:
            The fields, in the order the wire formats list them.
        """
        settings = self.provider.settings
        fields: dict[str, Any] = {}
        if self.tools:
            fields["tools"] = self.tools
        if max_tokens and settings.max_tokens:
            fields[max_tokens] = settings.max_tokens
        if settings.temperature is not None:
            fields["temperature"] = settings.temperature
        if settings.effort:
            value: Any = settings.effort
            for key in reversed(effort[1:]):
                value = {key: value}
            fields[effort[0]] = value
        return fields


@dataclass
class LoopResult:
    """What the tool loop produced.

    Attributes:
        events: Transcript events after the system and user messages.
        input_tokens: Prompt tokens over all turns.
        output_tokens: Completion tokens over all turns.
        turns: Model requests made.
        model: Model reported by the last answer.
        stop_reason: ``final_answer``, ``max_turns`` or the API's last stop reason.
    """

    events: list[Event] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    turns: int = 0
    model: str = ""
    stop_reason: str = ""


def run_tool_loop(
    conversation: Conversation, toolbox: Toolbox, *, max_turns: int, deadline: float
) -> LoopResult:
    """Alternate model turns and tool calls until a final answer or ``max_turns``.

    Args:
        conversation: The conversation (system and user message already in it).
        toolbox: Tools to execute.
        max_turns: Most model requests.
        deadline: ``time.monotonic()`` deadline.

    Returns:
        The transcript events, token counts and turns.
    """
    out = LoopResult()
    for _ in range(max_turns):
        turn = conversation.call(deadline)
        out.turns += 1
        out.input_tokens += turn.input_tokens
        out.output_tokens += turn.output_tokens
        out.model = turn.model or out.model
        if turn.text:
            out.events.append(Event("assistant", turn.text))
        if not turn.tool_uses:
            out.stop_reason = "final_answer" if turn.text else (turn.stop_reason or "empty")
            return out
        results = []
        for use in turn.tool_uses:
            call, result = toolbox.run(use)
            out.events += [call, result]
            results.append((use, result.content))
        conversation.add_results(turn, results)
    out.stop_reason = "max_turns"
    return out


# -- the shared base of the API providers --------------------------------------------------------

DEFAULT_SYSTEM_PROMPT = (
    "You are a capable assistant. Answer the user's task directly and concretely."
)


class HttpSettings(AgentSettings):
    """Settings shared by the API providers (``--provider-opt KEY=VALUE``).

    Outcome settings: ``model``, ``base_url``, ``effort``, ``max_turns``, ``max_tokens``,
    ``temperature`` and ``system_prompt`` (plus a provider's wire-format setting).
    """

    model: Annotated[str | None, OUTCOME] = None
    """Model name (required; ``--model`` sets it too)."""
    base_url: Annotated[str | None, OUTCOME] = None
    """API base URL (default: the vendor's); identifies the model server, so it is an
    outcome setting."""
    api_key_env: Annotated[str, RUNTIME] = "API_KEY"
    """Environment variable holding the API key (keys are never read from settings)."""
    effort: Annotated[str | None, OUTCOME] = None
    """Reasoning effort sent to the API (e.g. ``low``, ``medium``, ``high``); unset: the
    API's default."""
    max_turns: Annotated[int, OUTCOME, Field(ge=1)] = 20
    """Most model requests per item (the case's ``budgets.max_steps`` lowers it)."""
    max_tokens: Annotated[int | None, OUTCOME, Field(ge=1)] = None
    """Output token limit per request (unset: the API's default)."""
    temperature: Annotated[float | None, OUTCOME, Field(ge=0)] = None
    """Sampling temperature (unset: the API's default)."""
    system_prompt: Annotated[str, OUTCOME] = DEFAULT_SYSTEM_PROMPT
    """Base system prompt; the skills index and injected skills are appended to it."""
    request_timeout_s: Annotated[float, RUNTIME, Field(gt=0)] = 300.0
    """Ceiling of one HTTP request (the case's ``budgets.timeout_s`` bounds the item)."""
    max_concurrency: Annotated[int | None, RUNTIME, Field(ge=1)] = 8
    """Requests in flight at once in this process (use ``--backend threading``)."""
    input_cost_per_mtok: Annotated[float, RUNTIME, Field(ge=0)] = 0.0
    """USD per million input tokens, for ``cost_usd`` (0: cost not tracked)."""
    output_cost_per_mtok: Annotated[float, RUNTIME, Field(ge=0)] = 0.0
    """USD per million output tokens, for ``cost_usd``."""


class HttpProvider:
    """Base of the API providers: settings, credentials, limiter, the invocation template.

    Subclasses set ``name``, ``default_base_url``, ``key_required`` and implement
    :meth:`conversation` (the wire format) and :meth:`headers`.
    """

    name = "http"
    default_base_url = ""
    key_required = True
    version = "1"

    def __init__(self, settings: HttpSettings) -> None:
        if not settings.model:
            raise ConfigError(
                f"--provider-opt model=NAME (or --model NAME) is required for '{self.name}'"
            )
        self.settings = settings
        self.model: str = settings.model
        self.base_url = settings.base_url or self.default_base_url
        self.api_key = settings.api_key(self.name, required=self.key_required)
        self.limiter = Limiter(settings.max_concurrency, settings.requests_per_minute)

    def info(self) -> ProviderInfo:
        """Identity: provider name, model and the wire format's version."""
        return ProviderInfo(self.name, self.model, f"{self.name}-{self.version}")

    def outcome_settings(self) -> dict[str, Any]:
        """Model, server, effort, limits and prompt: everything that can change an outcome."""
        out = self.settings.outcome()
        out["base_url"] = self.base_url
        return out

    def headers(self) -> dict[str, str]:
        """Request headers, credentials included."""
        raise NotImplementedError

    def auth_error(self, detail: str) -> AuthError:
        """The refused-credentials error: what the server said (redacted) and what to fix."""
        env = self.settings.api_key_env
        where = "no key is sent" if not self.api_key else f"the key is read from ${env}"
        return AuthError(
            f"{self.name}: {self.base_url} refused the credentials "
            f"({redact_text(detail, secret_values([env]))}); {where}: export a valid key in "
            f"{env} (or name another variable with --provider-opt api_key_env=NAME)"
        )

    def conversation(self, post: Poster, system: str, user: str, toolbox: Toolbox) -> Conversation:
        """A fresh conversation in the provider's wire format, sending with ``post``."""
        raise NotImplementedError

    def post(
        self, client: httpx.Client, path: str, body: Mapping[str, Any], deadline: float
    ) -> dict[str, Any]:
        """POST ``body`` to ``base_url + path`` under the limiter."""
        with self.limiter.slot(deadline):
            return post_json(
                client,
                self.base_url + path,
                body,
                headers=self.headers(),
                deadline=deadline,
                request_timeout_s=self.settings.request_timeout_s,
            )

    def invoke(self, request: AgentRequest) -> AgentResponse:
        """Run the tool loop for one work item (see :func:`run_tool_loop`).

        Raises:
            InfraError: Timeouts, rate limits, server errors, unreachable endpoint.
            AuthError: The server refused the key (the message names the variable to fix).
            ProviderError: A non-retryable API error (bad request, unknown model).
        """
        started = time.monotonic()
        deadline = started + request.timeout_s
        toolbox = Toolbox(request, deadline)
        system = system_prompt(request, self.settings.system_prompt)
        user = user_prompt(request.case)
        max_turns = min(self.settings.max_turns, request.max_steps or self.settings.max_turns)
        with make_client() as client:  # one client per item: no sockets outlive it
            conversation = self.conversation(
                functools.partial(self.post, client), system, user, toolbox
            )
            try:
                loop = run_tool_loop(
                    conversation, toolbox, max_turns=max_turns, deadline=deadline
                )
            except AuthError as exc:
                raise self.auth_error(str(exc)) from None
        settings = self.settings
        cost = (
            loop.input_tokens * settings.input_cost_per_mtok
            + loop.output_tokens * settings.output_cost_per_mtok
        ) / 1e6
        response = AgentResponse(
            events=(Event("system", system), Event("user", user), *loop.events),
            model=loop.model or self.model,
            input_tokens=loop.input_tokens,
            output_tokens=loop.output_tokens,
            cost_usd=cost,
            n_steps=loop.turns,
            skill_loaded=bool(toolbox.loaded),
            extra={
                "stop_reason": loop.stop_reason,
                "turns": loop.turns,
                "skills_loaded": list(toolbox.loaded),
                "elapsed_s": round(time.monotonic() - started, 3),
                "base_url": self.base_url,
            },
        )
        return redact_response(response, [settings.api_key_env])


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict (a JSON string is decoded; anything else gives ``{}``).

    Examples:
        >>> parse_arguments('{"name": "waiting"}')
        {'name': 'waiting'}
        >>> parse_arguments("{broken")
        {}
    """
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = load_json(raw, "response")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}
