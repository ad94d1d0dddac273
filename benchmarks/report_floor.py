"""The kernel floor of a report page: one process that executes a notebook importing evalkit.

Usage: python benchmarks/report_floor.py

What ``evalkit report`` cannot go under: start Python, import papermill, start a kernel (the
transport evalkit.report uses) and import in it what every report notebook imports. Timed as a
whole process beside ``evalkit report`` (BENCHMARKS.md, "Report pages of the demo"), e.g.
``/usr/bin/time -v python benchmarks/report_floor.py`` against
``/usr/bin/time -v evalkit report RUN``, alternating the two.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat
import papermill
from traitlets.config import Config

FLOOR_CELL = "import evalkit\nimport evalkit.report as rk\nfrom evalkit.stats import pass_rates"


def main() -> None:
    """Execute the one-cell notebook in a fresh kernel."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.cells = [nbformat.v4.new_code_cell(FLOOR_CELL)]
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "floor.ipynb"
        nbformat.write(notebook, source)
        papermill.execute_notebook(
            str(source),
            str(Path(tmp) / "floor.out.ipynb"),
            kernel_name="python3",
            progress_bar=False,
            config=Config({"KernelManager": {"transport": "ipc"}}),  # as evalkit.report does
        )


if __name__ == "__main__":
    main()
