"""Transcripts of imported results, in the native shard format (``transcripts/part-NNNNN.jsonl``).

An imported row gets a transcript when its source holds what the agent said and did: an
Inspect AI sample's messages, an ATIF ``trajectory.json`` in a Harbor or Terminal-Bench trial
directory, a promptfoo result's prompt and output. Each becomes the record a native run writes
(``{"item_key", "provider", "response": AgentResponse.to_json()}``), with events of the native
kinds: ``system``, ``user``, ``assistant``, ``tool_call`` and ``tool_result`` (these two with
the tool's name).

Imported text is untrusted and may be huge: every event's content passes the redactor before
it is cut to :data:`EVENT_CHARS` characters (a tool's output keeps its end, as the native
bash tool keeps the end of a command's output; other texts keep their start), a transcript
keeps at most :data:`MAX_EVENTS` events, and the whole response passes the redactor again when
it is written, as a native outcome does.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalkit._redact import clip, clip_tail, redact_value, secret_values
from evalkit._untrusted import MAX_BYTES_ENV, load_json, max_input_bytes
from evalkit.results import TRANSCRIPTS_DIR

#: Characters kept of one event's content (the native bash tool keeps 8,000 of its output).
EVENT_CHARS = 8000
#: Characters kept of a tool's name (names come from the source too).
NAME_CHARS = 200
#: Events kept of one transcript (the first ones; a note says how many were left out).
MAX_EVENTS = 2000
#: The one shard an import writes, relative to the run directory.
IMPORT_SHARD = f"{TRANSCRIPTS_DIR}/part-00001.jsonl"
#: Where a Harbor or Terminal-Bench trial directory keeps an ATIF trajectory.
TRAJECTORY_FILES = ("agent/trajectory.json", "agent-logs/trajectory.json", "trajectory.json")

#: Characters beyond the kept ones that are redacted with them (longer than any secret form).
_MARGIN = 4096
_CUT = "[… {n:,} characters cut]"
_ATTACHMENT = re.compile(r"attachment://([0-9A-Za-z_-]+)")


def event(kind: str, content: Any, name: str = "") -> dict[str, str]:
    """One native transcript event from untrusted content, cut to :data:`EVENT_CHARS`.

    A text too long is redacted before it is cut (cutting first could leave half a secret,
    which no pattern recognises); every text is redacted again with its response.

    Args:
        kind: ``system``, ``user``, ``assistant``, ``tool_call`` or ``tool_result``.
        content: The text (any other JSON value is kept as its JSON text).
        name: The tool's name (tool calls and results).

    Returns:
        ``{"kind", "content", "name"}``.

    Examples:
        >>> event("tool_result", "x" * 9000, "bash")["content"][:24]
        '[… 1,000 characters cut]'
        >>> event("user", "k" * 9000)["content"][-24:]
        '[… 1,000 characters cut]'
    """
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    if len(text) <= EVENT_CHARS:
        # redacted with the whole response when it is written (transcript_lines)
        return {"kind": kind, "content": text, "name": clip(str(name or ""), NAME_CHARS)}
    # only a window a little wider than what is kept is redacted: a secret across the
    # window's edge is cut off with the margin
    cut = _CUT.format(n=len(text) - EVENT_CHARS)
    if kind == "tool_result":
        text = f"{cut}\n{clip_tail(text[-(EVENT_CHARS + _MARGIN):], EVENT_CHARS)}"
    else:
        text = f"{clip(text[: EVENT_CHARS + _MARGIN], EVENT_CHARS)}\n{cut}"
    return {"kind": kind, "content": text, "name": clip(str(name or ""), NAME_CHARS)}


def response(
    events: list[dict[str, str]],
    *,
    model: str | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cost_usd: float | None = None,
    n_steps: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A transcript's ``response`` (the shape of ``AgentResponse.to_json()``).

    Events past :data:`MAX_EVENTS` are left out, and a ``system`` event says how many.
    """
    if len(events) > MAX_EVENTS:
        dropped = len(events) - MAX_EVENTS
        events = [*events[:MAX_EVENTS], event("system", f"[{dropped:,} more events cut]")]
    return {
        "events": events,
        "model": model or "",
        "input_tokens": input_tokens or 0,
        "output_tokens": output_tokens or 0,
        "cost_usd": cost_usd or 0.0,
        "n_steps": n_steps if n_steps is not None else _steps(events),
        "skill_loaded": None,
        "extra": dict(extra or {}),
    }


def _steps(events: list[dict[str, str]]) -> int:
    return sum(1 for e in events if e["kind"] in ("assistant", "tool_call"))


