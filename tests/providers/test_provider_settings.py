"""Provider settings: every field marked outcome or runtime; the outcome dict comes from markers."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from evalkit.providers import (
    OUTCOME,
    RUNTIME,
    AnthropicSettings,
    ClaudeCodeSettings,
    CodexSettings,
    OpenAICompatSettings,
    ProviderSettings,
    RecordingSettings,
    create_provider,
)
from evalkit.providers._replay import ReplaySettings
from evalkit.providers._settings import _marker
from evalkit.providers._simulated import SimulatedSettings

#: The outcome fields of every built-in (the item hashes of earlier runs depend on them).
EXPECTED_OUTCOME = {
    SimulatedSettings: {"model", "lift", "route_p", "over_trigger_p", "spread", "hurt_share",
                        "error_rate", "crash_rate", "hang_rate", "description_weight"},
    ReplaySettings: set(),
    RecordingSettings: {"inner"},
    OpenAICompatSettings: {"model", "base_url", "effort", "max_turns", "max_tokens",
                           "temperature", "system_prompt", "api"},
    AnthropicSettings: {"model", "base_url", "effort", "max_turns", "max_tokens", "temperature",
                        "system_prompt"},
    ClaudeCodeSettings: {"model", "base_url", "effort", "max_turns", "extra_args",
                         "permission_mode", "allowed_tools", "disallowed_tools",
                         "scrub_subprocess_env", "dangerously_skip_permissions"},
    CodexSettings: {"model", "base_url", "effort", "max_turns", "extra_args", "sandbox",
                    "config_overrides"},
}


@pytest.mark.parametrize("model", list(EXPECTED_OUTCOME), ids=lambda m: m.__name__)
def test_every_field_is_marked_outcome_or_runtime(model: type[ProviderSettings]) -> None:
    markers = {name: _marker(f.metadata) for name, f in model.model_fields.items()}
    assert None not in markers.values(), f"unmarked: {[n for n, m in markers.items() if not m]}"
    outcome = {name for name, m in markers.items() if m is not None and m.outcome}
    assert outcome == EXPECTED_OUTCOME[model]
    assert set(model.outcome_fields()) == outcome


def test_a_new_unmarked_field_is_refused_when_the_class_is_defined() -> None:
    with pytest.raises(TypeError, match="forgotten must be annotated with OUTCOME"):
        class _Forgetful(ProviderSettings):
            model: Annotated[str, OUTCOME] = "m"
            forgotten: int = 0

    with pytest.raises(TypeError, match="max_turns"):
        class _Redeclared(CodexSettings):
            max_turns: int | None = 3  # a redeclared default must keep its marker


def test_outcome_dict_follows_the_markers() -> None:
    class _Settings(ProviderSettings):
        model: Annotated[str, OUTCOME] = "m"
        tags: Annotated[tuple[str, ...], OUTCOME] = ()
        options: Annotated[dict[str, Any], OUTCOME] = {}
        binary: Annotated[str, RUNTIME] = "/bin/x"

    settings = _Settings(tags=("a",), options={"k": [1]}, binary="/elsewhere")
    assert settings.outcome() == {"model": "m", "tags": ("a",), "options": {"k": [1]}}
    # frozen models with mapping fields are hashable (worker caches key on them)
    assert hash(settings) == hash(_Settings.model_validate(settings.model_dump(mode="json")))
    assert isinstance(settings, BaseModel)


def test_runtime_settings_leave_the_outcome_and_hash_unchanged() -> None:
    base = create_provider("simulated", {"model": "sim-2"})
    slow = create_provider("simulated", {"model": "sim-2", "latency_s": 0.5})
    assert slow.outcome_settings() == base.outcome_settings()
    assert "latency_s" not in base.outcome_settings()
    other = create_provider("simulated", {"model": "sim-2", "lift": 1.0})
    assert other.outcome_settings() != base.outcome_settings()
    api = create_provider("openai_compat", {"model": "m", "base_url": "http://127.0.0.1:9/v1",
                                            "max_concurrency": 3, "request_timeout_s": 5})
    assert api.outcome_settings() == {
        "model": "m", "base_url": "http://127.0.0.1:9/v1", "effort": None, "max_turns": 20,
        "max_tokens": None, "temperature": None, "api": "chat",
        "system_prompt": OpenAICompatSettings().system_prompt,
    }



@pytest.mark.parametrize("name", ["anthropic", "openai_compat", "codex"])
def test_an_unset_api_key_variable_is_named_with_its_fix(
    name: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP and CLI agents refuse an unset key variable in one wording; a set one is read."""
    from evalkit.errors import ConfigError

    monkeypatch.delenv("EVALKIT_TEST_KEY", raising=False)
    settings = {"model": "m", "api_key_env": "EVALKIT_TEST_KEY"}
    if name == "codex":
        settings["binary"] = request.getfixturevalue("codex_bin")
    with pytest.raises(ConfigError) as refused:
        create_provider(name, settings)
    assert str(refused.value) == (
        f"'{name}' reads its API key from the environment variable EVALKIT_TEST_KEY, which is "
        "not set; export it (or name another variable with --provider-opt api_key_env=NAME)"
    )
    monkeypatch.setenv("EVALKIT_TEST_KEY", "sk-test-value")
    provider = create_provider(name, settings)
    if name != "codex":
        assert provider.api_key == "sk-test-value"  # type: ignore[attr-defined]


def test_claude_code_without_a_key_variable_runs_on_its_own_login(claude_bin: str) -> None:
    """``api_key_env=""`` asks for no key: Claude Code uses its own login."""
    create_provider("claude_code", {"api_key_env": "", "binary": claude_bin})
