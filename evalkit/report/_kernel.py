"""The report's kernel, started before papermill is imported.

:func:`start_kernel` starts the kernel before the notebook is read and its parameters checked:
the kernel process boots, and imports the modules the notebook's cells will import
(:func:`~evalkit.report._notebooks.warm_imports`), while the calling process imports papermill
and jupytext (:mod:`evalkit.report._engine`, which runs the cells on it). This module imports
neither, so the kernel's start does not wait for them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The kernel's options: IPC sockets (no TCP port opened, no "unencrypted TCP" warning).
KERNEL_CONFIG: dict[str, Any] = {"KernelManager": {"transport": "ipc"}}
#: The kernel's own log (e.g. a KeyboardInterrupt at shutdown) is not the report's.
KERNEL_ARGUMENTS: tuple[str, ...] = ("--IPKernelApp.log_level=CRITICAL",)
#: What the kernel's environment adds to the caller's. ``PYTHONSAFEPATH`` keeps the working
#: directory (the page's folder, which may be a shared run directory) off ``sys.path``: without
#: it ``python -m ipykernel_launcher`` and IPython's own start put that folder first, so a
#: ``pandas.py`` or ``evalkit.py`` left there would run in place of the real module.
KERNEL_ENVIRONMENT: dict[str, str] = {"PYTHONSAFEPATH": "1"}


def start_kernel(cwd: Path, *, warm: Sequence[str] = ()) -> Any:
    """Start a report kernel now; it boots (and imports ``warm``) while the caller goes on.

    Args:
        cwd: The kernel's working directory (the executed notebook's folder).
        warm: Modules the kernel imports as it starts (entries of
            :func:`~evalkit.report._notebooks.imported_modules`).

    Returns:
        The ``AsyncKernelManager`` holding the started kernel, for ``execute(kernel=...)``.
    """
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync
    from traitlets.config import Config

    arguments = list(KERNEL_ARGUMENTS)
    if warm:
        arguments.append(
            "--IPKernelApp.exec_lines="
            "from evalkit.report._notebooks import warm_imports as _evalkit_warm; "
            f"_evalkit_warm({tuple(warm)!r}); del _evalkit_warm"
        )
    manager = AsyncKernelManager(kernel_name="python3", config=Config(KERNEL_CONFIG))
    run_sync(manager.start_kernel)(
        extra_arguments=arguments, cwd=str(cwd), env=os.environ | KERNEL_ENVIRONMENT
    )
    return manager


def stop_kernel(manager: Any) -> None:
    """Stop a kernel of :func:`start_kernel` that still runs (the cells never reached it).

    Args:
        manager: Its kernel manager.
    """
    from jupyter_core.utils import run_sync

    if manager.has_kernel:  # nbclient shut down (and cleaned up after) a kernel that ran cells
        run_sync(manager.shutdown_kernel)(now=True)  # its connection and IPC files removed too
