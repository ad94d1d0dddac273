"""evalkit optimize from the command line: JSON, a real external optimizer, kill and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, evalkit_cli, evalkit_process
from tests.optimize.probes import write_monotone_suite

SLOW_MARKER = "command:sleep 0.4; echo '[X]' >> SKILL.md"


def _optimize_args(suite: Path, runs: Path, *extra: str) -> list[str]:
    return ["optimize", str(suite), "--skill", "probe", "--optimizer", SLOW_MARKER, "--trials",
            "1", "--max-iterations", "6", "--stall", "9", "--backend", "threading", "--runs-dir",
            str(runs), "--run-id", "k", "--json", *extra]


@pytest.mark.slow
def test_killed_optimisation_resumes_without_duplicates(tmp_path: Path) -> None:
    suite = write_monotone_suite(tmp_path / "suite")
    runs = tmp_path / "runs"
    # the run killed with SIGKILL is a real child (its own session: killpg takes the optimizer's
    # shell too); evalkit_process waits for its child's end, so this one is a Popen
    argv = [sys.executable, "-m", "evalkit", *_optimize_args(suite, runs)]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    events = runs / "k" / "events.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if events.exists() and events.read_text().count('"decision"') >= 2:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    state = json.loads((runs / "k" / "optimize.json").read_text())
    assert state["status"] == "running" and 2 <= state["iterations"] < 6
    resumed = evalkit_cli(*_optimize_args(suite, runs, "--resume"))
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["status"] == "complete" and summary["iterations"] == 6
    assert summary["accepted"] == [f"cand-{i:04d}" for i in range(1, 7)]
    assert summary["validation"] == 1.0
    assert summary["test"]["delta"] == 1.0  # 6 markers unlock all 60 test cases; seed none
    state = json.loads((runs / "k" / "optimize.json").read_text())
    ids = [h["candidate"] for h in state["history"]]
    assert ids == sorted(set(ids)), "no candidate banked twice"
    kinds = [json.loads(line)["event"] for line in events.read_text().splitlines()]
    assert kinds.count("unseal") == 1


def test_cli_bad_input_and_tamper_exit_codes(tmp_path: Path) -> None:
    suite = write_monotone_suite(tmp_path / "suite")
    base = ["optimize", str(suite), "--runs-dir", str(tmp_path / "runs"), "--backend",
            "threading", "--trials", "1"]
    bad = evalkit_cli(*base, "--skill", "nope", "--optimizer", "python:x:y", cwd=ROOT)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "cannot import 'x:y'" in bad.stderr
    cases = suite / "cases" / "cases.yaml"
    tamper = evalkit_process(
        *base, "--skill", "probe", "--optimizer",
        f"command:echo '[X]' >> SKILL.md; sed -i s/PASS/P/ {cases}", "--max-iterations", "2",
        "--no-sandbox",  # the sandbox keeps the cases out of reach; the guard is tested here
        cwd=ROOT, timeout=120,
    )
    assert tamper.returncode == 1
    assert "honesty violation" in tamper.stderr and "cases.yaml" in tamper.stderr


def test_a_run_that_accepts_nothing_says_so_instead_of_printing_nan(tmp_path: Path) -> None:
    """The seed stays champion: its sealed test compares it with itself (no difference)."""
    suite = write_monotone_suite(tmp_path / "suite", n_val=8, n_dev=8, n_test=8)
    done = evalkit_cli(
        "optimize", suite, "--skill", "probe", "--optimizer", "command:true", "--trials", "1",
        "--max-iterations", "1", "--backend", "threading", "--runs-dir", tmp_path / "runs",
    )
    assert done.returncode == 0, done.stderr
    assert "champion seed" in done.stdout
    assert "nan" not in done.stdout
    assert "delta n/a pp [n/a, n/a]" in done.stdout
    assert "the champion is the seed (no candidate was accepted)" in done.stdout


def test_a_run_whose_every_proposal_failed_says_why_and_exits_1(tmp_path: Path) -> None:
    """An optimizer that fails every time (here: exits 1) evaluates nothing: said, exit 1."""
    suite = write_monotone_suite(tmp_path / "suite", n_val=8, n_dev=8, n_test=8)
    done = evalkit_cli(
        "optimize", suite, "--skill", "probe", "--optimizer", "command:false", "--trials", "1",
        "--max-iterations", "2", "--backend", "threading", "--runs-dir", tmp_path / "runs",
        "--run-id", "failing",
    )
    assert done.returncode == 1, done.stderr
    assert "every proposal failed, so no candidate was evaluated" in done.stderr
    assert "(2 of 2)" in done.stderr and "events.jsonl" in done.stderr
    assert "Traceback" not in done.stderr
