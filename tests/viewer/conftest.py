"""The viewer tests' server: a real ViewServer on 127.0.0.1 over each module's ``runs``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.viewer import ViewServer


@pytest.fixture
def server(runs: Path) -> Iterator[ViewServer]:
    """A started viewer of the module's ``runs`` directory, stopped after the test."""
    started = ViewServer(runs).start()
    try:
        yield started
    finally:
        started.stop()
