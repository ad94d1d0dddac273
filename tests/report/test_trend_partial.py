"""The trend includes a run that did not finish, marked partial, instead of skipping it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import evalkit.analysis as analysis
import evalkit.report as rk
from evalkit.results import load_manifest
from tests.conftest import ROOT, TINY
from tests.report.conftest import RUNS


def _killed_run(runs_dir: Path, run_id: str) -> Path:
    """A real run, SIGKILLed once it has flushed a results part: what a crash leaves."""
    argv = [
        sys.executable, "-m", "evalkit", "run", str(TINY), "--runs-dir", str(runs_dir),
        "--run-id", run_id, "--trials", "12", "--no-progress", "--no-cache", "--concurrency",
        "2", "--backend", "threading", "--provider-opt", "latency_s=0.05", "--lane", "prompt",
    ]
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
    )
    parts = runs_dir / run_id / "parts"
    deadline = time.monotonic() + 240
    try:
        while not list(parts.glob("results-*.parquet")):
            assert proc.poll() is None, "the run ended before it flushed a part"
            assert time.monotonic() < deadline, "no results part was flushed"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return runs_dir / run_id


def test_trend_marks_a_killed_run_partial_and_keeps_its_items(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    shutil.copytree(RUNS, runs_dir)
    run_dir = _killed_run(runs_dir, "crashed")
    manifest = load_manifest(run_dir)
    assert manifest is not None and manifest.status == "partial"
    assert not (run_dir / "results.parquet").exists()
    flushed = sum(pq.read_metadata(p).num_rows for p in (run_dir / "parts").glob("results-*"))
    assert flushed > 0

    history = analysis.trend(runs_dir, period="run", n_resamples=200)

    runs = history.runs.set_index("run_dir")
    assert runs.loc["crashed", "status"] == "partial"
    assert runs.loc["crashed", "items"] == flushed
    assert set(runs.drop(index="crashed")["status"]) == {"complete"}
    assert history.partial == ["crashed"]
    header = rk.describe_trend(history)
    assert header["partial runs (included as far as they got)"] == "crashed"
    # its items count in the pass rates of its own period
    period = runs.loc["crashed", "period"]
    pooled = history.overall[history.overall["period"] == period]
    assert pooled["n"].sum() == flushed


def test_a_resumed_items_last_row_wins(tmp_path: Path) -> None:
    """A part written again for the same item (a redone error row) counts once."""
    runs_dir = tmp_path / "runs"
    run_dir = _killed_run(runs_dir, "crashed")
    parts = sorted((run_dir / "parts").glob("results-*.parquet"))
    table = pq.read_table(parts[0])
    pq.write_table(table, run_dir / "parts" / "results-99999.parquet")
    items = analysis.load_items(runs_dir)
    assert len(items) == sum(pq.read_metadata(p).num_rows for p in parts)
    assert not items["item_key"].duplicated().any()


@pytest.mark.slow
def test_the_trend_report_page_marks_the_partial_run(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    shutil.copytree(RUNS, runs_dir)
    _killed_run(runs_dir, "crashed")
    result = rk.report(
        runs_dir, kind="trend", output=tmp_path / "trend.html", parameters={"n_resamples": 200}
    )
    html = result.html_path.read_text(encoding="utf-8")
    assert "Partial runs (interrupted, crashed or still running) are included" in html
    assert "<td>crashed</td>" in html and "<td>partial</td>" in html
