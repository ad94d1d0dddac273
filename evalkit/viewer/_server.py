"""``evalkit view``: a local, read-only server of the runs of one directory.

Built on the standard library's :class:`http.server.ThreadingHTTPServer` (no dependency, starts
in milliseconds). Safe by default, as Jupyter's server is:

- it listens on 127.0.0.1 only;
- every request needs the per-start token: ``?token=`` once (the answer sets it as an
  ``HttpOnly``, ``SameSite=Strict`` cookie named after the port, so two viewers on two ports
  keep their own, and redirects to the same page without it), or the cookie; a request
  without it gets 403;
- the ``Host`` header must name this server (``127.0.0.1:PORT`` or ``localhost:PORT``), so a
  page of another site that rebinds its name to 127.0.0.1 gets 403 (no DNS rebinding);
- it answers ``GET`` and ``HEAD`` only and never writes into a run;
- run ids are single directory names of the runs directory (no ``..``, no link out, never a
  path of the current directory), and static files come from a fixed list;
- a run holding anything but regular files and directories (a FIFO, a device, a link) is
  refused before it is read, and the index reads manifests and events as regular files only,
  bounded, with no lock held while it reads (:mod:`evalkit.viewer._files`);
- pages are redacted and their bidi controls shown as markers, as the static reports are;
  JSON answers are redacted and every control character of their strings shown as a marker;
  a value longer than :data:`~evalkit.viewer._shown.DISPLAY_CHARS` characters is cut, its
  length said (:mod:`evalkit.viewer._shown`);
- a connection idle for ``idle_timeout`` seconds is closed, at most ``max_connections`` are
  served at once (more get 503), and a client gone before its answer is one line on stderr;
- every page carries a Content-Security-Policy allowing scripts from its own ``/static/`` only,
  and ``X-Content-Type-Options: nosniff``; answers are not cached.

A run that cannot be read (a damaged manifest, a hostile directory) is an error row of the index
or an error page, never a crash of the server.
"""

from __future__ import annotations

import hmac
import os
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from http import HTTPStatus
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, unquote, urlencode, urlsplit

import pandas as pd

import evalkit.viewer._pages as _pages
from evalkit._bidi import neutralize_bidi, neutralize_controls
from evalkit._plain import json_text
from evalkit._redact import redact_text
from evalkit._resources import resource_dir
from evalkit._settings import RUNS_DIR
from evalkit.errors import EvalkitError
from evalkit.results import read_run
from evalkit.viewer._files import check_run_files
from evalkit.viewer._index import RunIndex
from evalkit.viewer._shown import shortened, shown_json

#: The Content-Security-Policy of every answer.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
#: The token cookie's name, followed by ``_PORT``: cookies do not tell ports apart, names do.
COOKIE = "evalkit_view_token"
#: Seconds a connection may stay silent before the server closes it.
IDLE_TIMEOUT = 30.0
#: Most connections served at once (each has a thread); more are answered 503 and closed.
MAX_CONNECTIONS = 64
#: Columns of a run's rows kept whole however long (the pages look transcripts up by them).
_LOOKUP_COLUMNS = frozenset({"item_key", "transcript_path", "run_id"})
#: The files under ``/static/``: the reports' stylesheet and item browser, the viewer's own.
_STATIC = {
    "evalkit.css": "text/css; charset=utf-8",
    "browser.js": "text/javascript; charset=utf-8",
    "view.js": "text/javascript; charset=utf-8",
    "view.css": "text/css; charset=utf-8",
}


def _static_text(name: str) -> bytes:
    return (resource_dir("templates") / "evalkit" / "static" / name).read_bytes()


def _files_stamp(run_dir: Path) -> tuple[float, ...]:
    """When a run's manifest, results and parts last changed (what a cached view depends on)."""
    stamps = []
    for name in ("manifest.json", "results.parquet", "parts"):
        try:
            stamps.append((run_dir / name).stat().st_mtime)
        except OSError:
            stamps.append(0.0)
    return tuple(stamps)


