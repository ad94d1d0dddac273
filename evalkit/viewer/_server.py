"""``evalkit view``: a local, read-only server of the runs of one directory.

Built on the standard library's :class:`http.server.ThreadingHTTPServer` (no dependency, starts
in milliseconds). Safe by default, as Jupyter's server is:

- it listens on 127.0.0.1 only;
- every request needs the per-start token: ``?token=`` once (the answer sets it as an
  ``HttpOnly``, ``SameSite=Strict`` cookie and redirects to the same page without it), or the
  cookie; a request without it gets 403;
- the ``Host`` header must name this server (``127.0.0.1:PORT`` or ``localhost:PORT``), so a
  page of another site that rebinds its name to 127.0.0.1 gets 403 (no DNS rebinding);
- it answers ``GET`` and ``HEAD`` only and never writes into a run;
- run ids are single directory names of the runs directory (no ``..``, no link out), and
  static files come from a fixed list;
- pages are redacted and their bidi controls shown as markers, as the static reports are;
- every page carries a Content-Security-Policy allowing scripts from its own ``/static/`` only,
  and ``X-Content-Type-Options: nosniff``; answers are not cached.

A run that cannot be read (a damaged manifest, a hostile directory) is an error row of the index
or an error page, never a crash of the server.
"""

from __future__ import annotations

import hmac
import secrets
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
from evalkit._bidi import neutralize_bidi
from evalkit._plain import json_text
from evalkit._redact import redact_text
from evalkit._resources import resource_dir
from evalkit.errors import EvalkitError
from evalkit.results import read_run
from evalkit.viewer._index import RunIndex

#: The Content-Security-Policy of every answer.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
COOKIE = "evalkit_view_token"
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
    """Result tables of the runs read so far, read again when a run's files change."""

    def __init__(self) -> None:
        self._frames: dict[Path, tuple[tuple[float, ...], pd.DataFrame]] = {}
        self._lock = threading.Lock()

    def rows(self, run_dir: Path) -> pd.DataFrame:
        stamp = _files_stamp(run_dir)
        with self._lock:
            hit = self._frames.get(run_dir)
            if hit is not None and hit[0] == stamp:
                return hit[1]
        frame = read_run(run_dir)
        with self._lock:
            self._frames[run_dir] = (stamp, frame)
        return frame


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
        found = _pages.comparison(runs_dir, query)
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
    """

    def __init__(self, runs_dir: str | Path, *, port: int = 0, token: str | None = None) -> None:
        self.runs_dir = Path(runs_dir).resolve()
        if not self.runs_dir.is_dir():
            from evalkit.errors import ConfigError

            raise ConfigError(f"evalkit view: {runs_dir} is not a directory; give the runs "
                              "directory (default runs)")
        self.token = token or secrets.token_urlsafe(24)
        self.index = RunIndex(self.runs_dir)
        self.cache = _RunCache()
        self.comparisons = _ComparisonCache()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The address to open (with the token)."""
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

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
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def _repr_html_(self) -> str:
        return (f'<p>evalkit view of {_pages.esc(self.runs_dir)}: '
                f'<a href="{_pages.esc(self.url)}" target="_blank">{_pages.esc(self.url)}</a></p>')

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(_Handler):
            view = server

        return Handler


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
        morsel = cookie.get(COOKIE)
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
                "Set-Cookie": f"{COOKIE}={self.view.token}; HttpOnly; SameSite=Strict; Path=/",
            })
            return
        query.pop("token", None)
        try:
            self._route(unquote(parts.path), query)
        except EvalkitError as exc:
            self._html(HTTPStatus.BAD_REQUEST, _pages.error_page("Cannot show this", str(exc)))
        except Exception as exc:  # a page that fails is an error page, never a dead server
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self._html(HTTPStatus.INTERNAL_SERVER_ERROR,
                       _pages.error_page("Something went wrong", detail[:500]))

    def _route(self, path: str, query: dict[str, str]) -> None:
        routes: dict[str, Callable[[dict[str, str]], None]] = {
            "/": lambda q: self._html(HTTPStatus.OK, _pages.index_page()),
            "/api/runs": lambda q: self._json(
                {"runs": [r.to_dict() for r in self.view.index.rows()]}),
            "/compare": self._compare_page,
            "/api/compare": self._compare_json,
            "/explain": lambda q: self._html(
                HTTPStatus.OK, _pages.explain_page(self.view.runs_dir, self._checked(q))),
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
        """The query with each run it names checked to be a run of the directory."""
        for key in ("run", "baseline", "candidate"):
            if key in query and query[key] and self.view.index.run_dir(query[key]) is None:
                from evalkit.errors import InputError

                raise InputError(f"{key} {query[key]!r} is not a run of {self.view.runs_dir}")
        return query

    def _run_page(self, run_id: str) -> None:
        run_dir = self.view.index.run_dir(run_id)
        if run_dir is None:
            self._html(HTTPStatus.NOT_FOUND,
                       _pages.error_page("Not found", f"no run {run_id!r} in this directory"))
            return
        rows = self.view.cache.rows(run_dir)
        self._html(HTTPStatus.OK, _pages.run_page(run_dir, rows, self.view.runs_dir))

    def _compare_page(self, query: dict[str, str]) -> None:
        result, title, used = self.view.comparisons.get(self.view.runs_dir, self._checked(query))
        self._html(HTTPStatus.OK, _pages.comparison_page(result, title, used))

    def _compare_json(self, query: dict[str, str]) -> None:
        result, _, _ = self.view.comparisons.get(self.view.runs_dir, self._checked(query))
        self._json(result.to_dict())

    def _json(self, data: dict[str, Any]) -> None:
        self._send(HTTPStatus.OK, json_text(data).encode(), "application/json")

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


def view(runs_dir: str | Path = "runs", *, port: int = 0) -> ViewServer:
    """Start the viewer of ``runs_dir`` in the background (for a notebook); shows its link.

    Args:
        runs_dir: The runs directory.
        port: The port on 127.0.0.1 (0: any free one).

    Returns:
        The running :class:`ViewServer` (``.url``, ``.stop()``); in Jupyter it displays as a
        link.
    """
    return ViewServer(runs_dir, port=port).start()
