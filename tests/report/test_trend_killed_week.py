"""Four weekly runs with one killed part-way: partial, not a skill text change, not a point.

The runs are real runs of a copy of the demo suite (two skills, so a run killed part-way has
measured only some of each condition's skill texts). Their clock is injected
(``evalkit.runner._run_manifest.now``) so that they fall on four Mondays; the third is an
``evalkit run`` process started with that clock and SIGKILLed once it has flushed a results
part, which leaves what a crash leaves (a ``partial`` manifest, parts and no results file).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pyarrow.parquet as pq
import pytest

import evalkit.analysis as analysis
import evalkit.report as rk
from evalkit.results import load_manifest
from evalkit.runner import RunConfig, _run_manifest as runner_module, run
from tests.conftest import DEMO, ROOT

if TYPE_CHECKING:
    from playwright.sync_api import Browser

#: Four real runs and a killed one: about 7 s together, shared by the module's tests.
pytestmark = pytest.mark.slow

MONDAYS = [datetime(2026, 11, day, 6, 17, tzinfo=UTC) for day in (2, 9, 16, 23)]

#: Starts ``evalkit run`` with the runner's clock set to argv[1] (ISO), the rest its arguments.
_AT_CLOCK = (
    "import sys; from datetime import datetime; "
    "import evalkit.runner._run_manifest as m; "
    "when = datetime.fromisoformat(sys.argv.pop(1)); m.now = lambda: when; "
    "sys.argv[0] = 'evalkit'; from evalkit.cli import console_main; console_main()"
)


def _run_at(when: datetime, suite: Path, runs_dir: Path, run_id: str, **kw: object) -> Path:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner_module, "now", lambda: when)
        options: dict[str, object] = {"trials": 1, "backend": "threading", "concurrency": 2,
                                      "use_cache": False, **kw}
        config = RunConfig(runs_dir=runs_dir, run_id=run_id, progress=False, lanes=["prompt"],
                           **options)
        return run(suite, config).run_dir


def _killed_at(when: datetime, suite: Path, runs_dir: Path, run_id: str) -> Path:
    """A real ``evalkit run`` at ``when``, SIGKILLed once it has flushed a results part."""
    argv = [
        sys.executable, "-c", _AT_CLOCK, when.isoformat(), "run", str(suite), "--runs-dir",
        str(runs_dir), "--run-id", run_id, "--trials", "6", "--no-progress", "--no-cache",
        "--concurrency", "2", "--backend", "threading", "--provider-opt", "latency_s=0.05",
        "--lane", "prompt",
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


@pytest.fixture(scope="module")
def weeks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("weeks")
    suite, runs_dir = root / "demo", root / "runs"
    shutil.copytree(DEMO, suite)
    runs_dir.mkdir()
    _run_at(MONDAYS[0], suite, runs_dir, "w45")
    _run_at(MONDAYS[1], suite, runs_dir, "w46")
    killed = _killed_at(MONDAYS[2], suite, runs_dir, "w47-killed")
    # the fourth week runs one condition fewer: a smaller set of conditions, the same texts
    _run_at(MONDAYS[3], suite, runs_dir, "w48", conditions=("none", "self-load", "preloaded"))
    manifest = load_manifest(killed)
    assert manifest is not None and manifest.status == "partial"
    assert not (killed / "results.parquet").exists()
    return runs_dir


def test_the_killed_week_is_partial_and_no_skill_text_changed(weeks: Path) -> None:
    killed = weeks / "w47-killed"
    flushed = pq.read_table(next((killed / "parts").glob("results-*.parquet"))).to_pandas()
    everything = pq.read_table(weeks / "w45" / "results.parquet").to_pandas()
    # what makes the old comparison fail: the killed run measured only some of the texts
    per_condition = {c: set(p["skill_hash"].dropna()) for c, p in everything.groupby("condition")}
    killed_items = analysis.load_items(weeks).query("run_dir == 'w47-killed'")
    assert killed_items["case_id"].nunique() < everything["case_id"].nunique()
    assert any(set(p["skill_hash"].dropna()) < per_condition[c]
               for c, p in killed_items.groupby("condition")), "the kill left every text"
    assert len(flushed) > 0

    history = analysis.trend(weeks, period="week", n_resamples=100)

    runs = history.runs.set_index("run_dir")
    assert runs.loc["w47-killed", "status"] == "partial"
    assert set(runs.drop(index="w47-killed")["status"]) == {"complete"}
    assert not runs["skill_changed"].any(), runs[["skill_texts", "skill_changed"]]
    assert history.changes() == [] and history.split == []
    assert history.partial == ["w47-killed"]
    weeks_of = {name: pd.Timestamp(p).isocalendar().week for name, p in runs["period"].items()}
    assert weeks_of == {"w45": 45, "w46": 46, "w47-killed": 47, "w48": 48}
    header = rk.describe_trend(history)
    assert header["skill text changes"] is None
    assert header["periods split at a skill text change"] is None
    assert header["partial runs (included as far as they got)"] == "w47-killed"
    assert runs.loc["w48", "conditions"] == "none, preloaded, self-load"


def test_a_killed_run_in_the_week_of_a_complete_one_is_pooled_with_it(
    weeks: Path, tmp_path: Path
) -> None:
    """Same week, same texts: the killed run joins the week's point instead of starting one."""
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    shutil.copytree(weeks / "w46", runs_dir / "w46")
    shutil.copytree(weeks / "w47-killed", runs_dir / "w46-killed")
    manifest = runs_dir / "w46-killed" / "manifest.json"
    # the killed run started two days after w46, in the same week (its manifest's start)
    text = manifest.read_text().replace("2026-11-16T06:17:00", "2026-11-11T06:17:00")
    manifest.write_text(text)

    history = analysis.trend(runs_dir, period="week", n_resamples=100)

    runs = history.runs.set_index("run_dir")
    assert runs.loc["w46-killed", "run_start"] == pd.Timestamp("2026-11-11 06:17", tz="UTC")
    assert str(runs.loc["w46-killed", "period"]) == str(runs.loc["w46", "period"])
    assert history.split == [] and not runs["skill_changed"].any()
    assert history.overall["n"].sum() == runs["items"].sum()
    assert history.overall["period"].nunique() == 1