class _RunCache:
    """Result tables of the runs read so far (long values cut), read again when files change.

    Besides each table, the case ids that were cut, by the text they are shown as, so that a
    link holding a cut id still names its case.
    """

    def __init__(self) -> None:
        self._frames: dict[Path, tuple[tuple[float, ...], pd.DataFrame, dict[str, str]]] = {}
        self._lock = threading.Lock()

    def _entry(self, run_dir: Path) -> tuple[pd.DataFrame, dict[str, str]]:
        stamp = _files_stamp(run_dir)
        with self._lock:
            hit = self._frames.get(run_dir)
            if hit is not None and hit[0] == stamp:
                return hit[1], hit[2]
        full = read_run(run_dir)
        frame = shortened(full, keep=_LOOKUP_COLUMNS)
        cut = {}
        if "case_id" in full and frame["case_id"] is not full["case_id"]:
            pairs = zip(frame["case_id"], full["case_id"], strict=True)
            cut = {shown: whole for shown, whole in pairs if shown != whole}
        with self._lock:
            self._frames[run_dir] = (stamp, frame, cut)
        return frame, cut

    def rows(self, run_dir: Path) -> pd.DataFrame:
        """The run's rows, every long value cut for display (lookup columns whole)."""
        return self._entry(run_dir)[0]

    def full_ids(self, run_dir: Path) -> dict[str, str]:
        """``{shown: whole}`` of the run's case ids that were cut for display."""
        return self._entry(run_dir)[1]


class _ComparisonCache:
    """Comparisons computed so far, by query and the files of the runs they read."""

    def __init__(self, limit: int = 32) -> None:
        self._limit = limit
        self._done: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.Lock()

    def get(self, runs_dir: Path, query: dict[str, str]) -> Any:
        names = [query.get(k, "") for k in ("run", "baseline", "candidate") if query.get(k)]
        stamps = tuple(_files_stamp(runs_dir / name) for name in names)
        key = (tuple(sorted(query.items())), stamps)
        with self._lock:
            if key in self._done:
                return self._done[key]
        result, title, used = _pages.comparison(runs_dir, query)
        found = (shortened(result), shortened(title), used)  # kept small: up to `limit` held
        with self._lock:
            if len(self._done) >= self._limit:
                self._done.pop(next(iter(self._done)))
            self._done[key] = found
        return found


class ViewServer:
    """The viewer of one runs directory (``start()``, ``url``, ``stop()``).

    Args:
        runs_dir: The runs directory.
        port: The port on 127.0.0.1 (0: any free one).
        token: The access token (default: a new random one per start).
        idle_timeout: Seconds a connection may stay silent before it is closed.
        max_connections: Most connections served at once; more are answered 503.
    """

    def __init__(
        self,
        runs_dir: str | Path,
        *,
        port: int = 0,
        token: str | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.runs_dir = Path(runs_dir).resolve()
        if not self.runs_dir.is_dir():
            from evalkit.errors import ConfigError

            raise ConfigError(f"evalkit view: {runs_dir} is not a directory; give the runs "
                              "directory (default runs)")
        self.token = token or secrets.token_urlsafe(24)
        self.index = RunIndex(self.runs_dir)
        self.cache = _RunCache()
        self.comparisons = _ComparisonCache()
        self.idle_timeout = idle_timeout
        self._httpd = _HTTPServer(("127.0.0.1", port), self._handler(), max_connections)
        self._thread: threading.Thread | None = None
        self._launch_dir: Path | None = None

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The address to open (with the token)."""
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    @property
    def cookie_name(self) -> str:
        """The name of the token's cookie: ``evalkit_view_token_PORT``."""
        return f"{COOKIE}_{self.port}"

    def launch_file(self) -> Path:
        """A local page that sends a browser to :attr:`url`, for ``--open`` (as Jupyter does).

        A browser started with the address itself would carry the token on its command line,
        where every user of the machine sees it (``ps``); started with this file, it carries
        a file name. The file is readable by its owner only (mode 0600), in a private
        directory (0700) removed by :meth:`stop`.

        Returns:
            The file (open it with ``webbrowser.open(path.as_uri())``).
        """
        if self._launch_dir is None:
            self._launch_dir = Path(tempfile.mkdtemp(prefix="evalkit-view-"))
        path = self._launch_dir / f"open-{self.port}.html"
        target = _pages.esc(self.url)
        text = (
            '<!doctype html><html><head><meta charset="utf-8">'
            f'<meta http-equiv="refresh" content="0;url={target}">'
            "<title>evalkit view</title></head><body><p>Opening evalkit view: "
            f'<a href="{target}">{_pages.esc(self.runs_dir)}</a>.</p></body></html>'
        )
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        return path

    def start(self) -> ViewServer:
        """Serve in a background thread; returns itself."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        name="evalkit-view")
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted."""
        self._httpd.serve_forever()

    def stop(self) -> None:
        """Stop serving, close the socket and remove the :meth:`launch_file`."""
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._launch_dir is not None:
            shutil.rmtree(self._launch_dir, ignore_errors=True)
            self._launch_dir = None

    def _repr_html_(self) -> str:
        return (f'<p>evalkit view of {_pages.esc(self.runs_dir)}: '
                f'<a href="{_pages.esc(self.url)}" target="_blank">{_pages.esc(self.url)}</a></p>')

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(_Handler):
            view = server
            timeout = server.idle_timeout  # each read and write of the socket

        return Handler


class _HTTPServer(ThreadingHTTPServer):
    """One thread per connection, at most ``max_connections`` of them; errors in one line."""

    daemon_threads = True
    request_queue_size = 128  # a burst of connections waits in the backlog, none is dropped

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 max_connections: int) -> None:
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(max_connections)
        self._held: set[int] = set()  # the connections holding a slot (by id), under _lock
        self._lock = threading.Lock()

    def _free(self, request: Any) -> None:
        """Give back the slot ``request`` holds, once (its thread and a failed start may both ask).

        A Ctrl-C that lands while the main thread waits for a new connection's thread to start
        raises there after the thread began: freeing the slot on both sides used to raise
        ``ValueError`` in place of the ``KeyboardInterrupt``, and the viewer kept serving.
        """
        with self._lock:
            if id(request) not in self._held:
                return
            self._held.discard(id(request))
        self._slots.release()

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve in a new thread, or answer 503 at once when every slot is taken."""
        if not self._slots.acquire(blocking=False):
            try:
                request.setblocking(False)
                request.send(b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: 36\r\nConnection: close\r\n\r\n"
                             b"busy: too many connections at once\n")
            except OSError:
                pass
            self.shutdown_request(request)
            return
        with self._lock:
            self._held.add(id(request))
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._free(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """Serve one connection and free its slot."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._free(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line on stderr, never a traceback (a client that went away is no error)."""
        exc = sys.exc_info()[1]
        who = ":".join(str(part) for part in client_address[:2]) if client_address else "?"
        if isinstance(exc, ConnectionError | TimeoutError | socket.timeout):
            line = f"client {who} went away before its answer was sent ({type(exc).__name__})"
        else:
            line = f"request from {who} failed: {type(exc).__name__}: {str(exc)[:200]}"
        print(f"evalkit view: {neutralize_controls(line)}", file=sys.stderr, flush=True)


