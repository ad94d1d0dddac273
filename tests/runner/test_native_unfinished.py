"""A native run's own timeouts are "did not finish: timeout" in lift's cause table.

A real ``evalkit run`` (subprocess) of the tiny suite with 0.2 s budgets, the simulated
provider hanging on some items past their deadline (``hang_rate``): each hung item is a
``timeout`` row, and ``evalkit lift`` counts them as unfinished, apart from wrong answers.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from evalkit.results import read_run
from tests.conftest import TINY, evalkit_cli


@pytest.mark.slow
def test_a_native_runs_timeouts_did_not_finish(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(TINY, suite)
    cases = suite / "cases" / "prompt.yaml"
    cases.write_text(cases.read_text().replace("    prompt: ", "    budgets: {timeout_s: 0.2}\n"
                                                                "    prompt: "))
    runs = tmp_path / "runs"
    done = evalkit_cli("run", suite, "--provider", "simulated", "--provider-opt",
                       "hang_rate=0.4", "--trials", "2", "--conditions", "none,preloaded",
                       "--lane", "prompt", "--runs-dir", runs, "--run-id", "hang")
    assert done.returncode == 0, done.stderr
    rows = read_run("hang", runs)
    timeouts = rows[rows["status"] == "timeout"].groupby("condition").size().to_dict()
    assert timeouts, "the fault injection hung some items"
    lift = evalkit_cli("lift", "hang", "--runs-dir", runs, "--resamples", "200")
    assert lift.returncode == 0, lift.stderr
    for condition, count in timeouts.items():
        failures = int((~rows.loc[rows["condition"] == condition, "passed"]).sum())
        line = next(ln for ln in lift.stdout.splitlines()
                    if ln.startswith(f"  {condition}: {failures} failure"))
        assert re.search(rf"did not finish {count} \({count} timeout\)", line), line
    base, cand = timeouts.get("none", 0), timeouts.get("preloaded", 0)
    assert f"preloaded: did not finish: timeout {base} -> {cand} ({cand - base:+d})" in (
        lift.stdout)
