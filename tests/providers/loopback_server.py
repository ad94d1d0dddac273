"""A scriptable model server on 127.0.0.1 for the real-agent provider tests.

It speaks three wire protocols, chosen by the request path:

- ``POST /v1/messages`` — Anthropic Messages, SSE when the body says ``"stream": true`` and
  plain JSON otherwise (Claude Code and the ``anthropic`` provider);
- ``POST /v1/responses`` — OpenAI Responses, SSE or JSON (Codex and ``openai_compat``);
- ``POST /v1/chat/completions`` — OpenAI Chat Completions, JSON or SSE (``openai_compat``).

Every request (method, path, headers, body) is recorded. What the "model" answers is decided
per request by a *script*: a function of the recorded request returning a :class:`Reply`
(:class:`Text`, :class:`ToolCall`, :class:`Status`, :class:`Hang`, :class:`Malformed`).
Scripts decide from the conversation itself (does the request carry a tool result yet?), so
concurrent work items do not interfere. Any other path answers ``200 {}`` (Claude Code sends
``HEAD /`` as a connectivity probe).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_PATHS = ("/v1/messages", "/v1/responses", "/v1/chat/completions")


@dataclass(frozen=True)
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def protocol(self) -> str:
        """``anthropic``, ``responses``, ``chat`` or ``other``."""
        path = self.path.split("?")[0]
        return {
            "/v1/messages": "anthropic",
            "/v1/responses": "responses",
            "/v1/chat/completions": "chat",
        }.get(path, "other")

    @property
    def text(self) -> str:
        """The whole body as JSON text (for substring assertions)."""
        return json.dumps(self.body)

    def tool_results(self) -> list[str]:
        """Text of every tool result the request carries, in order."""
        body = self.body if isinstance(self.body, dict) else {}
        out: list[str] = []
        if self.protocol == "anthropic":
            for message in body.get("messages", []):
                content = message.get("content")
                if not isinstance(content, list):
                    continue
                for block in content:
                    if block.get("type") == "tool_result":
                        out.append(_flatten(block.get("content")))
        elif self.protocol == "responses":
            for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
                if item.get("type") in ("function_call_output", "custom_tool_call_output"):
                    out.append(_flatten(item.get("output")))
        elif self.protocol == "chat":
            for message in body.get("messages", []):
                if message.get("role") == "tool":
                    out.append(_flatten(message.get("content")))
        return out

    def tool_names(self) -> list[str]:
        """Names of the tools the request offers the model."""
        names = []
        for tool in (self.body or {}).get("tools", []) or []:
            name = tool.get("name") or (tool.get("function") or {}).get("name")
            if name:
                names.append(str(name))
        return names


def _flatten(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_flatten(v.get("text", v) if isinstance(v, dict) else v) for v in value)
    if isinstance(value, dict):
        return str(value.get("text") or value.get("output") or json.dumps(value))
    return "" if value is None else str(value)


@dataclass(frozen=True)
class Text:
    """A final text answer."""

    text: str
    input_tokens: int = 120
    output_tokens: int = 30


@dataclass(frozen=True)
class ToolCall:
    """The model asks for one tool call (arguments are a JSON object)."""

    name: str
    arguments: dict[str, Any]
    call_id: str = "call_1"


@dataclass(frozen=True)
class Status:
    """An HTTP error answer."""

    code: int
    body: str = '{"error": {"type": "api_error", "message": "scripted failure"}}'


@dataclass(frozen=True)
class Hang:
    """Accept the request and send nothing for ``seconds`` (then close)."""

    seconds: float = 60.0


@dataclass(frozen=True)
class Malformed:
    """A 200 answer whose body is not a valid stream or JSON document."""


Reply = Text | ToolCall | Status | Hang | Malformed
Script = Callable[[Recorded], Reply]


def answer(text: str) -> Script:
    """Always answer ``text``."""
    return lambda request: Text(text)


def tool_then_answer(call: Callable[[Recorded], ToolCall], final: str) -> Script:
    """Ask for one tool call; once the request carries a tool result, answer ``final``."""

    def script(request: Recorded) -> Reply:
        return Text(final) if request.tool_results() else call(request)

    return script


def always(reply: Reply) -> Script:
    """Always send the same reply (e.g. ``Status(500)``)."""
    return lambda request: reply


@dataclass
class LoopbackModelServer:
    """The server: start it, point an agent at :attr:`base_url`, read :attr:`requests`."""

    script: Script = field(default_factory=lambda: answer("ok"))
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._closing = threading.Event()
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The ephemeral port."""
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LoopbackModelServer:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hanging handlers and stop serving."""
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def record(self, request: Recorded) -> None:
        """Remember a request."""
        with self._lock:
            self.requests.append(request)

    def model_requests(self) -> list[Recorded]:
        """Requests to the model endpoints only."""
        with self._lock:
            return [r for r in self.requests if r.protocol != "other" and r.method == "POST"]

    def reset(self, script: Script | None = None) -> None:
        """Forget recorded requests and optionally install a new script."""
        with self._lock:
            self.requests.clear()
            if script is not None:
                self.script = script

    def wait_closing(self, seconds: float) -> None:
        """Sleep up to ``seconds``, returning early when the server stops."""
        self._closing.wait(seconds)


# -- wire formats --------------------------------------------------------------------------------


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(data) + "\n\n").encode()


def _anthropic_message(reply: Text | ToolCall, model: str) -> dict[str, Any]:
    if isinstance(reply, Text):
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}]
        stop, usage = "end_turn", (reply.input_tokens, reply.output_tokens)
    else:
        content = [
            {"type": "tool_use", "id": "toolu_" + reply.call_id, "name": reply.name,
             "input": reply.arguments}
        ]
        stop, usage = "tool_use", (100, 20)
    return {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def _anthropic_stream(reply: Text | ToolCall, model: str) -> Iterator[bytes]:
    message = _anthropic_message(reply, model)
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = {"input_tokens": message["usage"]["input_tokens"], "output_tokens": 1}
    yield _sse("message_start", {"type": "message_start", "message": start})
    block = message["content"][0]
    if block["type"] == "text":
        yield _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": ""}})
        delta = {"type": "text_delta", "text": block["text"]}
    else:
        yield _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": dict(block, input={})})
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    yield _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield _sse("message_delta", {"type": "message_delta",
                                 "delta": {"stop_reason": message["stop_reason"],
                                           "stop_sequence": None},
                                 "usage": {"output_tokens": message["usage"]["output_tokens"]}})
    yield _sse("message_stop", {"type": "message_stop"})


def _responses_item(reply: Text | ToolCall) -> dict[str, Any]:
    if isinstance(reply, Text):
        return {"type": "message", "id": "msg_loopback", "role": "assistant", "status":
                "completed", "content": [{"type": "output_text", "text": reply.text,
                                          "annotations": []}]}
    return {"type": "function_call", "id": "fc_" + reply.call_id, "call_id": reply.call_id,
            "name": reply.name, "arguments": json.dumps(reply.arguments), "status": "completed"}


def _responses_usage(reply: Text | ToolCall) -> dict[str, Any]:
    i, o = (reply.input_tokens, reply.output_tokens) if isinstance(reply, Text) else (100, 20)
    return {"input_tokens": i, "output_tokens": o, "total_tokens": i + o,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0}}


def _responses_json(reply: Text | ToolCall, model: str) -> dict[str, Any]:
    return {"id": "resp_loopback", "object": "response", "created_at": int(time.time()),
            "status": "completed", "model": model, "output": [_responses_item(reply)],
            "usage": _responses_usage(reply)}


def _responses_stream(reply: Text | ToolCall, model: str) -> Iterator[bytes]:
    created = {"id": "resp_loopback", "object": "response", "status": "in_progress",
               "model": model, "output": []}
    yield _sse("response.created", {"type": "response.created", "response": created})
    item = _responses_item(reply)
    yield _sse("response.output_item.added", {"type": "response.output_item.added",
                                              "output_index": 0, "item": item})
    yield _sse("response.output_item.done", {"type": "response.output_item.done",
                                             "output_index": 0, "item": item})
    yield _sse("response.completed", {"type": "response.completed",
                                      "response": _responses_json(reply, model)})


def _chat_json(reply: Text | ToolCall, model: str) -> dict[str, Any]:
    if isinstance(reply, Text):
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        finish, (i, o) = "stop", (reply.input_tokens, reply.output_tokens)
    else:
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": reply.call_id, "type": "function",
             "function": {"name": reply.name, "arguments": json.dumps(reply.arguments)}}]}
        finish, (i, o) = "tool_calls", (100, 20)
    return {"id": "chatcmpl-loopback", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message,
                                         "finish_reason": finish}],
            "usage": {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o}}


def _chat_stream(reply: Text | ToolCall, model: str) -> Iterator[bytes]:
    full = _chat_json(reply, model)
    message = full["choices"][0]["message"]
    delta: dict[str, Any] = {"role": "assistant"}
    if message.get("content"):
        delta["content"] = message["content"]
    if message.get("tool_calls"):
        delta["tool_calls"] = [dict(c, index=0) for c in message["tool_calls"]]
    chunk = {"id": full["id"], "object": "chat.completion.chunk", "model": model,
             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield _sse(None, chunk)
    last = dict(chunk, choices=[{"index": 0, "delta": {},
                                 "finish_reason": full["choices"][0]["finish_reason"]}],
                usage=full["usage"])
    yield _sse(None, last)
    yield b"data: [DONE]\n\n"


# -- handler -------------------------------------------------------------------------------------


def _make_handler(server: LoopbackModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            return

        def _read_body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not raw:
                return None
            try:
                return json.loads(raw)
            except ValueError:
                return raw.decode("utf-8", "replace")

        def _record(self) -> Recorded:
            request = Recorded(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                self._read_body(),
            )
            server.record(request)
            return request

        def _send(self, code: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _stream(self, chunks: Iterator[bytes]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(chunk)
                self.wfile.flush()
            self.close_connection = True

        def do_HEAD(self) -> None:  # noqa: N802 - stdlib naming
            self._record()
            self._send(200, b"")

        def do_GET(self) -> None:  # noqa: N802
            self._record()
            self._send(200, b"{}")

        def do_POST(self) -> None:  # noqa: N802
            request = self._record()
            if request.protocol == "other":
                self._send(200, b"{}")
                return
            reply = server.script(request)
            body = request.body if isinstance(request.body, dict) else {}
            model = str(body.get("model") or "loopback-model")
            streaming = bool(body.get("stream"))
            if isinstance(reply, Status):
                self._send(reply.code, reply.body.encode())
            elif isinstance(reply, Hang):
                server.wait_closing(reply.seconds)
                self.close_connection = True
            elif isinstance(reply, Malformed):
                if streaming:
                    self._stream(iter([b"event: message_start\ndata: {not json at all\n\n",
                                       b"data: \x00\x01 garbage\n\n"]))
                else:
                    self._send(200, b'{"id": "broken", "content": [')
            elif request.protocol == "anthropic":
                if streaming:
                    self._stream(_anthropic_stream(reply, model))
                else:
                    self._send(200, json.dumps(_anthropic_message(reply, model)).encode())
            elif request.protocol == "responses":
                if streaming:
                    self._stream(_responses_stream(reply, model))
                else:
                    self._send(200, json.dumps(_responses_json(reply, model)).encode())
            elif streaming:
                self._stream(_chat_stream(reply, model))
            else:
                self._send(200, json.dumps(_chat_json(reply, model)).encode())

    return Handler
