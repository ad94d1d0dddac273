"""How a run stops early: an outcome that stops it, and SIGTERM raised like SIGINT."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from evalkit.runner._execute import ItemOutcome


class _Stop(Exception):
    """An outcome that stops the run (see :data:`STOPPING_ERROR_CLASSES`)."""

    def __init__(self, outcome: ItemOutcome) -> None:
        self.outcome = outcome
        super().__init__(outcome.key)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like SIGINT."""


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`_Terminated` in the main thread.

    As SIGINT raises ``KeyboardInterrupt``; in another thread, and after the block, the previous
    handler stands.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise _Terminated()

    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
