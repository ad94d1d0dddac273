"""The report's papermill engine: the executed notebook written every few seconds, not every cell,
and still left in place with what ran when a cell fails or the kernel dies."""

from __future__ import annotations

from pathlib import Path

import nbformat
import papermill.iorw
import pytest

from evalkit.errors import ReportError
from evalkit.report._render import execute


def _notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3", "language": "python"
    }
    cells = [nbformat.v4.new_code_cell("x = 1")]
    cells[0].metadata["tags"] = ["parameters"]
    nb.cells = cells + [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(nb, path)
    return path


def _outputs(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "".join(
        str(output.get("text", "")) for cell in nb.cells for output in cell.get("outputs", [])
    )


def test_twelve_quick_cells_write_the_notebook_at_start_and_end_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[str] = []
    write = papermill.iorw.papermill_io.write  # what every papermill write of a notebook calls

    def counted(buf: str, path: str, *args: object, **kwargs: object) -> object:
        writes.append(path)
        return write(buf, path, *args, **kwargs)

    monkeypatch.setattr(papermill.iorw.papermill_io, "write", counted)
    source = _notebook(tmp_path / "quick.ipynb", *[f"print('cell {i}')" for i in range(12)])
    executed = tmp_path / "quick.out.ipynb"
    execute(source, executed, {"x": 2}, timeout=60)
    # papermill's manager alone writes ~2 per cell (26 here) plus start, end and a last copy
    assert 2 <= len(writes) <= 4, writes
    assert all(cell in _outputs(executed) for cell in ("cell 0", "cell 11"))


def test_a_kernel_that_dies_leaves_the_notebook_with_the_cells_that_ran(tmp_path: Path) -> None:
    source = _notebook(
        tmp_path / "dies.ipynb", "print('before the end')", "import os\nos._exit(3)", "print(2)"
    )
    executed = tmp_path / "dies.out.ipynb"
    with pytest.raises(ReportError) as raised:
        execute(source, executed, {}, timeout=60)
    assert str(executed) in str(raised.value)
    assert "before the end" in _outputs(executed)


def test_a_failing_cell_leaves_the_notebook_with_its_traceback(tmp_path: Path) -> None:
    source = _notebook(tmp_path / "fails.ipynb", "print('ran first')", "1 / 0")
    executed = tmp_path / "fails.out.ipynb"
    with pytest.raises(ReportError, match="ZeroDivisionError"):
        execute(source, executed, {}, timeout=60)
    nb = nbformat.read(executed, as_version=4)
    assert "ran first" in _outputs(executed)
    assert any(
        output.get("ename") == "ZeroDivisionError"
        for cell in nb.cells
        for output in cell.get("outputs", [])
    )


def test_a_kernel_started_ahead_runs_the_cells_with_its_modules_imported_and_no_name_bound(
    tmp_path: Path,
) -> None:
    from evalkit.report._kernel import start_kernel

    source = _notebook(
        tmp_path / "warm.ipynb",
        "import sys\nprint('warm', 'wave' in sys.modules, 'wave' in dir(), 'Wave_read' in dir())",
    )
    executed = tmp_path / "warm.out.ipynb"
    kernel = start_kernel(tmp_path, warm=("wave:Wave_read", "no_such_module_anywhere"))
    execute(source, executed, {"x": 2}, timeout=60, kernel=kernel)
    # imported by the kernel as it started, yet no name of the notebook's namespace is taken;
    # a module that cannot be imported is skipped
    assert "warm True False False" in _outputs(executed)
    assert not kernel.has_kernel  # shut down when the cells ended, as papermill's own kernel


def test_a_refused_parameter_stops_the_kernel_started_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.errors import ConfigError
    from evalkit.report import _render

    started: list[object] = []
    start = _render._start_kernel

    def recorded(cwd: Path, notebook: Path) -> object:
        started.append(start(cwd, notebook))
        return started[-1]

    monkeypatch.setattr(_render, "_start_kernel", recorded)
    with pytest.raises(ConfigError, match="unknown notebook parameter"):
        _render.report(
            "tests/fixtures/runs/after", parameters={"bogus": 1}, output=tmp_path / "r.html"
        )
    assert len(started) == 1
    assert not started[0].has_kernel  # type: ignore[attr-defined]


@pytest.mark.parametrize("notebook", ["run_report.py", "compare.py"])
def test_the_kernels_warm_imports_leave_out_the_runner_and_the_suite_models(notebook: str) -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from evalkit._resources import resource_dir\n"
        "from evalkit.report._notebooks import imported_modules, warm_imports\n"
        "from evalkit.report._render import WARM_MODULES\n"
        f"warm_imports(imported_modules(resource_dir('notebooks') / {notebook!r}) + WARM_MODULES)\n"
        "print(sorted(m for m in ('evalkit.runner', 'evalkit.cases._models',\n"
        "    'evalkit.sequential._loop', 'evalkit.report._rich') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    # a report shows run results: the type of a sequential run is named without its loop
    assert done.stdout.strip() == "['evalkit.report._rich']", done.stderr