def test_an_edited_skill_after_the_killed_week_is_still_a_change(
    weeks: Path, tmp_path: Path
) -> None:
    """The comparison over shared cases still sees a real edit of a skill's text."""
    suite = tmp_path / "demo"
    shutil.copytree(DEMO, suite)
    runs_dir = tmp_path / "runs"
    shutil.copytree(weeks, runs_dir)
    skill = next((suite / "skills").glob("*/SKILL.md"))
    skill.write_text(skill.read_text() + "\nCheck the result before you report it.\n")
    _run_at(datetime(2026, 11, 30, 6, 17, tzinfo=UTC), suite, runs_dir, "w49-edited")

    history = analysis.trend(runs_dir, period="week", n_resamples=100)

    runs = history.runs.set_index("run_dir")
    assert list(runs.loc[runs["skill_changed"]].index) == ["w49-edited"]
    assert history.changes() == [pd.Timestamp("2026-11-30", tz="UTC")]


def test_the_report_marks_the_killed_week_and_its_runs_table_fits_in_chromium(
    chromium: Browser, weeks: Path, tmp_path: Path
) -> None:
    """Two skills per condition and a change of conditions: the longest cells the table has."""
    result = rk.report(weeks, kind="trend", output=tmp_path / "trend.html",
                       parameters={"n_resamples": 100})
    page = chromium.new_page(viewport={"width": 1300, "height": 900})
    try:
        page.goto(result.html_path.as_uri())
        rows = page.eval_on_selector_all(
            "#runs tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
        by_run = {row[0]: row for row in rows}
        assert by_run["w47-killed"][4:6] == ["partial", "same"]
        assert {row[5] for row in rows} == {"same"}
        fit = page.eval_on_selector("#runs", """t => ({table: t.getBoundingClientRect().width,
            box: t.parentElement.clientWidth, scroll: t.parentElement.scrollWidth})""")
        assert fit["table"] <= fit["box"] + 0.5 and fit["scroll"] <= fit["box"], fit
    finally:
        page.close()
