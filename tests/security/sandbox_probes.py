"""Shared attack commands and helpers of the sandbox tests."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: A key-shaped secret set in the parent's environment by the tests.
SECRET = "sk-sandbox-probe-0123456789abcdef-SECRET"

#: Prints the environment of the parent, of the sandbox's pid 1 and of every visible process.
READ_ENVIRONS = (
    "for f in /proc/$PPID/environ /proc/1/environ /proc/[0-9]*/environ; do "
    "echo \"== $f\"; tr '\\000' '\\n' < \"$f\"; done 2>&1; echo '== env'; env"
)


def probe_network(port: int) -> str:
    """A command that reports ``CONNECTED`` if it reaches 127.0.0.1:``port``."""
    return (
        f"if exec 3<>/dev/tcp/127.0.0.1/{port}; then "
        f"printf 'GET /from-sandbox HTTP/1.0\\r\\n\\r\\n' >&3; head -c 12 <&3; echo CONNECTED; "
        "else echo BLOCKED; fi"
    )


def processes_mentioning(needle: str) -> list[str]:
    """Command lines of live processes that contain ``needle``."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if needle in cmdline:
                found.append(cmdline)
    return found


class _Recorder(BaseHTTPRequestHandler):
    paths: list[str]

    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        self.paths.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        return


@contextmanager
def loopback_http() -> Iterator[tuple[int, list[str]]]:
    """A real HTTP server on 127.0.0.1; yields its port and the paths it was asked for."""
    paths: list[str] = []
    handler = type("Handler", (_Recorder,), {"paths": paths})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], paths
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def pids_with_argument(argument: str) -> list[int]:
    """Pids of live processes with ``argument`` as one whole argument (a unique marker)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    argv = fh.read().split(b"\0")
            except OSError:
                continue
            if argument.encode() in argv:
                found.append(int(pid))
    return found
