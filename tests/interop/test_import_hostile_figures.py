"""Harbor results an attacker (or a broken harness) wrote: never a traceback, never a lie.

Each attack edits a real trial ``result.json`` of the committed Harbor fixture and imports it
with the real command: times in mixed zones, times out of range, token counts past int64,
costs that are NaN, infinite or negative, and a trial folder copied without its id.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import evalkit
from tests.conftest import ROOT, evalkit_cli

JOB = ROOT / "tests" / "fixtures" / "imports" / "harbor" / "job-no-skills"


def _job(tmp_path: Path) -> tuple[Path, Path]:
    job = tmp_path / "job"
    shutil.copytree(JOB, job)
    trial = sorted(p for p in job.glob("*/result.json"))[0]
    return job, trial


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _import(job: Path, tmp_path: Path, run_id: str = "x") -> tuple[int, str, str]:
    done = evalkit_cli("import", job, "--format", "harbor", "--run-id", run_id,
                       "--runs-dir", tmp_path / "runs")
    return done.returncode, done.stdout, done.stderr


def test_mixed_time_zones_still_give_a_latency(tmp_path: Path) -> None:
    job, trial = _job(tmp_path)

    def mixed(data: dict[str, Any]) -> None:
        data["agent_execution"] = {"started_at": "2026-01-01T10:00:00",
                                   "finished_at": "2026-01-01T10:00:30+00:00"}

    _edit(trial, mixed)
    code, _, stderr = _import(job, tmp_path)
    assert code == 0, stderr
    rows = evalkit.read_run(tmp_path / "runs" / "x")
    assert 30.0 in set(rows["latency_s"].dropna())


def test_a_time_out_of_range_exits_2_naming_file_and_field(tmp_path: Path) -> None:
    job, trial = _job(tmp_path)
    _edit(trial, lambda d: d.update(started_at="0001-01-01T00:00:00+05:00"))
    code, _, stderr = _import(job, tmp_path)
    assert code == 2 and "Traceback" not in stderr
    assert str(trial) in stderr and "started_at" in stderr and "out of range" in stderr


@pytest.mark.parametrize(("field", "value"), [
    ("n_input_tokens", 10**30), ("n_input_tokens", -5), ("cost_usd", float("nan")),
    ("cost_usd", float("inf")), ("cost_usd", -3.0),
])
def test_impossible_figures_are_stored_as_null_with_a_warning(
    field: str, value: float, tmp_path: Path
) -> None:
    job, trial = _job(tmp_path)
    _edit(trial, lambda d: d.setdefault("agent_result", {}).update({field: value}))
    code, _, stderr = _import(job, tmp_path)
    assert code == 0, stderr
    column = {"n_input_tokens": "input_tokens", "cost_usd": "cost_usd"}[field]
    assert f"impossible {column}" in stderr and str(trial) in stderr
    rows = evalkit.read_run(tmp_path / "runs" / "x")
    figures = rows[column].dropna()
    assert (figures >= 0).all() and figures.map(lambda v: v == v and abs(v) < 1e18).all()
    assert rows[column].isna().sum() >= 1


def test_a_trial_folder_copied_without_its_id_counts_once(tmp_path: Path) -> None:
    job, trial = _job(tmp_path)
    _edit(trial, lambda d: d.pop("id", None))
    twin = trial.parent.with_name(trial.parent.name + "-copy")
    shutil.copytree(trial.parent, twin)
    code, stdout, stderr = _import(job, tmp_path)
    assert code == 0, stderr
    assert "repeat a trial already read" in stderr
    once = evalkit_cli("import", JOB, "--format", "harbor", "--run-id", "once",
                       "--runs-dir", tmp_path / "runs")
    assert len(evalkit.read_run(tmp_path / "runs" / "x")) == len(
        evalkit.read_run(tmp_path / "runs" / "once")), once.stderr
