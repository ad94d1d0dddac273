"""Shared CLI helpers: JSON output, key=value parsing, error reporting."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from evalkit.errors import ConfigError

#: Exit code of ``evalkit run`` when the run finished but failed: every item of the run, or of
#: a condition or provider, ended in an error (0 ok, 1 check failed, 2 bad input/config,
#: 130/143 interrupted).
EXIT_RUN_FAILED = 3


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def print_json(data: dict[str, Any]) -> None:
    """Print one JSON object on stdout (NaN and infinities become null)."""
    sys.stdout.write(json.dumps(_clean(data), default=str) + "\n")
    sys.stdout.flush()


def eprint(message: str) -> None:
    """Print to stderr."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def parse_key_values(values: list[str] | None, flag: str) -> dict[str, str]:
    """Parse repeated ``KEY=VALUE`` options.

    Raises:
        ConfigError: A value without ``=``.
    """
    out: dict[str, str] = {}
    for raw in values or []:
        key, sep, value = raw.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} expects KEY=VALUE, got '{raw}'")
        out[key.strip()] = value
    return out


def split_csv(value: str | None) -> tuple[str, ...]:
    """Split a comma-separated option into a tuple (empty when None)."""
    if not value:
        return ()
    return tuple(v.strip() for v in value.split(",") if v.strip())


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--json``: one JSON object on stdout and nothing else there."""
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object on stdout (progress on stderr)"
    )
