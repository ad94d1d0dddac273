"""``optimize.json``: one typed record, written by the loop, read back by resume and reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalkit.report as rk
from evalkit.errors import InputError
from evalkit.optimize import (
    STATE_FILE,
    STATE_VERSION,
    OptimizeConfig,
    OptimizeState,
    optimize,
    read_state,
)
from tests.optimize.probes import write_monotone_suite

PROBES = "tests.optimize.probes"


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("state")
    suite = write_monotone_suite(tmp / "suite")
    config = OptimizeConfig(
        skill="probe", optimizer=f"python:{PROBES}:append_marker", trials=1, max_iterations=2,
        stall=None, runs_dir=tmp / "runs", backend="threading", n_resamples=1000, run_id="st",
    )
    return optimize(suite, config).run_dir


def test_the_record_on_disk_is_the_model(finished: Path) -> None:
    on_disk = json.loads((finished / STATE_FILE).read_text(encoding="utf-8"))
    assert on_disk["version"] == STATE_VERSION
    state = read_state(finished)
    assert state.to_json() == on_disk
    assert state.status == "complete" and state.iterations == 2
    assert [d.candidate for d in state.history] == ["cand-0001", "cand-0002"]
    assert state.test is not None and state.test.champion == state.champion == "cand-0002"
    assert state.test_champion == "cand-0002" and state.unsealed_at is not None
    decisions = [
        json.loads(line) for line in (finished / "events.jsonl").read_text().splitlines()
    ]
    decision = next(e for e in decisions if e["event"] == "decision")
    assert {"candidate", "parent", "accepted", "reason", "verdict", "usd"} <= set(decision)


def test_a_record_without_version_reads_as_version_one(finished: Path, tmp_path: Path) -> None:
    data = json.loads((finished / STATE_FILE).read_text(encoding="utf-8"))
    del data["version"]
    for key in ("seed_val_rate", "test_champion", "unsealed_at", "abort_reason"):
        data.pop(key)  # keys older records only had once set
    (tmp_path / STATE_FILE).write_text(json.dumps(data), encoding="utf-8")
    state = read_state(tmp_path)
    assert state.version == 1 and state.abort_reason is None
    assert state.test is not None and state.test.verdict in ("improved", "inconclusive")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"iterations": "two"}, "iterations"),
        ({"status": "paused"}, "status"),
        ({"version": STATE_VERSION + 1}, "version"),
    ],
)
def test_a_bad_record_names_file_and_field(
    finished: Path, tmp_path: Path, change: dict[str, object], field: str
) -> None:
    data = json.loads((finished / STATE_FILE).read_text(encoding="utf-8")) | change
    (tmp_path / STATE_FILE).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_state(tmp_path)
    assert str(tmp_path / STATE_FILE) in str(info.value) and f"field '{field}'" in str(info.value)


def test_the_report_reads_the_same_record(finished: Path) -> None:
    opt = rk.load_optimization(finished)
    assert isinstance(opt.state, OptimizeState)
    assert list(opt.history["candidate"]) == ["cand-0001", "cand-0002"]
    verdict, headline, details = rk.test_summary(opt)
    assert opt.state.test is not None and verdict == opt.state.test.verdict
    assert "sealed test split" in headline and "champion cand-0002" in details
    with pytest.raises(InputError, match="not an optimisation run"):
        rk.load_optimization(finished.parent)
