"""The report notebooks: where they live, how they are read, how their paths resolve.

Each notebook in ``notebooks/`` is a jupytext percent-format ``.py`` file (``# %%`` cells, the
papermill parameters in the cell marked ``# %% tags=["parameters"]``): plain Python that ruff
and mypy check, opened as a notebook by JupyterLab when jupytext is installed, and read here
into the ``NotebookNode`` that papermill executes.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
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


def imported_modules(path: str | os.PathLike[str]) -> tuple[str, ...]:
    r"""What a percent-format notebook imports: ``module`` or ``module:name,name`` per statement.

    Read from the source as Python (markdown cells are comments there) without jupytext, so
    the list is known before the notebook is read. An ``.ipynb``, a missing file or a file that
    does not parse gives nothing.

    Args:
        path: The notebook's ``.py`` source.

    Returns:
        Absolute imports in source order, each once; a ``from`` import with its names.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     source = Path(folder, "nb.py")
        ...     _ = source.write_text("# %%\nimport pandas as pd\nfrom evalkit import a, b\n")
        ...     imported_modules(source)
        ('pandas', 'evalkit:a,b')
    """
    source = Path(path)
    if source.suffix != ".py":
        return ()
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return ()
    found: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = ",".join(alias.name for alias in node.names if alias.name != "*")
            found[f"{node.module}:{names}" if names else node.module] = None
    return tuple(found)


def warm_imports(modules: Iterable[str]) -> None:
    """Import modules ahead of the cells that import them, binding no name.

    ``evalkit report`` runs this in the report's kernel while the kernel starts (its
    ``exec_lines``), so the imports of the notebook's cells find their modules loaded; a
    module that fails to import here is skipped, and the cell's own import then says why.

    Args:
        modules: Entries of :func:`imported_modules` (``module`` or ``module:name,name``).
    """
    for entry in modules:
        module, _, names = entry.partition(":")
        try:
            __import__(module, fromlist=[name for name in names.split(",") if name])
        except Exception:  # noqa: BLE001,S112 - the cell's own import reports it
            continue
