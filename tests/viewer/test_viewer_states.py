"""The viewer tells a run's state, its rates per condition and its cache share, read in Chromium.

The runs are real: ``fresh`` and ``cached`` (the same suite again, every item served from the
cache), ``failed`` (every item errors: the simulated provider's ``error_rate=1``), ``killed``
(an ``evalkit run`` process SIGKILLed once it flushed a part) and ``live`` (an ``evalkit run``
process still running while the page is read, killed at the end).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest

from evalkit.viewer import ViewServer
from tests.conftest import ROOT, TINY, evalkit_cli

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

FIXTURE_RUNS = ROOT / "tests" / "fixtures" / "runs"


def _start(runs: Path, run_id: str, trials: int, latency: float) -> subprocess.Popen[bytes]:
    argv = [
        sys.executable, "-m", "evalkit", "run", str(TINY), "--runs-dir", str(runs), "--run-id",
        run_id, "--trials", str(trials), "--no-progress", "--no-cache", "--concurrency", "1",
        "--backend", "threading", "--provider-opt", f"latency_s={latency}", "--lane", "prompt",
    ]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def _wait_for_part(proc: subprocess.Popen[bytes], run_dir: Path) -> None:
    deadline = time.monotonic() + 240
    while not list((run_dir / "parts").glob("results-*.parquet")):
        assert proc.poll() is None, "the run ended before it flushed a part"
        assert time.monotonic() < deadline, "no results part was flushed"
        time.sleep(0.05)


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[Path]:
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    common = ("--runs-dir", str(runs_dir), "--trials", "2", "--no-progress", "--lane", "prompt")
    assert evalkit_cli("run", TINY, "--run-id", "fresh", *common).returncode == 0
    assert evalkit_cli("run", TINY, "--run-id", "cached", *common).returncode == 0
    failed = evalkit_cli("run", TINY, "--run-id", "failed", *common, "--no-cache",
                         "--provider-opt", "error_rate=1", "--retries", "0")
    assert failed.returncode != 0
    killed = _start(runs_dir, "killed", 12, 0.05)
    try:
        _wait_for_part(killed, runs_dir / "killed")
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
    live = _start(runs_dir, "live", 40, 0.2)
    try:
        _wait_for_part(live, runs_dir / "live")
        yield runs_dir
    finally:
        os.killpg(live.pid, signal.SIGKILL)
        live.wait()


def _open(chromium: Browser, server: ViewServer, path: str = "/") -> Page:
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"http://127.0.0.1:{server.port}{path}{'&' if '?' in path else '?'}"
              f"token={server.token}")
    return page


def _colour(page: Page, selector: str) -> str:
    return str(page.eval_on_selector(selector, "e => getComputedStyle(e).color"))


@pytest.mark.slow
def test_running_interrupted_failed_and_complete_are_told_apart(
    chromium: Browser, server: ViewServer, runs: Path, tmp_path: Path
) -> None:
    page = _open(chromium, server)
    try:
        page.wait_for_selector("tr[data-run='live'] .ek-view-status")
        states = {name: page.inner_text(f"tr[data-run='{name}'] .ek-view-status").split("\n")[0]
                  for name in ("live", "killed", "failed", "fresh")}
        assert states == {"live": "running", "killed": "interrupted", "failed": "failed",
                          "fresh": "complete"}
        colours = {name: _colour(page, f"tr[data-run='{name}'] .ek-view-status")
                   for name in states}
        assert len(set(colours.values())) == 4, colours  # each state in its own colour
        # only the interrupted run has a resume command; it is the allow-listed one
        assert page.locator("tr[data-resume-for]").count() == 1
        command = page.inner_text("tr[data-resume-for='killed'] code")
        assert command.startswith("evalkit run ") and command.endswith(
            "--resume --run-id killed")
        assert "--provider-opt" not in command and "--backend" not in command
        left_out = page.inner_text("tr[data-resume-for='killed']")
        assert "left out of the resume command: --backend, --provider-opt latency_s" in left_out
        page.screenshot(path=tmp_path / "index.png", full_page=True)
    finally:
        page.close()
    # the command shown finishes the run (pasted as a reader would)
    words = shlex.split(command)
    done = subprocess.run([sys.executable, "-m", *words[:1], *words[1:]], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert '"status": "complete"' in (runs / "killed" / "manifest.json").read_text()


@pytest.mark.slow
def test_the_index_gives_pass_rates_per_condition_and_the_cache_share(
    chromium: Browser, server: ViewServer, runs: Path
) -> None:
    page = _open(chromium, server)
    try:
        page.wait_for_selector("tr[data-run='cached'] .ek-view-rate")
        rows = pd.read_parquet(runs / "cached" / "results.parquet")
        expected = {
            f"{c} {100 * p.passed.mean():.1f} % ({int(p.passed.sum())}/{len(p)})"
            for c, p in rows.groupby("condition")
        }
        shown = set(page.locator("tr[data-run='cached'] .ek-view-rate").all_inner_texts())
        assert shown == expected and len(shown) == 4
        assert page.inner_text("tr[data-run='cached'] .ek-view-rates-cover") == (
            "over all 24 graded items")
        cached = page.inner_text("tr[data-run='cached'] .ek-view-cached")
        assert cached.split("\n") == ["24", "from fresh"]
        assert page.inner_text("tr[data-run='fresh'] .ek-view-cached") == "0"
        # a live run's rates cover the items finished so far, and say so
        cover = page.inner_text("tr[data-run='live'] .ek-view-rates-cover")
        assert re.fullmatch(r"over the \d+ items finished so far \(it moves until the run "
                            r"ends\)", cover), cover
        assert "pass rate by condition" in page.inner_text("thead")
    finally:
        page.close()
    page = _open(chromium, server, "/run/cached")
    try:
        facts = page.inner_text("dl")
        assert "24 of 24 items, produced by run fresh" in facts
        assert "none run here: every item came from the cache" in facts
    finally:
        page.close()


@pytest.mark.slow
def test_an_interrupted_runs_page_says_so_with_its_resume_command(
    chromium: Browser, server: ViewServer
) -> None:
    page = _open(chromium, server, "/run/killed")
    try:
        text = page.inner_text(".ek-view-state")
        assert text.startswith("interrupted: its process (pid ")
        assert "Resume it with: evalkit run " in text and "--resume --run-id killed" in text
        live = _open(chromium, server, "/run/live")
        assert live.inner_text(".ek-view-state").startswith("running: pid ")
        live.close()
    finally:
        page.close()


@pytest.fixture
def judged(tmp_path: Path) -> Iterator[ViewServer]:
    """Two runs graded by a judge nobody calibrated, and the committed before/after runs."""
    from tests.judge.test_calibration_gate import _run, _suite

    runs_dir = tmp_path / "judged"
    runs_dir.mkdir()
    suite = _suite(tmp_path)
    _run(suite, runs_dir, "base", 0.0, seed=1)
    _run(suite, runs_dir, "cand", 0.0, seed=2)
    for name in ("before", "after"):
        shutil.copytree(FIXTURE_RUNS / name, runs_dir / name)
    started = ViewServer(runs_dir).start()
    try:
        yield started
    finally:
        started.stop()


@pytest.mark.slow
def test_the_judges_warning_sits_outside_the_verdict_in_its_own_colour(
    chromium: Browser, judged: ViewServer
) -> None:
    page = _open(chromium, judged, "/compare?baseline=base&candidate=cand")
    try:
        warning = page.locator(".ek-verdict-basis")
        assert warning.count() == 1
        assert "judge uncalibrated: this verdict rests on judged expectations" in (
            warning.inner_text())
        assert page.locator(".ek-banner .ek-verdict-basis").count() == 0
        assert "judge uncalibrated" not in page.inner_text(".ek-banner")
        banner = page.eval_on_selector(".ek-banner", "e => getComputedStyle(e).backgroundColor")
        own = page.eval_on_selector(".ek-verdict-basis",
                                    "e => getComputedStyle(e).backgroundColor")
        assert banner != own
        below = page.evaluate("""() => {
            const b = document.querySelector('.ek-banner').getBoundingClientRect();
            const w = document.querySelector('.ek-verdict-basis').getBoundingClientRect();
            return w.top >= b.bottom;
        }""")
        assert below  # after the box, not over it
    finally:
        page.close()


@pytest.mark.slow
def test_moved_cases_leave_out_unmoved_rows_and_every_change_is_in_pp(
    chromium: Browser, judged: ViewServer
) -> None:
    import evalkit

    result = evalkit.compare(FIXTURE_RUNS / "before", FIXTURE_RUNS / "after", n_resamples=200)
    unmoved = int((result.cases["estimate"].abs() < 5e-5).sum())
    assert unmoved > 0  # the comparison has cases that did not move
    page = _open(chromium, judged, "/compare?baseline=before&candidate=after")
    try:
        table = page.locator("table#moved-most")
        caption = table.locator("caption").inner_text()
        moved = len(result.cases) - unmoved
        assert caption.startswith(
            f"Cases that moved most (10 of {moved} that moved; {unmoved} did not move)")
        changes = table.locator("tbody td:nth-child(4)").all_inner_texts()
        assert changes and not [c for c in changes if c.startswith(("+0.0 pp", "-0.0 pp"))]
        assert all(re.fullmatch(r"[+-]\d+\.\d pp \[[+-]\d+\.\d, [+-]\d+\.\d\]", c)
                   for c in changes), changes
        # the per-case table below gives each change and its interval in pp, as the rest
        heads = page.locator("#ek-view-cases thead th").all_inner_texts()
        column = next(i for i, head in enumerate(heads, 1) if head.startswith("change"))
        cells = page.locator(f"#ek-view-cases tbody td:nth-child({column})").all_inner_texts()
        assert len(cells) == len(result.cases)
        assert all(re.fullmatch(r"[+-]\d+\.\d pp \[[+-]\d+\.\d, [+-]\d+\.\d\]", c)
                   for c in cells), cells
        assert not re.search(r"[+-]0\.\d{3}\b", page.inner_text("main"))  # no fractions
    finally:
        page.close()


def _partial_run(runs: Path, name: str) -> Path:
    run_dir = runs / name
    shutil.copytree(FIXTURE_RUNS / "after", run_dir)
    manifest = run_dir / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"status": "complete"', '"status": "partial"'))
    assert '"status": "partial"' in manifest.read_text()
    return run_dir


def test_a_hostile_lock_names_no_running_process_and_never_blocks(tmp_path: Path) -> None:
    """A FIFO or a link in place of ``run.lock``, a lock naming a dead or a live process."""
    import json
    import socket

    from evalkit.viewer._index import RunIndex

    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    os.mkfifo(_partial_run(runs_dir, "fifo") / "run.lock")  # would block a plain open()
    outside = tmp_path / "outside.lock"  # names this live process, but through a link
    outside.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
    (_partial_run(runs_dir, "linked") / "run.lock").symlink_to(outside)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    (_partial_run(runs_dir, "dead") / "run.lock").write_text(
        json.dumps({"pid": int(dead.stdout), "host": socket.gethostname()}))
    (_partial_run(runs_dir, "alive") / "run.lock").write_text(
        json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
    began = time.monotonic()
    rows = {row.run_id: row for row in RunIndex(runs_dir).rows()}
    assert time.monotonic() - began < 30
    assert {name: rows[name].state for name in rows} == {
        "fifo": "interrupted", "linked": "interrupted", "dead": "interrupted",
        "alive": "running"}
    assert rows["dead"].state_note.startswith(f"its process (pid {int(dead.stdout)}) is gone")
    assert all(rows[n].resume.endswith(f"--resume --run-id {n}") for n in ("fifo", "dead"))
    assert rows["alive"].resume == ""
