"""A per-provider-instance cap on agent runs or requests in flight and on their start rate.

It is process-local: run API providers with ``--backend threading`` so every worker thread
shares one limiter.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from evalkit.errors import ProviderTimeout


class Limiter:
    """Caps concurrency and request rate of one provider instance (thread-safe).

    Args:
        max_concurrency: Requests in flight at once (``None``: unlimited).
        requests_per_minute: Request starts per minute, evenly spaced (``None``: unlimited).
    """

    def __init__(self, max_concurrency: int | None, requests_per_minute: float | None) -> None:
        self._slots = threading.BoundedSemaphore(max_concurrency) if max_concurrency else None
        self._interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._lock = threading.Lock()
        self._next_start = 0.0

    @contextlib.contextmanager
    def slot(self, deadline: float) -> Iterator[None]:
        """Hold one slot for the duration of a request.

        Args:
            deadline: ``time.monotonic()`` by which the slot must have been obtained.

        Raises:
            ProviderTimeout: The deadline passed while waiting.
        """
        if self._slots is not None and not self._slots.acquire(
            timeout=max(0.0, deadline - time.monotonic())
        ):
            raise ProviderTimeout("timed out waiting for a free provider slot (max_concurrency)")
        try:
            self._wait_turn(deadline)
            yield
        finally:
            if self._slots is not None:
                self._slots.release()

    def _wait_turn(self, deadline: float) -> None:
        if not self._interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next_start)
            self._next_start = start + self._interval
        if start > deadline:
            raise ProviderTimeout("timed out waiting for the rate limit (requests_per_minute)")
        time.sleep(max(0.0, start - now))