def tool_input(name: str, arguments: Any) -> str:
    """A tool call's content as the native transcripts show it: a command, or the JSON input.

    A shell tool gives its command; any tool whose input is one string gives that string;
    others their input as JSON.

    Examples:
        >>> tool_input("bash", {"cmd": "ls -la"})
        'ls -la'
        >>> tool_input("python", {"code": "print(1)"})
        'print(1)'
        >>> tool_input("text_editor", {"command": "view", "path": "/a"})
        '{"command": "view", "path": "/a"}'
    """
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, Mapping):
        for key in ("cmd", "command"):
            if name in ("bash", "shell", "Bash") and isinstance(arguments.get(key), str):
                return str(arguments[key])
        strings = [v for v in arguments.values() if isinstance(v, str)]
        if len(arguments) == 1 and len(strings) == 1:
            return strings[0]
    return json.dumps(arguments, sort_keys=True, default=str)


# ------------------------------------------------------------------------ Inspect AI


def _resolved(value: Any, attachments: Mapping[str, Any]) -> Any:
    """``value`` with Inspect's ``attachment://ID`` references replaced by their text."""
    if isinstance(value, str):
        if "attachment://" not in value:
            return value
        return _ATTACHMENT.sub(lambda m: str(attachments.get(m.group(1), m.group(0))), value)
    if isinstance(value, list):
        return [_resolved(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolved(v, attachments) for k, v in value.items()}
    return value


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or its text parts (reasoning left out)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, default=str)
    parts = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, Mapping):
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif kind in ("image", "audio", "video", "document"):
                parts.append(f"[{kind}]")
    return "\n".join(parts)


