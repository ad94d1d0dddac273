"""Registers the built-in providers."""

from evalkit.providers._anthropic import create_anthropic
from evalkit.providers._claude_code import create_claude_code
from evalkit.providers._codex import create_codex
from evalkit.providers._openai_compat import create_openai_compat
from evalkit.providers._recording import create_recording
from evalkit.providers._registry import register_provider
from evalkit.providers._replay import create_replay
from evalkit.providers._simulated import create_simulated

register_provider("simulated", create_simulated)
register_provider("replay", create_replay)
register_provider("recording", create_recording)
register_provider("claude_code", create_claude_code)
register_provider("codex", create_codex)
register_provider("openai_compat", create_openai_compat)
register_provider("anthropic", create_anthropic)
