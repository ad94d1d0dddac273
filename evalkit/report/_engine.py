"""The papermill engine of ``evalkit report``: nbclient's, writing the executed notebook less often.

papermill's notebook manager writes the whole executed notebook before and after every cell
(two writes a cell, each serialising every output so far): on a report of about forty cells
and a megabyte of outputs that is ~70 writes, made between cells while the kernel waits. This
engine keeps a write at most every :data:`SAVE_EVERY_S` seconds while the cells run, and the
manager's own final write whatever ends the execution (the last cell, a failing cell, a
timeout, a dead kernel), so a failure still leaves the notebook with what ran.
"""

from __future__ import annotations

import time
from typing import Any

from papermill.engines import NBClientEngine, papermill_engines

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
            return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
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
