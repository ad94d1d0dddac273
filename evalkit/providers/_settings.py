"""Provider settings: one pydantic base, a per-field outcome marker, and error-naming parsing.

Every field of a provider's settings model says whether it can change an outcome:

- ``Annotated[T, OUTCOME]``: it can (model, effort, turn limit ...); it enters the item hash,
  so changing it never gives a stale cache hit;
- ``Annotated[T, RUNTIME]``: it cannot (binary path, concurrency, retries ...).

A field without either marker is a ``TypeError`` when the class is defined, so a new setting
can never be left out of the cache key silently. :meth:`ProviderSettings.outcome` derives the
outcome settings from the markers.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evalkit._redact import register_secret_env
from evalkit.errors import ConfigError


@dataclass(frozen=True)
class OutcomeMarker:
    """Whether a settings field can change an outcome (see the module docstring).

    Attributes:
        outcome: ``True`` for outcome settings (hashed), ``False`` for runtime settings.
    """

    outcome: bool


#: Marks a setting that can change an outcome (it enters the item hash).
OUTCOME = OutcomeMarker(True)

#: Marks a setting that cannot change an outcome (paths, limits, retries).
RUNTIME = OutcomeMarker(False)


def _marker(metadata: list[Any]) -> OutcomeMarker | None:
    found = [m for m in metadata if isinstance(m, OutcomeMarker)]
    return found[-1] if found else None


class ProviderSettings(BaseModel):
    """Base of every provider's settings: frozen, unknown options rejected, fields marked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse a settings class with a field that is neither OUTCOME nor RUNTIME.

        Raises:
            TypeError: A field lacks a marker.
        """
        super().__pydantic_init_subclass__(**kwargs)
        unmarked = [n for n, f in cls.model_fields.items() if _marker(f.metadata) is None]
        if unmarked:
            raise TypeError(
                f"{cls.__name__}: settings {', '.join(unmarked)} must be annotated with "
                "OUTCOME (can change an outcome) or RUNTIME (cannot), e.g. "
                "Annotated[str | None, OUTCOME]"
            )

    @classmethod
    def outcome_fields(cls) -> tuple[str, ...]:
        """Names of the fields marked :data:`OUTCOME`, sorted."""
        return tuple(
            sorted(
                name for name, f in cls.model_fields.items()
                if (marker := _marker(f.metadata)) is not None and marker.outcome
            )
        )

    def outcome(self) -> dict[str, Any]:
        """The values of the outcome fields (the provider's part of the cache key)."""
        return self.model_dump(include=set(self.outcome_fields()))

    def __hash__(self) -> int:
        # dict-valued settings are not hashable field by field; the JSON form always is
        return hash((type(self), self.model_dump_json()))


def split_list(value: Any) -> Any:
    """Accept a comma-separated string (``--provider-opt``) where a list is expected."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


def split_args(value: Any) -> Any:
    """Accept a shell-quoted string (``--provider-opt``) where an argument list is expected."""
    if isinstance(value, str):
        return tuple(shlex.split(value))
    return value


class AgentSettings(ProviderSettings):
    """Settings shared by the CLI and API agents (each flavour may change defaults and docs).

    Outcome settings: ``model``, ``base_url``, ``effort``, ``max_turns``. Runtime settings:
    ``api_key_env``, ``max_concurrency``, ``requests_per_minute``.
    """

    model: Annotated[str | None, OUTCOME] = None
    """Model (default: the agent's own default)."""
    base_url: Annotated[str | None, OUTCOME] = None
    """Model server base URL (default: the vendor's API)."""
    api_key_env: Annotated[str, RUNTIME] = ""
    """Environment variable holding the API key (keys are never read from settings)."""
    effort: Annotated[str | None, OUTCOME] = None
    """Reasoning effort (default: the agent's or the API's)."""
    max_turns: Annotated[int | None, OUTCOME, Field(ge=1)] = None
    """Most agent turns (the case's ``budgets.max_steps`` lowers it)."""
    max_concurrency: Annotated[int | None, RUNTIME, Field(ge=1)] = None
    """Agent runs or requests at once in this process (default: unlimited)."""
    requests_per_minute: Annotated[float | None, RUNTIME, Field(gt=0)] = None
    """Agent runs or requests started per minute in this process (default: unlimited)."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got {value!r}")
        return value.rstrip("/") if value else value

    def api_key(self, provider: str, *, required: bool) -> str:
        """The key in ``api_key_env`` ("" when unset), its value registered for redaction.

        Raises:
            ConfigError: ``required`` and the variable is unset or empty.
        """
        register_secret_env(self.api_key_env)
        key = os.environ.get(self.api_key_env, "")
        if required and not key:
            raise ConfigError(
                f"'{provider}' reads its API key from the environment variable "
                f"{self.api_key_env}, which is not set; export it (or name another "
                "variable with --provider-opt api_key_env=NAME)"
            )
        return key


S = TypeVar("S", bound=BaseModel)


def parse_settings(model: type[S], provider: str, settings: Mapping[str, Any]) -> S:
    """Validate provider settings, with errors naming the option and the fix.

    Args:
        model: The provider's settings model.
        provider: Provider name, for the message.
        settings: ``--provider-opt`` values and suite settings.

    Returns:
        The validated settings.

    Raises:
        ConfigError: An unknown option or a value of the wrong type.
    """
    try:
        return model.model_validate(dict(settings))
    except ValidationError as exc:
        allowed = ", ".join(sorted(model.model_fields))
        lines = []
        for err in exc.errors():
            option = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                lines.append(f"unknown option '{option}' (allowed: {allowed})")
            else:
                lines.append(f"option '{option}': {err['msg']}")
        raise ConfigError(f"--provider-opt for '{provider}': " + "; ".join(lines)) from None
