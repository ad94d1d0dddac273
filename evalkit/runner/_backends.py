"""joblib backends: loky, threading, dask (distributed) and ray."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, TypeVar

from joblib import Parallel, delayed, parallel_config

from evalkit.errors import ConfigError
from evalkit.runner._workers import init_worker, sigint_blocked

T = TypeVar("T")
R = TypeVar("R")


def _dask_context(scheduler: str | None, concurrency: int) -> contextlib.ExitStack:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ConfigError(
            "--backend dask needs dask.distributed: pip install 'evalkit[dask]'"
        ) from None
    stack = contextlib.ExitStack()
    if scheduler:
        try:
            client = stack.enter_context(Client(scheduler, timeout="10s"))  # type: ignore[no-untyped-call]
        except OSError as exc:
            stack.close()
            raise ConfigError(
                f"--scheduler: cannot reach dask scheduler {scheduler}: {exc}"
            ) from None
    else:
        cluster = stack.enter_context(
            LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=concurrency,
                threads_per_worker=1,
                processes=True,
                # a free port: None does not turn the dashboard off (dask/distributed#8136), it
                # takes 8787 and warns when a second cluster finds it taken
                dashboard_address=":0",
                silence_logs=50,
            )
        )
        client = stack.enter_context(Client(cluster))  # type: ignore[no-untyped-call]
    del client
    stack.enter_context(parallel_config(backend="dask"))
    return stack


def _ray_context() -> contextlib.ExitStack:
    try:
        import ray
        from ray.util.joblib import register_ray
    except ImportError:
        raise ConfigError("--backend ray needs ray: pip install 'evalkit[ray]'") from None
    register_ray()
    stack = contextlib.ExitStack()
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
        stack.callback(ray.shutdown)
    stack.enter_context(parallel_config(backend="ray"))
    return stack


def parallel_map(
    func: Callable[[T], R],
    tasks: Iterable[T],
    *,
    backend: str,
    concurrency: int,
    scheduler: str | None = None,
) -> Generator[R, None, None]:
    """Run ``func`` over ``tasks`` on a joblib backend, yielding results as they finish.

    Closing the generator early cancels the tasks not started yet (joblib warns about
    cancelled tasks then; :func:`close_quietly` closes without that warning).

    Args:
        func: A picklable function of one task.
        tasks: The tasks (consumed lazily, a few ahead of the workers).
        backend: ``loky``, ``threading``, ``dask`` or ``ray``.
        concurrency: Workers (or threads) in use.
        scheduler: Dask scheduler address; a ``LocalCluster`` is started when None.

    Yields:
        Results in completion order (ray: in task order, since it refuses generators).
    """
    if concurrency == 1 and backend in ("loky", "threading"):
        for task in tasks:
            yield func(task)
        return
    starting: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    if backend in ("loky", "threading"):
        stack = contextlib.ExitStack()
        extra: dict[str, Any] = {}
        if backend == "loky":
            # workers exit with the runner and leave SIGINT to it (evalkit.runner._workers)
            extra["initializer"] = init_worker
            extra["initargs"] = (os.getpid(),)
            starting = sigint_blocked()
        if backend == "threading":
            # Threads mostly wait on agents; a shorter GIL switch interval lets a thread whose
            # wait ended run sooner instead of queueing behind one that is scoring (restored).
            previous = sys.getswitchinterval()
            sys.setswitchinterval(min(previous, 0.0005))
            stack.callback(sys.setswitchinterval, previous)
        parallel = Parallel(
            n_jobs=concurrency,
            backend=backend,
            return_as="generator_unordered",
            pre_dispatch="2*n_jobs",
            # I/O-bound items (agents, HTTP) must never be batched together behind one slot
            batch_size=1 if backend == "threading" else "auto",
            **extra,
        )
    elif backend == "dask":
        stack = _dask_context(scheduler, concurrency)
        parallel = Parallel(
            n_jobs=concurrency, return_as="generator_unordered", pre_dispatch="4*n_jobs"
        )
    elif backend == "ray":
        stack = _ray_context()
        parallel = Parallel(n_jobs=concurrency, return_as="list")
    else:
        raise ConfigError(
            f"The value for `backend` must be one of ['loky', 'threading', 'dask', 'ray'], "
            f"but '{backend}' was passed."
        )
    with stack:
        results: Any = None
        try:
            with starting:
                results = parallel(delayed(func)(task) for task in tasks)
        except BaseException:
            if results is not None:  # a Ctrl-C held back while the workers started
                close_quietly(results)
            raise
        yield from results


def close_quietly(results: Generator[Any, None, None]) -> None:
    """Close a :func:`parallel_map` generator, cancelling the tasks not started yet.

    Cancelling is the point (a run stopped on its first configuration error, by Ctrl-C or by a
    full disk), so joblib's warning that it dropped tasks (finished but not consumed, or still
    running) is silenced for this call only, and so is loky's shut-down race
    (:func:`manager_thread_race_ignored`). Closing a closed generator does nothing.
    """
    with warnings.catch_warnings(), manager_thread_race_ignored():
        warnings.filterwarnings("ignore", message=_DROPPED_TASKS, category=UserWarning)
        results.close()


#: The start of joblib's warning that a closed generator dropped tasks.
_DROPPED_TASKS = r"\d+ tasks (have been successfully executed|which were still being processed)"


#: Name of loky's thread that feeds the workers, and the function of it that can fail.
_MANAGER_THREAD, _RACY_FUNCTION = "ExecutorManagerThread", "add_call_item_to_queue"

#: The manager thread's method that closes the pool's queues before the thread ends.
_LAST_STEP = "join_executor_internals"


@contextlib.contextmanager
def manager_thread_race_ignored() -> Iterator[None]:
    """Drop the ``KeyError`` loky's manager thread can die with while the pool is shut down.

    Closing joblib's generator shuts loky's pool down with its workers killed: loky empties its
    table of pending work items while the id of an item submitted just before (the next one
    joblib dispatched) can still wait in its queue of work ids; the manager thread then looks
    it up and dies with a ``KeyError`` in ``add_call_item_to_queue``, printing a traceback
    (seen on a Ctrl-C while the workers start, and on a full disk). The pool is going away and
    those items never ran (a resumed run runs them), so exactly that exception from exactly
    that thread is dropped for the block, and the thread's last step, which the exception
    skipped, is taken in its place: ``join_executor_internals`` closes the pool's queues (left
    open, the resource tracker warns of leaked semaphores at exit). Any other exception goes
    to the previous :data:`threading.excepthook`.
    """
    previous = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        frames = traceback.extract_tb(args.exc_traceback) if args.exc_traceback else []
        if (
            args.exc_type is KeyError
            and args.thread is not None
            and args.thread.name == _MANAGER_THREAD
            and any(frame.name == _RACY_FUNCTION for frame in frames)
        ):
            finish = getattr(args.thread, _LAST_STEP, None)
            try:
                if finish is not None:
                    finish()
            except Exception:  # the clean-up failed: show what started it
                previous(args)
            return
        previous(args)

    threading.excepthook = hook
    try:
        yield
    finally:
        threading.excepthook = previous
