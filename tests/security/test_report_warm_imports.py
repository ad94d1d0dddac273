"""The modules a report's kernel imports as it starts come from evalkit's own notebook.

``evalkit report`` starts the kernel before it reads the notebook and has it import the
modules the notebook's cells import (``warm_imports`` as the kernel's ``exec_lines``). That list
must never be read from the run being reported on: a run directory is data, and a notebook or a
module planted in it must not choose what the kernel imports.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit._resources import resource_dir
from evalkit.report import _kernel, _render
from evalkit.report._notebooks import imported_modules
from tests.report.conftest import AFTER


class _Stopped(Exception):
    """Raised by the recording stand-in: the test needs no kernel."""


def test_a_hostile_run_directory_does_not_choose_the_kernels_warm_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "runs" / "hostile"
    shutil.copytree(AFTER, run)
    marker = tmp_path / "imported"
    planted = f"open({str(marker)!r}, 'w').write('planted')\n"
    (run / "planted_warm.py").write_text(planted, encoding="utf-8")
    (run / "notebooks").mkdir()
    (run / "notebooks" / "run_report.py").write_text(
        "# %%\nimport planted_warm\n", encoding="utf-8"
    )
    (run / "run_report.py").write_text("# %%\nimport planted_warm\n", encoding="utf-8")
    asked: list[tuple[Path, tuple[str, ...]]] = []

    def recorded(cwd: Path, *, warm: tuple[str, ...] = ()) -> object:
        asked.append((cwd, tuple(warm)))
        raise _Stopped

    monkeypatch.setattr(_kernel, "start_kernel", recorded)
    with pytest.raises(_Stopped):
        _render.report(run, output=run / "page.html")
    [(cwd, warm)] = asked
    own = imported_modules(resource_dir("notebooks") / "run_report.py")
    assert warm == own + _render.WARM_MODULES
    assert own and not any("planted" in entry for entry in warm)
    assert not marker.exists()
