"""Every command's --json matches its docs/architecture.md shape, and stdout holds nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import TINY, evalkit_cli, evalkit_process


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    for run_id, seed in (("a", "0"), ("b", "1")):
        argv = ["run", str(TINY), "--runs-dir", str(runs), "--run-id", run_id, "--seed", seed,
                "--trials", "3", "--json", "--no-progress"]
        done = evalkit_cli(*argv)
        assert done.returncode == 0
    return runs


def _json(argv: list[str]) -> dict[str, object]:
    done = evalkit_cli(*argv)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.count("\n") == 1, "exactly one JSON object on stdout"
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def _is_number_or_null(value: object) -> bool:
    return value is None or isinstance(value, int | float)


@pytest.mark.slow
def test_run_json_via_real_subprocess(tmp_path: Path) -> None:
    proc = evalkit_process("run", TINY, "--runs-dir", tmp_path, "--trials", "1", "--json",
                           timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"run_id", "run_dir", "items", "ok", "errors", "pass_rate", "status",
                         "failure", "ungraded"}
    assert (data["status"], data["failure"], data["ungraded"]) == ("complete", None, 0)
    assert data["items"] == 16 and data["ok"] + data["errors"] == 16
    assert 0 <= data["pass_rate"] <= 1 and Path(data["run_dir"]).is_dir()


def test_lift_json(runs: Path) -> None:
    data = _json(["lift", "a", "--runs-dir", str(runs), "--json", "--resamples", "500"])
    assert data["run_id"] == "a"
    metrics = data["metrics"]
    assert isinstance(metrics, list) and metrics
    names = {m["metric"] for m in metrics}
    assert {"realized_lift", "oracle_lift", "routing_gap", "stale_harm", "regression_rate",
            "unlock_rate", "routing_efficiency"} <= names
    for m in metrics:
        assert set(m) == {"provider", "lane", "metric", "estimate", "ci_low", "ci_high", "n_cases"}
        assert all(_is_number_or_null(m[k]) for k in ("estimate", "ci_low", "ci_high"))
        assert isinstance(m["n_cases"], int)


def test_compare_json(runs: Path) -> None:
    data = _json(["compare", "a", "b", "--runs-dir", str(runs), "--json",
                          "--resamples", "500"])
    assert {"verdict", "metric", "delta", "wins", "losses", "ties", "n_cases", "cases",
            "regressed_cases", "improved_cases"} <= set(data)
    assert data["verdict"] in {"improved", "regressed", "inconclusive"}
    assert set(data["delta"]) >= {"estimate", "ci_low", "ci_high"}  # type: ignore[arg-type]
    case = data["cases"][0]  # type: ignore[index]
    assert {"case_id", "condition", "verdict", "estimate", "ci_low", "ci_high"} <= set(case)
    assert data["wins"] + data["losses"] + data["ties"] == data["n_cases"]  # type: ignore[operator]
    parts = data["by_condition"]
    assert isinstance(parts, list) and len(parts) == 4  # TINY runs four conditions
    for part in parts:
        assert {"condition", "verdict", "delta", "n_cases", "reused_items"} <= set(part)
        assert set(part["delta"]) == {"estimate", "ci_low", "ci_high"}
    conditions = sorted(p["condition"] for p in parts)
    # contributing / left_out_reused extend the record: here no pair is reused
    assert data["pooled"] == {"method": "stratified-by-case", "conditions": conditions,
                              "contributing": conditions, "left_out_reused": []}
    within = _json(["compare", "a", "--conditions", "none,preloaded", "--runs-dir",
                            str(runs), "--json", "--resamples", "500"])
    assert within["cases"][0]["condition"] == "preloaded vs none"  # type: ignore[index]


def test_flips_json(runs: Path) -> None:
    for argv in (["flips", "a"], ["flips", "a", "b"]):
        data = _json([*argv, "--runs-dir", str(runs), "--json"])
        # the contract's keys, extended with the reused pairs left out and why, and the
        # per-provider table (empty: one provider)
        assert set(data) == {"flip_rate", "n_pairs", "by_case", "reused_items", "message",
                             "by_provider", "ci_low", "ci_high"}
        assert data["by_provider"] == []
        assert 0 <= data["flip_rate"] <= 1 and isinstance(data["by_case"], list)  # type: ignore[operator]
        assert data["reused_items"] == 0 and data["message"] == ""  # two seeds: fresh samples


def test_power_json() -> None:
    data = _json(["power", "--effect", "0.15", "--trials", "3", "--json"])
    assert isinstance(data["n_cases"], int) and data["n_cases"] > 0
    mde = _json(["power", "--cases", str(data["n_cases"]), "--trials", "3", "--json"])
    assert mde["effect"] == pytest.approx(0.15, abs=0.01)
    done = evalkit_cli("power")
    assert done.returncode == 2
    assert "--effect" in done.stderr


def test_missing_run_exits_2(runs: Path) -> None:
    for argv in (["lift", "nope"], ["compare", "a", "nope"], ["flips", "nope"]):
        done = evalkit_cli(*argv, "--runs-dir", str(runs))
        assert done.returncode == 2
        err = done.stderr
        assert "nope" in err and "Traceback" not in err
