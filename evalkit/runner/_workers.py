"""Worker process set-up: workers die with the runner and leave SIGINT to it.

loky workers block on their call queue and only exit on their idle timeout (300 s), so a
runner killed with SIGKILL used to leave them, and the resource trackers whose pipes they hold
open, running for minutes. :func:`init_worker` runs first in every loky worker:

- a daemon thread polls ``os.getppid()``; once it is no longer the runner (the worker was
  re-parented) the worker exits, which closes the trackers' pipes so they exit as well.
  Polling works for any kind of parent death, unlike ``PR_SET_PDEATHSIG``, which fires when
  the *thread* that forked the worker ends.
- SIGINT gets a handler that does nothing: a Ctrl-C reaches the whole process group, and the
  runner alone decides what to do (flush, stop the pool, exit 130). A Python-level handler,
  unlike ``SIG_IGN``, is reset on ``exec``, so commands the worker starts still see SIGINT.

Workers are started while the runner blocks SIGINT (:func:`sigint_blocked`), so a Ctrl-C in
the moment between a worker's birth and its initializer stays pending instead of printing a
traceback from a half-started worker; :func:`init_worker` unblocks it once the handler is set.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from multiprocessing import resource_tracker as mp_tracker
from types import FrameType

from joblib.externals.loky.backend import resource_tracker as loky_tracker

#: Seconds between two checks of the parent process.
PARENT_POLL_S = 0.2


def _ignore_sigint(signum: int, frame: FrameType | None) -> None:
    """SIGINT in a worker: the runner handles it."""


def _exit_when_orphaned(parent: int) -> None:
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(1)


def init_worker(parent: int) -> None:
    """Initializer of every loky worker (see the module docstring).

    Args:
        parent: Pid of the runner. Passed in rather than read with ``os.getppid()`` here: a
            runner killed while the worker was still starting would otherwise be missed.
    """
    signal.signal(signal.SIGINT, _ignore_sigint)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if os.getppid() != parent:
        os._exit(1)
    watch = threading.Thread(
        target=_exit_when_orphaned, args=(parent,), name="evalkit-parent-watch", daemon=True
    )
    watch.start()


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """Block SIGINT in the calling thread for the block; a SIGINT that arrives is delivered after.

    Processes and threads started inside inherit the blocked mask. The resource trackers of
    multiprocessing and loky are started first: starting one *unblocks* SIGINT in the caller
    (Python 3.11's tracker restores with ``SIG_UNBLOCK``), which would undo the block just
    before the workers are spawned.
    """
    mp_tracker.ensure_running()
    loky_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
