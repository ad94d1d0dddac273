"""A Ctrl-C while the workers start is held back and raised once they are up, never inside."""

from __future__ import annotations

import os
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


def _python(script: str | Path) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (source, or a file) in a fresh interpreter with SIGINT at its default.

    A file is run with this tree on PYTHONPATH (its own folder, not the working directory,
    comes first on its path).
    """
    source = [str(script)] if isinstance(script, Path) else ["-c", script]
    argv = [sys.executable, *source]
    return subprocess.run(
        with_default_sigint(argv),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
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


# loky's own race, made certain: an item is submitted and the pool shut down with its workers
# killed before the manager thread has run again (its wake-up for the submission is held back,
# as when the main thread keeps the GIL), as when joblib dispatches the next item just before a
# run stops on a full disk.
REAL_RACE_SCRIPT = textwrap.dedent(
    """
    import contextlib, sys, time
    from joblib.externals.loky import ProcessPoolExecutor
    from evalkit.runner._backends import manager_thread_race_ignored

    def item(x):
        time.sleep(0.5)
        return x

    def race(hooked):
        pool = ProcessPoolExecutor(max_workers=2)
        running = [pool.submit(item, k) for k in range(2)]
        time.sleep(0.3)  # both workers busy
        manager = pool._executor_manager_thread
        wakeup = pool._executor_manager_thread_wakeup
        with manager_thread_race_ignored() if hooked else contextlib.nullcontext():
            wakeup.wakeup, held_back = (lambda: None), wakeup.wakeup
            running.append(pool.submit(item, 9))
            wakeup.wakeup = held_back
            pool.shutdown(wait=True, kill_workers=True)
        print("hooked" if hooked else "unhooked", "queues closed:",
              manager.result_queue._reader.closed, flush=True)

    if __name__ == "__main__":
        race(hooked=False)
        print("---", file=sys.stderr, flush=True)
        race(hooked=True)
    """
)


def test_lokys_real_race_is_dropped_and_the_pool_is_still_cleaned_up(tmp_path: Path) -> None:
    script = tmp_path / "race.py"  # loky's workers import the item function from a file
    script.write_text(REAL_RACE_SCRIPT)
    done = _python(script)
    assert done.returncode == 0, done.stderr
    unhooked, hooked = done.stderr.split("---\n")
    assert "KeyError" in unhooked and "add_call_item_to_queue" in unhooked, (
        "the race did not happen, so the test shows nothing"
    )
    assert "Traceback" not in hooked and "Exception in thread" not in hooked, hooked
    assert done.stdout.splitlines() == [
        "unhooked queues closed: False",  # the thread died before its last step
        "hooked queues closed: True",  # the hook took that step
    ]
