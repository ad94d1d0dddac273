"""The dask backend on a real distributed LocalCluster gives the same outcomes as loky."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import evalkit
from evalkit.runner import RunConfig, run
from tests.conftest import TINY


def test_dask_local_cluster_parity(runs_dir: Path) -> None:
    loky = run(TINY, RunConfig(runs_dir=runs_dir, trials=3, progress=False, use_cache=False))
    dask = run(
        TINY,
        RunConfig(
            runs_dir=runs_dir,
            trials=3,
            progress=False,
            use_cache=False,
            backend="dask",
            concurrency=2,
        ),
    )
    cols = ["item_key", "passed", "score", "status"]
    a = evalkit.read_run(loky.run_dir)[cols].reset_index(drop=True)
    b = evalkit.read_run(dask.run_dir)[cols].reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    assert dask.manifest["backend"] == "dask"


def test_dask_existing_scheduler_address(runs_dir: Path) -> None:
    from dask.distributed import LocalCluster

    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        result = run(
            TINY,
            RunConfig(
                runs_dir=runs_dir,
                trials=1,
                progress=False,
                use_cache=False,
                backend="dask",
                scheduler=cluster.scheduler_address,
            ),
        )
    assert result.items == 16 and result.errors == 0
