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

Workers are started while the runner holds SIGINT back (:func:`sigint_blocked`). Blocked in
the runner's thread, it stays pending in a worker between its birth and its initializer
instead of printing a traceback from a half-started worker; :func:`init_worker` unblocks it
once the handler is set. A signal mask is per thread, though: the kernel hands a Ctrl-C to any
thread of the runner that does not block it, and Python then raises ``KeyboardInterrupt`` in
the main thread wherever it is, even inside loky's process launch (whose clean-up then fails
on a variable it never set). So the runner also swaps its own SIGINT handler for one that only
takes note, and raises the signal again once the workers are up.
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
    """Hold SIGINT back while workers start; it is raised again, unchanged, after the block.

    Processes started inside inherit SIGINT blocked. In the main thread the SIGINT handler is
    also replaced for the block by one that only takes note; a noted SIGINT is raised again
    (:func:`signal.raise_signal`) once the previous handler is back, so a Ctrl-C during
    start-up reaches the runner as a ``KeyboardInterrupt`` after the block, never inside a
    worker's launch. The resource trackers of multiprocessing and loky are started first:
    starting one *unblocks* SIGINT in the caller (Python 3.11's tracker restores with
    ``SIG_UNBLOCK``), which would undo the block just before the workers are spawned.
    """
    noted: list[int] = []
    in_main = threading.current_thread() is threading.main_thread()
    previous_handler = (
        signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
        if in_main
        else None
    )
    try:
        mp_tracker.ensure_running()
        loky_tracker.ensure_running()
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    finally:
        if in_main:
            signal.signal(signal.SIGINT, previous_handler)
    if noted:
        signal.raise_signal(signal.SIGINT)
