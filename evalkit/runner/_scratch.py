"""Per-run scratch directories, named after their owner so a later run can sweep stale ones.

Each run keeps its item workspaces under ``$TMPDIR/evalkit-run-<pid>-<run id>-<random>``.
A run removes its directory when it ends; a run killed with SIGKILL cannot, so every start or
resume first removes the directories whose owner process is gone.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from evalkit._workspace_paths import SCRATCH_PREFIX

PREFIX = SCRATCH_PREFIX
_OWNER = re.compile(re.escape(PREFIX) + r"(\d+)-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def sweep_stale_scratch(root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the scratch directories of runs whose process no longer exists.

    Args:
        root: Where scratch directories live (default: the temporary directory).

    Returns:
        The directories removed.
    """
    base = Path(root) if root is not None else Path(tempfile.gettempdir())
    removed = []
    for path in base.glob(f"{PREFIX}*"):
        match = _OWNER.match(path.name)
        if match is None or not path.is_dir() or path.is_symlink():
            continue
        pid = int(match.group(1))
        if pid != os.getpid() and not _alive(pid):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def make_scratch(run_id: str) -> Path:
    """Sweep stale scratch directories, then create this run's.

    Args:
        run_id: The run (part of the directory name, for people reading ``/tmp``).

    Returns:
        The new directory (the caller removes it when the run ends).
    """
    sweep_stale_scratch()
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-{run_id}-"))
