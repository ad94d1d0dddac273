"""The optional ray backend gives the same outcomes as loky (needs `pip install evalkit[ray]`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.runner import RunConfig, run
from tests.conftest import TINY

ray = pytest.importorskip("ray", reason="ray is an optional extra: pip install 'evalkit[ray]'")


def test_ray_parity(runs_dir: Path) -> None:
    loky = run(TINY, RunConfig(runs_dir=runs_dir, trials=3, progress=False, use_cache=False))
    rayed = run(TINY, RunConfig(runs_dir=runs_dir, trials=3, progress=False, use_cache=False,
                                backend="ray", concurrency=2))
    cols = ["item_key", "passed", "score", "status"]
    pd.testing.assert_frame_equal(
        evalkit.read_run(loky.run_dir)[cols].reset_index(drop=True),
        evalkit.read_run(rayed.run_dir)[cols].reset_index(drop=True),
    )
