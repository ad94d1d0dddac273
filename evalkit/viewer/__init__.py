"""``evalkit view``: a local, read-only viewer of the runs of one directory, live.

``ViewServer(runs_dir).start()`` (or ``evalkit.view(runs_dir)`` in a notebook, or
``evalkit view RUNS_DIR`` in a terminal) serves on 127.0.0.1 an index of every run that moves
while runs are in progress, each run's pass rates and items with their reasons and transcripts,
comparisons of two runs or two conditions (``evalkit compare``'s own figures), and the flip
forensics of a case. See :mod:`evalkit.viewer._server` for what keeps it safe.
"""

__all__ = [
    "ViewServer",
    "view",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.viewer._index import (
        RunIndex as RunIndex,
        RunRow as RunRow,
    )
    from evalkit.viewer._server import ViewServer, view
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
