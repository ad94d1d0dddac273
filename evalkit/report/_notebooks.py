"""The report notebooks: where they live, how they are read, how their paths resolve.

Each notebook in ``notebooks/`` is a jupytext percent-format ``.py`` file (``# %%`` cells, the
papermill parameters in the cell marked ``# %% tags=["parameters"]``): plain Python that ruff
and mypy check, opened as a notebook by JupyterLab when jupytext is installed, and read here
into the ``NotebookNode`` that papermill executes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evalkit._resources import resource_dir
from evalkit.errors import ConfigError


def read_notebook(path: str | os.PathLike[str]) -> Any:
    """Read a notebook (percent-format ``.py`` or ``.ipynb``) into an nbformat ``NotebookNode``.

    Cells get stable ids (``<stem>-<index>``), so an executed notebook names its cells the same
    way on every run and a failing cell can be traced back to the source.

    Args:
        path: The notebook file.

    Returns:
        The notebook (nbformat 4), without outputs for a ``.py`` source.

    Raises:
        ConfigError: The file does not exist.
    """
    import jupytext

    source = Path(path)
    if not source.is_file():
        raise ConfigError(f"notebook '{source}' does not exist.")
    nb = jupytext.read(source)
    stem = "".join(c if c.isalnum() else "-" for c in source.stem)[:56]
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"{stem}-{index:02d}"
    return nb


def project_path(path: str) -> str:
    """A path written from the project root, usable from any working directory.

    Jupyter runs a notebook in the notebook's own folder (``notebooks/``), papermill in the
    folder it is given, the command line wherever it is typed. The notebooks write their
    default paths as on the command line at the root of the source checkout (the folder
    holding ``notebooks/``, ``cases/`` and ``runs/``), e.g. ``tests/fixtures/runs/after``: a
    relative path that exists there is returned absolute. Anything else comes back unchanged:
    an absolute path, a run id (looked up under ``runs_dir``), a path that exists only relative
    to the working directory, an empty string.

    Args:
        path: A path or run id, as given.

    Returns:
        The absolute path under the project root, or ``path`` unchanged.

    Examples:
        >>> Path(project_path("cases/demo")).is_absolute()
        True
        >>> project_path("no-such-run-id"), project_path("")
        ('no-such-run-id', '')
    """
    if not path or Path(path).is_absolute():
        return path
    try:
        candidate = resource_dir("notebooks").parent / path
    except ConfigError:
        return path
    return str(candidate.resolve()) if candidate.exists() else path
