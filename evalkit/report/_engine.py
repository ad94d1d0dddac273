"""The papermill engine of ``evalkit report``: nbclient's, writing the executed notebook less often.

papermill's notebook manager writes the whole executed notebook before and after every cell
(two writes a cell, each serialising every output so far): on a report of about forty cells
and a megabyte of outputs that is ~70 writes, made between cells while the kernel waits. This
engine keeps a write at most every :data:`SAVE_EVERY_S` seconds while the cells run, and the
manager's own final write whatever ends the execution (the last cell, a failing cell, a
timeout, a dead kernel), so a failure still leaves the notebook with what ran.

Given a kernel started ahead (:mod:`evalkit.report._kernel`), the engine runs the cells on it
(``km=``) and shuts it down when they end, as it does a kernel it started itself.
"""

from __future__ import annotations

import time
from typing import Any

from papermill.clientwrap import PapermillNotebookClient
from papermill.engines import NBClientEngine, papermill_engines
from papermill.log import logger
from papermill.utils import merge_kwargs, remove_args

#: Name the engine is registered under with papermill.
ENGINE_NAME = "evalkit"
#: Seconds between two writes of the executed notebook while its cells run.
SAVE_EVERY_S = 5.0


class ReportEngine(NBClientEngine):  # type: ignore[misc]
    """nbclient's engine with the notebook written at most every :data:`SAVE_EVERY_S` seconds."""

    @classmethod
    def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, **kwargs: Any) -> Any:
        """Execute the cells with the manager's writes spaced out; its final write is kept.

        Args:
            nb_man: papermill's ``NotebookExecutionManager``.
            kernel_name: The kernel to start.
            **kwargs: papermill's engine options.

        Returns:
            What nbclient's engine returns.
        """
        save = nb_man.save
        last = time.monotonic()

        def spaced(**save_kwargs: Any) -> None:
            nonlocal last
            if time.monotonic() - last >= SAVE_EVERY_S:
                save(**save_kwargs)
                last = time.monotonic()

        nb_man.save = spaced
        try:
            if kwargs.get("km") is None:
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
            return _execute_on(nb_man, kernel_name, **kwargs)
        finally:
            # papermill's Engine.execute_notebook writes through ``save`` once this returns
            # or raises (``notebook_complete``): that write goes through unspaced.
            nb_man.save = save


def register() -> str:
    """Register the engine with papermill (once is enough; again is harmless).

    Returns:
        The engine's name, for ``papermill.execute_notebook(engine_name=...)``.
    """
    papermill_engines.register(ENGINE_NAME, ReportEngine)
    return ENGINE_NAME


def _execute_on(
    nb_man: Any,
    kernel_name: str,
    *,
    log_output: bool = False,
    stdout_file: Any = None,
    stderr_file: Any = None,
    start_timeout: int = 60,
    execution_timeout: float | None = None,
    **kwargs: Any,
) -> Any:
    """What papermill's ``NBClientEngine.execute_managed_notebook`` does, on a started kernel.

    nbclient leaves a kernel it was given running; ``cleanup_kc`` has it shut down (``now``
    under ``shutdown_kernel="immediate"``) and its channels closed as for its own kernel.
    """
    kwargs = remove_args(["input_path"], **kwargs)
    final_kwargs = merge_kwargs(
        remove_args(["timeout", "startup_timeout"], **kwargs),
        timeout=execution_timeout if execution_timeout else kwargs.get("timeout"),
        startup_timeout=start_timeout,
        kernel_name=kernel_name,
        log=logger,
        log_output=log_output,
        stdout_file=stdout_file,
        stderr_file=stderr_file,
    )
    return PapermillNotebookClient(nb_man, **final_kwargs).execute(cleanup_kc=True)
