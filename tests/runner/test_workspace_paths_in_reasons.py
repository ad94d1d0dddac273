"""Reasons name workspace files relative to the workspace, never the run's temporary path.

A real run of the demo suite (simulated agent) where the verifier reads a JSON file the agent
did not write: the scorer reports the file it could not read. Stored and shown, its reason
names ``flake_report.json``, not ``/tmp/evalkit-run-.../ws-.../flake_report.json``; and the
preloaded condition's trials say "preloaded" in ``evalkit explain``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit._workspace_paths import relative_to_workspace
from evalkit.results import item_reasons, read_scores
from tests.conftest import DEMO, evalkit_cli

CASE = "exec-flake-rate-report"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("paths") / "runs"
    done = evalkit_cli(
        "run", DEMO, "--case", CASE, "--conditions", "none,preloaded", "--trials", "3",
        "--runs-dir", runs, "--run-id", "paths", "--no-cache", "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    return runs / "paths"


@pytest.mark.slow
def test_stored_and_shown_reasons_name_the_file_relative_to_the_workspace(run: Path) -> None:
    scores = read_scores(run)
    details = scores["detail"].fillna("").astype(str)
    # the verifier could not read the report in some trial: it names the file it looked for
    unread = details[details.str.contains("No such file or directory")]
    assert len(unread), "the simulated agent wrote the report in every trial"
    assert unread.str.contains("No such file or directory: 'flake_report.json'").all()
    assert not details.str.contains("evalkit-run-").any()
    assert not details.str.contains(r"/ws-").any()
    rows = evalkit.read_run(run)
    assert not rows["error_message"].fillna("").astype(str).str.contains("evalkit-run-").any()
    reasons = item_reasons(rows, scores)["reason"]
    assert reasons.str.contains("'flake_report.json'").any()
    assert not reasons.str.contains("evalkit-run-|/ws-").any()
    shown = evalkit_cli("explain", run, "--case", CASE, "--condition", "none")
    assert shown.returncode == 0, shown.stderr
    assert "'flake_report.json'" in shown.stdout and "evalkit-run-" not in shown.stdout


@pytest.mark.slow
def test_preloaded_trials_say_preloaded(run: Path) -> None:
    shown = evalkit_cli("explain", run, "--case", CASE, "--condition", "preloaded")
    assert shown.returncode == 0, shown.stderr
    trials = [line for line in shown.stdout.splitlines() if line.startswith("    trial ")]
    assert len(trials) == 3 and all("  skill preloaded  " in line for line in trials)
    assert "skill loaded no (none)" not in shown.stdout


def test_reasons_recorded_with_a_temporary_path_are_shown_relative(tmp_path: Path) -> None:
    # a run recorded before the paths were made relative
    workspace = "/tmp/evalkit-run-4242-old-abc123/ws-x9y8z7"
    rows = pd.DataFrame({"item_key": ["k"], "passed": [False], "status": ["error"],
                         "error_class": ["provider_error"],
                         "error_message": [f"cannot open {workspace}/out/log.txt"]})
    scores = pd.DataFrame({
        "item_key": ["k"], "component": ["verifier"], "value": [0.0], "max_value": [1.0],
        "passed": [False],
        "detail": [f"out.json exists: missing; python: can't open file '{workspace}/check.py'"],
    })
    (reason,) = item_reasons(rows, scores)["reason"]
    assert "evalkit-run-" not in reason and "ws-x9y8z7" not in reason
    assert "cannot open out/log.txt" in reason and "can't open file 'check.py'" in reason


def test_a_known_workspace_is_made_relative_wherever_it_lives(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    text = (f"read {link}/a.json; wrote {real}/b.txt; ran in {real}; "
            f"left {tmp_path}/real2/c.txt alone")
    assert relative_to_workspace(text, link) == (
        f"read a.json; wrote b.txt; ran in .; left {tmp_path}/real2/c.txt alone"
    )
    assert os.path.realpath(link) == str(real)
    assert relative_to_workspace("", link) == ""
    assert relative_to_workspace("/tmp/other/evalkit-run-x/file") == (
        "/tmp/other/evalkit-run-x/file"  # not an item workspace: left as it is
    )
