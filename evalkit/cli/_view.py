"""``evalkit view [RUNS_DIR]``: serve the live viewer until Ctrl-C."""

from __future__ import annotations

import argparse
import webbrowser

from evalkit._settings import RUNS_DIR
from evalkit.cli._common import eprint


def configure(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit view``."""
    p.add_argument("runs_dir", nargs="?", default=RUNS_DIR.default, type=RUNS_DIR.parse,
                   help=f"the runs directory (default {RUNS_DIR.default})")
    p.add_argument("--port", type=int, default=0,
                   help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--open", action="store_true", help="open the address in a browser")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Print the address (with its token) and serve until interrupted."""
    from evalkit.viewer import ViewServer

    server = ViewServer(args.runs_dir, port=args.port)
    print(f"evalkit view of {server.runs_dir}: {server.url}", flush=True)
    eprint("read-only, on 127.0.0.1 only; the address holds this start's token. Ctrl-C stops.")
    if args.open:
        webbrowser.open(server.launch_file().as_uri())  # the token stays off command lines
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        eprint("stopped")
    finally:
        server.stop()
    return 0
