"""A per-item workspace quota: a hostile item that fills its workspace is its own failure.

The attack: an agent writes three large files into its workspace (each under the 1 GiB
per-file limit) or fills the whole disk the workspaces live on. Before the quota, a full disk
stopped the run with exit 75 and ``--resume`` reran the same item, so such an agent kept a run
from ever finishing. Now the item is an error row of class ``workspace_quota`` and the run
completes; a disk filled by something else still stops the run with exit 75.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

import evalkit
from evalkit.runner import RunConfig, RunOutOfSpace, run
from tests.conftest import TINY, evalkit_cli
from tests.faults.test_disk_full import small_filesystem  # noqa: F401 - the real small disk

#: The hostile agent (tests/faults/hog_provider.py): three files of 3 MB by default.
HOG = "tests.faults.hog_provider:create"


def test_an_item_over_its_quota_is_an_error_row_and_the_run_finishes(tmp_path: Path) -> None:
    done = evalkit_cli(
        "run", TINY, "--provider", HOG, "--conditions", "none", "--trials", "2", "--no-progress",
        "--no-cache", "--runs-dir", tmp_path / "runs", "--run-id", "hog",
        "--workspace-quota", "4MiB",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = evalkit.read_run(tmp_path / "runs" / "hog")
    assert (rows.loc[rows["lane"] != "execution", "status"] == "ok").all()
    rows = rows[rows["lane"] == "execution"]
    assert len(rows) == 2
    assert (rows["status"] == "error").all() and (rows["error_class"] == "workspace_quota").all()
    assert rows["error_message"].str.contains("more than its quota of 4,194,304").all()
    # within a larger quota the same agent's items are ok: the quota, nothing else, failed them
    config = RunConfig(runs_dir=tmp_path / "runs", run_id="roomy", lanes=("execution",),
                       conditions=("none",), provider=HOG, trials=2, progress=False,
                       use_cache=False, workspace_quota_bytes=64 << 20)  # fmt: skip
    roomy = evalkit.read_run(run(TINY, config).run_dir)
    assert (roomy["status"] == "ok").all()


def test_a_bad_quota_is_refused() -> None:
    done = evalkit_cli("run", TINY, "--workspace-quota", "lots")
    assert done.returncode == 2 and "'lots' is not a size" in done.stderr


def test_an_item_filling_the_disk_is_its_own_failure_and_resume_finishes(
    small_filesystem: tuple[Path, Path, str],  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mount, filler, _ = small_filesystem
    filler.unlink()  # the hostile item alone fills the small disk (4 MiB, or 8 MiB ext4)
    monkeypatch.setattr(tempfile, "tempdir", str(mount))  # workspaces live on the small disk
    options = {"conditions": ("none",), "trials": 2, "seed": 7}
    options |= {"progress": False, "use_cache": False, "backend": "threading", "concurrency": 1}
    config = RunConfig(runs_dir=tmp_path / "runs", run_id="fill", workspace_quota_bytes=1 << 20,
                       provider=HOG, provider_options={"files": 0}, **options)  # type: ignore[arg-type]  # fmt: skip
    rows = evalkit.read_run(run(TINY, config).run_dir)
    rows = rows[rows["lane"] == "execution"]
    assert len(rows) == 2 and (rows["error_class"] == "workspace_quota").all()
    assert os.statvfs(mount).f_bavail > 0, "the workspace was removed after the item"

    # a disk filled by something else still stops the run, and resume then completes it
    with open(mount / "other", "wb") as handle:
        stats = os.statvfs(mount)
        os.posix_fallocate(handle.fileno(), 0, stats.f_bavail * stats.f_frsize)
    honest = RunConfig(runs_dir=tmp_path / "runs", run_id="honest", **options)  # type: ignore[arg-type]
    with pytest.raises(RunOutOfSpace):
        run(TINY, honest)
    (mount / "other").unlink()
    resumed = run(TINY, honest.model_copy(update={"resume": True}))
    assert (evalkit.read_run(resumed.run_dir)["status"] == "ok").all()