class _Handler(BaseHTTPRequestHandler):
    view: ViewServer
    server_version = "evalkit-view"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """Quiet: the terminal shows the address, not every request."""

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
        """As GET, without the body."""
        self._answer(head=True)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        """Route one request (after the Host and token checks)."""
        self._answer(head=False)

    def _refuse(self) -> None:
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"read-only: GET and HEAD only\n",
                   "text/plain; charset=utf-8", extra={"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse  # noqa: N815

    def _host_ok(self) -> bool:
        host = (self.headers.get("Host") or "").strip().lower()
        port = self.view.port
        return host in (f"127.0.0.1:{port}", f"localhost:{port}")

    def _token_ok(self, query: dict[str, str]) -> tuple[bool, bool]:
        """Whether the request carries the token, and whether it came in the query."""
        expected = self.view.token.encode()
        given = query.get("token")
        if given is not None:
            return hmac.compare_digest(given.encode(), expected), True
        cookie = SimpleCookie(self.headers.get("Cookie") or "")
        morsel = cookie.get(self.view.cookie_name)
        if morsel is None:
            return False, False
        return hmac.compare_digest(morsel.value.encode(), expected), False

    def _answer(self, *, head: bool) -> None:
        self._head_only = head
        if not self._host_ok():
            self._send(HTTPStatus.FORBIDDEN, b"forbidden: unexpected Host header\n",
                       "text/plain; charset=utf-8")
            return
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        ok, in_query = self._token_ok(query)
        if not ok:
            self._send(HTTPStatus.FORBIDDEN,
                       b"forbidden: open the address evalkit view printed (it holds the token)\n",
                       "text/plain; charset=utf-8")
            return
        if in_query:  # keep it in a cookie, out of the address bar and the history
            rest = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                    if k != "token"]
            location = parts.path + ("?" + urlencode(rest) if rest else "")
            self._send(HTTPStatus.SEE_OTHER, b"", "text/plain; charset=utf-8", extra={
                "Location": location,
                "Set-Cookie": f"{self.view.cookie_name}={self.view.token}; HttpOnly; "
                              "SameSite=Strict; Path=/",
            })
            return
        query.pop("token", None)
        try:
            self._route(unquote(parts.path), query)
        except (ConnectionError, TimeoutError):
            raise  # the client went away: one line on stderr (handle_error)
        except EvalkitError as exc:
            self._html(HTTPStatus.BAD_REQUEST,
                       _pages.error_page("Cannot show this", shortened(str(exc))))
        except Exception as exc:  # a page that fails is an error page, never a dead server
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self._html(HTTPStatus.INTERNAL_SERVER_ERROR,
                       _pages.error_page("Something went wrong", shortened(detail, limit=500)))

    def _route(self, path: str, query: dict[str, str]) -> None:
        routes: dict[str, Callable[[dict[str, str]], None]] = {
            "/": lambda q: self._html(HTTPStatus.OK, _pages.index_page()),
            "/api/runs": lambda q: self._json(
                {"runs": [r.to_dict() for r in self.view.index.rows()]}),
            "/compare": self._compare_page,
            "/api/compare": self._compare_json,
            "/explain": self._explain_page,
        }
        if path in routes:
            routes[path](query)
        elif path.startswith("/static/") and path[len("/static/"):] in _STATIC:
            name = path[len("/static/"):]
            self._send(HTTPStatus.OK, _static_text(name), _STATIC[name])
        elif path.startswith("/run/"):
            self._run_page(path[len("/run/"):])
        else:
            self._html(HTTPStatus.NOT_FOUND, _pages.error_page("Not found", f"no page {path}"))

    def _checked(self, query: dict[str, str]) -> dict[str, str]:
        """The query with each run it names checked to be a run of the directory.

        Checked: a plain directory name of the runs directory (never a path, never the current
        directory's), holding regular files and directories only.
        """
        for key in ("run", "baseline", "candidate"):
            if key in query and query[key]:
                run_dir = self.view.index.run_dir(query[key])
                if run_dir is None:
                    from evalkit.errors import InputError

                    raise InputError(f"{key} {shortened(query[key], limit=200)!r} is not a run "
                                     f"of {self.view.runs_dir}")
                check_run_files(run_dir)
        return query

    def _explain_page(self, query: dict[str, str]) -> None:
        checked = self._checked(query)
        run_dir = self.view.index.run_dir(checked.get("run", ""))
        if run_dir is not None and checked.get("case"):  # a long case id is linked cut short
            full = _pages.full_case_id(self.view.cache.full_ids(run_dir), checked["case"])
            checked = {**checked, "case": full}
        self._html(HTTPStatus.OK, _pages.explain_page(self.view.runs_dir, checked))

    def _run_page(self, run_id: str) -> None:
        run_dir = self.view.index.run_dir(run_id)
        if run_dir is None:
            self._html(HTTPStatus.NOT_FOUND,
                       _pages.error_page("Not found", f"no run {run_id!r} in this directory"))
            return
        check_run_files(run_dir)
        rows = self.view.cache.rows(run_dir)
        self._html(HTTPStatus.OK, _pages.run_page(run_dir, rows, self.view.runs_dir))

    def _compare_page(self, query: dict[str, str]) -> None:
        result, title, used = self.view.comparisons.get(self.view.runs_dir, self._checked(query))
        self._html(HTTPStatus.OK, _pages.comparison_page(result, title, used))

    def _compare_json(self, query: dict[str, str]) -> None:
        result, _, _ = self.view.comparisons.get(self.view.runs_dir, self._checked(query))
        self._json(result.to_dict())

    def _json(self, data: dict[str, Any]) -> None:
        # as the pages: long values cut, secrets redacted, control characters shown as markers
        self._send(HTTPStatus.OK, json_text(shown_json(data)).encode(), "application/json")

    def _html(self, status: HTTPStatus, text: str) -> None:
        # as the static reports: secrets redacted, bidi controls shown instead of obeyed
        page = neutralize_bidi(redact_text(text))
        self._send(status, page.encode("utf-8"), "text/html; charset=utf-8")

    def _send(self, status: HTTPStatus, body: bytes, content_type: str,
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if not getattr(self, "_head_only", False):
            self.wfile.write(body)


def view(runs_dir: str | Path = RUNS_DIR.default, *, port: int = 0) -> ViewServer:
    """Start the viewer of ``runs_dir`` in the background (for a notebook); shows its link.

    Args:
        runs_dir: The runs directory.
        port: The port on 127.0.0.1 (0: any free one).

    Returns:
        The running :class:`ViewServer` (``.url``, ``.stop()``); in Jupyter it displays as a
        link.
    """
    return ViewServer(runs_dir, port=port).start()
