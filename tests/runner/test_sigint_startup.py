"""A Ctrl-C while the workers start is held back and raised once they are up, never inside."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import with_default_sigint

pytestmark = pytest.mark.serial  # Ctrl-C at start-up moments: not beside other tests

ROOT = Path(__file__).resolve().parents[2]

# A Ctrl-C delivered to another thread of the runner, one that does not block SIGINT (the
# kernel picks any such thread for a signal sent to the process group): Python raises
# KeyboardInterrupt in the main thread at its next instruction, whatever its signal mask.
SCRIPT = textwrap.dedent(
    """
    import signal, threading, time
    from evalkit.runner._workers import sigint_blocked

    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    where = "nowhere"
    try:
        with sigint_blocked():
            signal.pthread_kill(other.ident, signal.SIGINT)
            for _ in range(200):  # the instructions a worker launch would run
                time.sleep(0.001)
            where = "inside"
        where = "after the block"
        time.sleep(1)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", "after the block" if where == "inside" else "inside")
    finally:
        stop.set()
    print("handler restored:", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    """
)


def _python(script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a fresh interpreter with SIGINT at its default."""
    return subprocess.run(
        with_default_sigint([sys.executable, "-c", script]),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def test_a_sigint_caught_by_another_thread_is_raised_after_the_block() -> None:
    done = _python(SCRIPT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "KeyboardInterrupt after the block",
        "handler restored: True",
    ]


def test_without_a_sigint_the_block_runs_through_and_the_handler_is_back() -> None:
    done = _python(SCRIPT.replace("signal.pthread_kill(other.ident, signal.SIGINT)", "pass"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["handler restored: True"]


RACE_SCRIPT = textwrap.dedent(
    """
    import threading
    from evalkit.runner._backends import manager_thread_race_ignored

    def add_call_item_to_queue():  # loky's function, failing as it does in the race
        {}[1]

    def other_failure():
        {}[2]

    def run(name, target):
        thread = threading.Thread(target=target, name=name)
        thread.start()
        thread.join()

    with manager_thread_race_ignored():
        run("ExecutorManagerThread", add_call_item_to_queue)  # dropped
        run("ExecutorManagerThread", other_failure)  # another failure: shown
        run("SomeOtherThread", add_call_item_to_queue)  # another thread: shown
    run("ExecutorManagerThread", add_call_item_to_queue)  # after the block: shown
    print("hook restored:", threading.excepthook is threading.__excepthook__)
    """
)


def test_only_lokys_manager_thread_race_is_dropped_and_only_inside_the_block() -> None:
    done = _python(RACE_SCRIPT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hook restored: True"
    shown = done.stderr.split("Exception in thread ")[1:]
    assert len(shown) == 3, done.stderr
    assert shown[0].startswith("ExecutorManagerThread") and "other_failure" in shown[0]
    assert shown[1].startswith("SomeOtherThread") and "KeyError: 1" in shown[1]
    assert shown[2].startswith("ExecutorManagerThread") and "KeyError: 1" in shown[2]
