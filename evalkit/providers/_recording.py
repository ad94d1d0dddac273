"""``recording``: wrap any provider and write what it answers as fixtures ``replay`` plays back.

Each successful invocation appends one redacted JSON line ``{"item_key", "provider", "inner",
"model", "response"}`` (the format of a run's ``transcripts/part-*.jsonl``) with a single
``O_APPEND`` write, so concurrent workers never interleave lines. Failed invocations are not
recorded (the runner retries them or records an error row).

Settings: ``inner`` (the wrapped provider), ``path`` (the JSONL file), and the inner provider's
settings either as ``inner.KEY=VALUE`` options or as ``inner_settings`` (a JSON object string,
or a mapping in ``suite.yaml``). ``--model`` is forwarded to the inner provider.

In execution lanes the recording also keeps the files the agent created, changed or deleted in
its workspace (``extra["evalkit_workspace"]``), so a replay can restore them with
:func:`restore_workspace` before the verifier looks.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator

from evalkit._append import append_line
from evalkit._registry import plugin
from evalkit._untrusted import load_json
from evalkit.errors import ConfigError
from evalkit.providers._protocol import AgentRequest, Provider, ProviderInfo
from evalkit.providers._redact import redact_response
from evalkit.providers._registry import create_provider
from evalkit.providers._settings import OUTCOME, RUNTIME, ProviderSettings, parse_settings
from evalkit.providers._transcript import AgentResponse

#: Key of ``AgentResponse.extra`` holding the workspace changes of an execution item.
WORKSPACE_KEY = "evalkit_workspace"


class RecordingSettings(ProviderSettings):
    """Settings of the recording provider (its outcome is the inner provider's)."""

    inner: Annotated[str, OUTCOME]
    """The provider to record (any registered name, or ``package.module:factory``)."""
    path: Annotated[str, RUNTIME]
    """JSONL file the recordings are appended to (created when missing)."""
    inner_settings: Annotated[dict[str, Any], RUNTIME] = Field(default_factory=dict)
    """Settings of the inner provider (a JSON object string from ``--provider-opt``);
    ``inner.KEY=VALUE`` options are merged into it. Its outcome settings enter the item hash
    through the inner provider."""
    model: Annotated[str | None, RUNTIME] = None
    """Model of the inner provider (``--model`` sets it; it reaches the hash through the
    inner provider)."""
    capture_workspace: Annotated[bool, RUNTIME] = True
    """Keep the files the agent changed in execution lanes, for replays."""
    max_capture_bytes: Annotated[int, RUNTIME, Field(ge=0)] = 2_000_000
    """Most bytes of file content kept per item."""

    @model_validator(mode="before")
    @classmethod
    def _merge_prefixed(cls, data: Any) -> Any:
        """Fold ``inner.KEY`` options into ``inner_settings`` (they win over it)."""
        if not isinstance(data, Mapping):
            return data
        prefixed = {k[len("inner."):]: v for k, v in data.items() if k.startswith("inner.")}
        if not prefixed:
            return data
        own = {k: v for k, v in data.items() if not k.startswith("inner.")}
        try:
            base = _json_object(own.get("inner_settings", {}))
        except ValueError:
            return own  # the field validator names the bad inner_settings
        own["inner_settings"] = {**base, **prefixed} if isinstance(base, Mapping) else base
        return own

    @field_validator("inner_settings", mode="before")
    @classmethod
    def _json_object(cls, value: Any) -> Any:
        return _json_object(value)


def _json_object(value: Any) -> Any:
    """Decode a JSON object string (``--provider-opt``); other values are left to pydantic."""
    if isinstance(value, str):
        try:
            value = load_json(value, "provider option") if value.strip() else {}
        except ValueError as exc:
            raise ValueError(f"must be a JSON object: {exc}") from None
        if not isinstance(value, dict):
            raise ValueError("must be a JSON object")
    return value


def snapshot(root: Path) -> dict[str, str]:
    """Content hash of every regular file under ``root``, by relative path."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(root).as_posix()] = _digest(path)
    return out


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() + f":{path.stat().st_mode & 0o777:o}"


def workspace_changes(before: Mapping[str, str], root: Path, limit: int) -> dict[str, Any]:
    """Files created, changed or deleted under ``root`` since ``before``.

    Args:
        before: :func:`snapshot` taken before the agent ran.
        root: The workspace.
        limit: Most bytes of content kept.

    Returns:
        ``{"files": {path: {"text"|"base64": ..., "mode": int}}, "deleted": [...],
        "truncated": bool}``.
    """
    after = snapshot(root)
    files: dict[str, dict[str, Any]] = {}
    used, truncated = 0, False
    for rel, digest in sorted(after.items()):
        if before.get(rel) == digest:
            continue
        data = (root / rel).read_bytes()
        if used + len(data) > limit:
            truncated = True
            continue
        used += len(data)
        entry: dict[str, Any] = {"mode": (root / rel).stat().st_mode & 0o777}
        try:
            entry["text"] = data.decode("utf-8")
        except UnicodeDecodeError:
            entry["base64"] = base64.b64encode(data).decode("ascii")
        files[rel] = entry
    deleted = sorted(set(before) - set(after))
    return {"files": files, "deleted": deleted, "truncated": truncated}


def restore_workspace(response: AgentResponse, workspace: Path) -> None:
    """Apply the workspace changes a recording kept (for ``replay`` of execution items).

    Args:
        response: A recorded response (one without changes is a no-op).
        workspace: The item's fresh workspace.

    Raises:
        ValueError: A recorded path escapes the workspace.
    """
    changes = response.extra.get(WORKSPACE_KEY)
    if not isinstance(changes, dict):
        return
    root = workspace.resolve()
    for rel, entry in (changes.get("files") or {}).items():
        path = _inside(root, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        if "base64" in entry:
            path.write_bytes(base64.b64decode(entry["base64"]))
        else:
            path.write_text(entry.get("text", ""), encoding="utf-8")
        path.chmod(int(entry.get("mode", 0o644)))
    for rel in changes.get("deleted") or []:
        _inside(root, rel).unlink(missing_ok=True)


def _inside(root: Path, rel: str) -> Path:
    path = (root / rel).resolve()
    if root != path and root not in path.parents:
        raise ValueError(f"recorded path escapes the workspace: {rel}")
    return path


class RecordingProvider:
    """Delegates to an inner provider and appends every response to a JSONL file."""

    name = "recording"

    def __init__(self, settings: RecordingSettings, inner: Provider) -> None:
        self.settings = settings
        self.inner = inner
        self.path = Path(settings.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.needs_prompt_workspace = bool(getattr(inner, "needs_prompt_workspace", True))
        self.deterministic = bool(getattr(inner, "deterministic", False))

    def info(self) -> ProviderInfo:
        """The inner provider's model; version ``<inner name>/<inner version>``."""
        inner = self.inner.info()
        return ProviderInfo(self.name, inner.model, f"{inner.name}/{inner.version}")

    def outcome_settings(self) -> dict[str, Any]:
        """The inner provider's outcome settings (recording itself changes no outcome)."""
        inner = self.inner.outcome_settings()
        return {**self.settings.outcome(), **{f"inner.{k}": v for k, v in inner.items()}}

    def invoke(self, request: AgentRequest) -> AgentResponse:
        """Invoke the inner provider, record its response and return it.

        The response is the inner one, redacted (an inner provider of a plugin may not redact,
        and the workspace files the agent wrote may hold a key), plus the workspace changes of
        execution items.
        """
        capture = self.settings.capture_workspace and request.case.lane != "prompt"
        before = snapshot(request.workspace) if capture else {}
        response = self.inner.invoke(request)
        if capture:
            changes = workspace_changes(
                before, request.workspace, self.settings.max_capture_bytes
            )
            response = replace(response, extra={**response.extra, WORKSPACE_KEY: changes})
        response = redact_response(response)
        line = json.dumps(
            {
                "item_key": request.item_key,
                "provider": self.name,
                "inner": self.settings.inner,
                "model": response.model,
                "response": response.to_json(),
            },
            separators=(",", ":"),
            default=str,
        )
        with self._lock:
            append_line(self.path, line)
        return response


@plugin("provider")
def create_recording(settings: Mapping[str, Any]) -> RecordingProvider:
    """Build the recording provider: ``inner.KEY`` options go to the inner provider.

    Raises:
        ConfigError: Missing ``inner``/``path``, a recording of a recording, or bad inner
            settings.
    """
    parsed = parse_settings(RecordingSettings, "recording", settings)
    if parsed.inner == "recording":
        raise ConfigError("--provider-opt inner: 'recording' cannot record itself")
    inner_settings = dict(parsed.inner_settings)
    if parsed.model is not None:
        inner_settings["model"] = parsed.model
    return RecordingProvider(parsed, create_provider(parsed.inner, inner_settings))
