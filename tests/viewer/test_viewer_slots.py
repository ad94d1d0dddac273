"""A connection's slot in the viewer is given back exactly once, whatever interrupts its start.

Ctrl-C (SIGINT) lands in the main thread. When it lands while that thread waits for a new
connection's thread to start, it is raised there after the thread began, and the connection is
freed both by its thread and by the failed start. The second release of the bounded semaphore
used to raise ``ValueError`` in place of the ``KeyboardInterrupt``; ``socketserver`` reports a
``ValueError`` as a failed request and goes on, so the viewer kept serving after Ctrl-C.
"""

from __future__ import annotations

import socket
import threading
from socketserver import BaseRequestHandler
from typing import Any

import pytest

from evalkit.viewer._server import _HTTPServer


class _Quiet(BaseRequestHandler):
    def handle(self) -> None:
        """Serve nothing: the test is about the slot, not the answer."""


def test_ctrl_c_while_a_connection_starts_reaches_the_caller_and_frees_its_slot_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = _HTTPServer(("127.0.0.1", 0), _Quiet, max_connections=2)  # type: ignore[arg-type]
    started = threading.Thread.start

    def start_then_interrupt(thread: threading.Thread, *args: Any, **kwargs: Any) -> None:
        started(thread, *args, **kwargs)
        thread.join(10)  # the connection is served and its thread has freed the slot
        raise KeyboardInterrupt

    ours, theirs = socket.socketpair()
    try:
        monkeypatch.setattr(threading.Thread, "start", start_then_interrupt)
        with pytest.raises(KeyboardInterrupt):
            server.process_request(ours, ("127.0.0.1", 1))
        monkeypatch.undo()
        held = [server._slots.acquire(blocking=False) for _ in range(3)]
        assert held == [True, True, False]  # both slots free again, and no third one
    finally:
        theirs.close()
        server.server_close()
