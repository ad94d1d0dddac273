"""Registers the built-in providers."""

from evalkit.providers._registry import register_provider
from evalkit.providers._replay import create_replay
from evalkit.providers._simulated import create_simulated

register_provider("simulated", create_simulated)
register_provider("replay", create_replay)
