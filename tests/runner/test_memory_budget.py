"""A large prompt-lane run stays within its memory budget: 1 GB at 100,000 items, scaled.

The run is the demo suite's prompt lane (28 cases x 4 conditions x many trials) with its
simulated judge: judging rewrites the run's tables at the end, which is where a run's memory
grew (every result and score row turned into a Python dict).

Peak RSS is steady enough to test (time is not): the run is a child process started by a
small wrapper that reports ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` once the child is gone,
the largest resident set of the run's processes (the runner and its loky workers), as
``/usr/bin/time -v`` does. The budget is affine in the number of items: the fixed cost (the
interpreter, the imported stack, the workers) is measured by a 224-item run of the same suite,
and the rest of the 1 GB at 100,000 items is scaled to the items run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DEMO, ROOT

pytestmark = pytest.mark.serial  # a memory measurement: not beside other tests' processes

BUDGET_AT_100K_MB = 1024
DEMO_PROMPT_ITEMS_PER_TRIAL = 28 * 4  # prompt-lane cases x conditions

_PEAK = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)"
)


def _peak_mb(tmp_path: Path, trials: int) -> tuple[int, float]:
    """Items run and peak RSS (MB) of ``evalkit run cases/demo --lane prompt``, concurrency 2."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, sys.executable, "-m", "evalkit", "run", str(DEMO),
         "--lane", "prompt", "--trials", str(trials), "--concurrency", "2", "--no-cache",
         "--no-progress", "--runs-dir", str(tmp_path / "runs"), "--run-id", f"mem-{trials}"],
        capture_output=True, text=True, cwd=ROOT, timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    items = DEMO_PROMPT_ITEMS_PER_TRIAL * trials
    assert f"{items} items, {items} ok" in done.stdout
    assert "expectations passed" in done.stdout  # the judge ran
    return items, int(done.stdout.strip().splitlines()[-1]) / 1024  # ru_maxrss: KiB on Linux


@pytest.mark.slow
def test_a_20000_item_run_peaks_under_its_share_of_1_gb_at_100000(tmp_path: Path) -> None:
    _, fixed = _peak_mb(tmp_path, 2)
    items, peak = _peak_mb(tmp_path, 179)
    assert items >= 20_000
    budget = fixed + (BUDGET_AT_100K_MB - fixed) * items / 100_000
    assert peak <= budget, f"peak {peak:.0f} MB > budget {budget:.0f} MB (fixed {fixed:.0f} MB)"
