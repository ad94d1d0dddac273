"""A module left in a report's folder never runs in the report's kernel.

The kernel works in the folder the page is written to, and a reviewer may well write the page
into a colleague's run directory (``evalkit report RUN -o runs/RUN/report.html``). Python puts
the working directory first on ``sys.path`` for ``python -m ipykernel_launcher``, and IPython
adds it again, so a ``pandas.py`` or ``evalkit.py`` planted there would be imported in place of
the real module: the kernel starts with ``PYTHONSAFEPATH`` set, which keeps it off the path.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit.report import report
from tests.report.conftest import AFTER

#: Modules the kernel imports on its way to the first cell and in it: the launcher itself,
#: what the report notebook imports, and what IPython imports as it starts.
PLANTED = ("ipykernel_launcher", "evalkit", "pandas", "matplotlib", "IPython", "jedi")


@pytest.mark.slow
def test_modules_planted_in_the_pages_folder_do_not_run(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "colleague"
    shutil.copytree(AFTER, run)
    markers = tmp_path / "ran"
    markers.mkdir()
    for name in PLANTED:
        (run / f"{name}.py").write_text(
            f"open({str(markers / name)!r}, 'w').write('planted')\n"
            "raise SystemExit('planted module')\n",
            encoding="utf-8",
        )
    page = run / "report.html"

    result = report(run, output=page)

    assert sorted(path.name for path in markers.iterdir()) == []
    assert result.html_path == page and page.stat().st_size > 10_000
    assert "planted module" not in page.read_text(encoding="utf-8")