def _records(value: Any) -> list[Mapping[str, Any]]:
    """The objects of an untrusted JSON list (none when it is not a list)."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _tool_calls(calls: Any, name: str, call_id: str, names: dict[str, str]) -> list[dict[str, str]]:
    """A ``tool_call`` event per call (its tool under key ``name``), ``names[id] = tool`` kept."""
    out = []
    for call in _records(calls):
        tool = str(call.get(name) or "")
        names[str(call.get(call_id, ""))] = tool
        out.append(event("tool_call", tool_input(tool, call.get("arguments")), tool))
    return out


def inspect_events(sample: Mapping[str, Any]) -> list[dict[str, str]]:
    """The native events of one Inspect AI sample's ``messages``.

    ``system`` and ``user`` messages keep their text; an ``assistant`` message gives its text
    (reasoning left out) and one ``tool_call`` per call (named by its function); a ``tool``
    message gives a ``tool_result`` named by its function (or by the call it answers), its
    error appended.

    Args:
        sample: The sample (``messages``, and ``attachments`` in an ``.eval`` log).

    Returns:
        The events, in order (none when the sample has no messages).
    """
    attachments = sample.get("attachments")
    attachments = attachments if isinstance(attachments, Mapping) else {}
    messages = _resolved(sample.get("messages"), attachments)
    out: list[dict[str, str]] = []
    calls: dict[str, str] = {}
    for message in _records(messages):
        role = message.get("role")
        text = _text_of(message.get("content"))
        if role in ("system", "user"):
            out.append(event(str(role), text))
        elif role == "assistant":
            if text.strip():
                out.append(event("assistant", text))
            out += _tool_calls(message.get("tool_calls"), "function", "id", calls)
        elif role == "tool":
            name = str(message.get("function") or calls.get(str(message.get("tool_call_id")), ""))
            error = message.get("error")
            if isinstance(error, Mapping) and error.get("message"):
                text = "\n".join(t for t in (text, f"error: {error['message']}") if t)
            out.append(event("tool_result", text, name))
    return out


def inspect_response(
    sample: Mapping[str, Any], model: str, tokens: tuple[int | None, int | None, float | None]
) -> dict[str, Any] | None:
    """The transcript ``response`` of one Inspect AI sample, or None when it has no messages.

    Args:
        sample: The sample.
        model: The log's model.
        tokens: Its input tokens, output tokens and cost (as the row has them).

    Returns:
        The response; ``extra`` counts the sample's Inspect events by type.
    """
    events = inspect_events(sample)
    if not events:
        return None
    kinds = Counter(
        str(e.get("event")) for e in sample.get("events") or [] if isinstance(e, Mapping)
    )
    return response(
        events,
        model=model,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        cost_usd=tokens[2],
        extra={"source": "inspect_ai", "inspect_events": dict(sorted(kinds.items()))},
    )


# ------------------------------------------------------------------- ATIF trajectories


def atif_events(trajectory: Mapping[str, Any]) -> list[dict[str, str]]:
    """The native events of an ATIF trajectory (Harbor's ``trajectory.json``).

    A ``user`` or ``system`` step gives its message; an ``agent`` step its message, one
    ``tool_call`` per call, and one ``tool_result`` per observation result (named by the call
    it answers).

    Args:
        trajectory: The parsed ``trajectory.json``.

    Returns:
        The events, in order.
    """
    out: list[dict[str, str]] = []
    steps = trajectory.get("steps")
    for step in _records(steps):
        source = step.get("source")
        message = _text_of(step.get("message"))
        if source in ("user", "system"):
            if message.strip():
                out.append(event(str(source), message))
            continue
        if message.strip():
            out.append(event("assistant", message))
        names: dict[str, str] = {}
        out += _tool_calls(step.get("tool_calls"), "function_name", "tool_call_id", names)
        observation = step.get("observation")
        results = observation.get("results") if isinstance(observation, Mapping) else None
        for result in _records(results):
            name = names.get(str(result.get("source_call_id", "")), "")
            out.append(event("tool_result", _text_of(result.get("content")), name))
    return out


def trajectory_response(
    trial_dir: Path, model: str | None
) -> tuple[dict[str, Any] | None, str | None]:
    """The transcript of a trial directory holding an ATIF ``trajectory.json``.

    The file is read as every untrusted file is (:mod:`evalkit._untrusted`: bounded in size
    and nesting). One that is too large, too deep, not JSON or not a trajectory gives no
    transcript, and a note says why (the row is imported without one).

    Args:
        trial_dir: The trial directory.
        model: The trial's model, when the trajectory does not name one.

    Returns:
        ``(response, None)``; ``(None, note)`` for an unreadable trajectory; ``(None, None)``
        when there is none.
    """
    for name in TRAJECTORY_FILES:
        path = trial_dir / name
        if not path.is_file() or path.is_symlink():
            continue
        try:
            size, limit = path.stat().st_size, max_input_bytes()
            if size > limit:
                return None, (f"{path}: {size:,} bytes, more than the {limit:,} bytes evalkit "
                              f"reads (set {MAX_BYTES_ENV} to raise it)")
            data = load_json(path.read_bytes(), path)
        except json.JSONDecodeError as exc:
            return None, f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})"
        except (OSError, ValueError) as exc:  # InputBoundError is a ValueError
            return None, f"{path}: {exc}"
        if not isinstance(data, Mapping) or not isinstance(data.get("steps"), list):
            return None, f"{path}: no 'steps' list: not an ATIF trajectory"
        events = atif_events(data)
        if not events:
            return None, None
        agent = data.get("agent")
        agent = agent if isinstance(agent, Mapping) else {}
        metrics = data.get("final_metrics")
        metrics = metrics if isinstance(metrics, Mapping) else {}
        return response(
            events,
            model=str(agent.get("model_name") or model or ""),
            input_tokens=_count(metrics.get("total_prompt_tokens")),
            output_tokens=_count(metrics.get("total_completion_tokens")),
            cost_usd=_cost(metrics.get("total_cost_usd")),
            extra={"source": "atif", "schema_version": str(data.get("schema_version") or "")},
        ), None
    return None, None


def _bounded_text(path: Path) -> str | None:
    """A text file another tool wrote, when it is a plain file within the size bound."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > max_input_bytes():
            return None
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None


def _episode_number(path: Path) -> int:
    return int(path.name.rpartition("-")[2])


def terminus_events(logs: Path) -> list[dict[str, str]]:
    """The native events of a Terminal-Bench Terminus agent's ``agent-logs/episode-N``.

    Episode 0's ``prompt.txt`` (the task and the first screen) is the ``user`` message; a
    later episode's prompt is what the terminal showed after the last keystrokes, a
    ``tool_result`` of the ``terminal`` tool. Each ``response.json`` (Terminus 1) or
    ``response.txt`` (Terminus 2, the JSON answer inside the model's text) gives the agent's
    analysis and explanation (or plan) as an ``assistant`` message and one ``tool_call`` of
    the ``terminal`` tool per command (its keystrokes); an answer that is not JSON is the
    ``assistant`` message as it is.

    Args:
        logs: The trial's ``agent-logs`` directory.

    Returns:
        The events, in episode order (none without episodes).
    """
    if logs.is_symlink() or not logs.is_dir():
        return []
    episodes = [
        p for p in logs.iterdir()
        if p.is_dir() and not p.is_symlink() and re.fullmatch(r"episode-\d+", p.name)
    ]
    out: list[dict[str, str]] = []
    for episode in sorted(episodes, key=_episode_number):
        prompt = _bounded_text(episode / "prompt.txt")
        if prompt is not None:
            first = _episode_number(episode) == 0
            out.append(event("user", prompt) if first else event("tool_result", prompt, "terminal"))
        # Terminus 1 writes response.json, Terminus 2 the model's raw text (response.txt)
        text = _bounded_text(episode / "response.json")
        if text is None:
            text = _bounded_text(episode / "response.txt")
        if text is None:
            continue
        try:
            answer = load_json(text[text.find("{"):text.rfind("}") + 1] or text, episode)
        except ValueError:
            out.append(event("assistant", text))  # an answer that is not JSON (XML, prose)
            continue
        if not isinstance(answer, Mapping):
            out.append(event("assistant", answer))
            continue
        said = [
            str(answer[k]) for k in ("state_analysis", "analysis", "explanation", "plan")
            if isinstance(answer.get(k), str) and answer[k].strip()
        ]
        if said:
            out.append(event("assistant", "\n".join(said)))
        for command in answer.get("commands") or []:
            keys = command.get("keystrokes") if isinstance(command, Mapping) else command
            if isinstance(keys, str):
                out.append(event("tool_call", keys, "terminal"))
    return out


def trial_response(
    trial_dir: Path, model: str | None
) -> tuple[dict[str, Any] | None, str | None]:
    """The transcript of a Harbor or Terminal-Bench trial directory, and why it has none.

    An ATIF ``trajectory.json`` (:data:`TRAJECTORY_FILES`) is read first
    (:func:`trajectory_response`); otherwise a Terminus agent's ``agent-logs/episode-N``
    (:func:`terminus_events`).

    Args:
        trial_dir: The trial directory.
        model: The trial's model.

    Returns:
        ``(response or None, note or None)``: the note says why a trajectory on disk gave
        no transcript.
    """
    found, note = trajectory_response(trial_dir, model)
    if found is not None or note is not None:
        return found, note
    events = terminus_events(trial_dir / "agent-logs")
    if not events:
        return None, None
    return response(events, model=model, extra={"source": "terminus"}), None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _cost(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    return float(value) if ok else None


# --------------------------------------------------------------------------- promptfoo


def promptfoo_response(result: Mapping[str, Any]) -> dict[str, Any] | None:
    """The transcript of one promptfoo result: its rendered prompt and the model's output.

    Args:
        result: One entry of ``results.results``.

    Returns:
        A ``user`` event (the prompt's ``raw`` text) and an ``assistant`` event (the
        response's ``output``), or None when the result holds neither.
    """
    prompt = result.get("prompt")
    raw = prompt.get("raw") if isinstance(prompt, Mapping) else None
    answer = result.get("response")
    output = answer.get("output") if isinstance(answer, Mapping) else None
    events = []
    if raw is not None:
        events.append(event("user", raw))
    if output is not None:
        events.append(event("assistant", output))
    if not events:
        return None
    provider = result.get("provider")
    model = provider.get("id") if isinstance(provider, Mapping) else None
    return response(events, model=str(model or ""), extra={"source": "promptfoo"})


# ------------------------------------------------------------------------------ writing


def transcript_lines(
    rows: list[dict[str, Any]], transcripts: Mapping[str, dict[str, Any]]
) -> list[str]:
    """The shard's lines, each row holding a transcript pointed to it (``transcript_path``).

    Every response passes the redactor (the secrets of this process's environment), as a
    native outcome does before it is written; the item key and provider are the row's.

    Args:
        rows: The result rows (``item_key``, ``provider``); updated in place.
        transcripts: Responses by item key.

    Returns:
        One JSON line per row with a transcript.
    """
    known = secret_values()
    lines = []
    for row in rows:
        found = transcripts.get(str(row["item_key"]))
        if found is None:
            continue
        # the key stays as the row has it (the reader matches them); what the agent said and
        # did passes the redactor
        record = {"item_key": row["item_key"], "provider": row.get("provider"),
                  "response": redact_value(found, known)}
        lines.append(json.dumps(record, default=str, separators=(",", ":")))
        row["transcript_path"] = IMPORT_SHARD
    return lines


def write_shard(run_dir: Path, lines: list[str]) -> None:
    """Write the import's shard under ``run_dir`` (nothing when no row has a transcript)."""
    if not lines:
        return
    shard = run_dir / IMPORT_SHARD
    shard.parent.mkdir(parents=True, exist_ok=True)
    shard.write_text("\n".join(lines) + "\n", encoding="utf-8")
