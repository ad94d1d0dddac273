"""Replay recorded transcripts (JSONL keyed by item key)."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from evalkit._keys import SEPARATOR, escape_key_part, parse_item_key
from evalkit._registry import plugin
from evalkit._untrusted import load_json, read_text
from evalkit.errors import ConfigError, ProviderError
from evalkit.providers._protocol import AgentRequest, ProviderInfo
from evalkit.providers._recording import restore_workspace
from evalkit.providers._settings import RUNTIME, ProviderSettings, parse_settings
from evalkit.providers._transcript import AgentResponse


class ReplaySettings(ProviderSettings):
    """Settings of the replay provider (the recordings' content is the outcome setting)."""

    path: Annotated[str, RUNTIME]
    """JSONL file of recordings: one ``{"item_key", "response", "provider", "model"}`` per line."""
    as_provider: Annotated[str | None, RUNTIME] = None
    """Provider name the recordings were made with (item keys embed it); default: the
    recording's own provider name."""


class ReplayProvider:
    """Plays back recorded responses exactly; an unrecorded item is an error row."""

    name = "replay"
    #: Plays back the same recording for the same item: a rerun is the same sample.
    deterministic = True

    def __init__(self, settings: ReplaySettings) -> None:
        self.settings = settings
        self.path = Path(settings.path)
        if not self.path.is_file():
            raise ConfigError(f"--provider-opt path: recording file not found: {self.path}")
        self._lock = threading.Lock()
        self._records: dict[str, dict[str, Any]] | None = None

    def _load(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            if self._records is None:
                records: dict[str, dict[str, Any]] = {}
                for number, line in enumerate(read_text(self.path).splitlines()):
                    if not line.strip():
                        continue
                    try:
                        row = load_json(line, f"{self.path}:{number + 1}")
                        records[_unkeyed(row["item_key"])] = row
                    except (json.JSONDecodeError, KeyError, TypeError) as exc:
                        raise ConfigError(
                            f"{self.path}: line {number + 1}: not a recording "
                            f"({type(exc).__name__}: {exc}); expected JSON with item_key"
                        ) from None
                self._records = records
            return self._records

    def info(self) -> ProviderInfo:
        """Identity: the model of the first recording."""
        records = self._load()
        first = next(iter(records.values()), {})
        return ProviderInfo(self.name, str(first.get("model", "")), "replay-1")

    def outcome_settings(self) -> dict[str, Any]:
        """The recording file's content identifies the outcomes."""
        from evalkit.cases import stable_hash

        return {"recording": stable_hash(sorted(self._load()))}

    def invoke(self, request: AgentRequest) -> AgentResponse:
        """Return the recorded response for this item.

        Raises:
            ProviderError: No recording for this item.
        """
        row = self._load().get(_unkeyed(request.item_key))
        if row is None:
            raise ProviderError(f"no recording for {request.item_key} in {self.path}")
        response = AgentResponse.from_json(row["response"])
        if request.case.lane != "prompt":
            restore_workspace(response, request.workspace)  # files the recording kept
        return response


def _unkeyed(item_key: str) -> str:
    """Drop the provider part of an item key (recordings replay under another provider).

    Examples:
        >>> _unkeyed("prompt:a%3Ab:none:claude_code:1")
        'prompt:a%3Ab:none:1'
        >>> _unkeyed("not a key")
        'not a key'
    """
    try:
        parts = parse_item_key(item_key)
    except ValueError:
        return item_key
    fields = (parts.lane, parts.case_id, parts.condition, str(parts.trial))
    return SEPARATOR.join(escape_key_part(f) for f in fields)


@plugin("provider")
def create_replay(settings: Mapping[str, Any]) -> ReplayProvider:
    """Build the replay provider from ``--provider-opt`` settings."""
    return ReplayProvider(parse_settings(ReplaySettings, "replay", settings))
