"""``make test``'s ``--dist loadgroup`` keeps each ``xdist_group`` on one worker.

Tests that share a costly fixture (rendered reports, a Harbor venv, an installed wheel) carry
an ``xdist_group`` so that one worker builds it for all. Nothing fails when the grouping stops
working (a pytest upgrade broke it once): each worker silently builds the fixture again. This
runs a small suite of grouped tests under the same pytest and pytest-xdist, in a child.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GROUPED = '''
import os

import pytest

pytestmark = pytest.mark.xdist_group("shared")


@pytest.mark.parametrize("i", range(8))
def test_worker(i):
    with open(os.environ["WORKERS_FILE"], "a") as out:
        out.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
'''


@pytest.mark.slow
def test_a_group_runs_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(GROUPED, encoding="utf-8")
    workers = tmp_path / "workers.txt"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-q",
         "-p", "no:cacheprovider", "test_grouped.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "WORKERS_FILE": str(workers)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    seen = workers.read_text(encoding="utf-8").split()
    assert len(seen) == 8
    assert len(set(seen)) == 1, f"the group was split over workers {sorted(set(seen))}"
