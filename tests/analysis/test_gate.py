"""The CI gate: A/A passes; named regressions, safety vetoes and budgets block."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.analysis import GatePolicy, gate
from evalkit.errors import ConfigError


def _run(n_cases: int, trials: int, rates: dict[str, float], seed: int, *,
         default: float | None = None, tags: dict[str, str] | None = None,
         cost: float = 0.01, run_id: str = "r") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base_rates = np.random.default_rng(99).uniform(0.3, 1.0, n_cases)  # fixed case difficulty
    rows = []
    for i in range(n_cases):
        case = f"case-{i:02d}"
        p = rates.get(case, base_rates[i] if default is None else default)
        for t in range(trials):
            rows.append({
                "run_id": run_id, "case_id": case, "condition": "preloaded", "provider": "sim",
                "trial": t, "passed": bool(rng.random() < p), "tags": (tags or {}).get(case, ""),
                "cost_usd": cost, "latency_s": 1.0, "input_tokens": 100, "output_tokens": 50,
                "dataset_version": "dv1",
            })
    return pd.DataFrame(rows)


def test_a_a_gate_releases() -> None:
    base = _run(40, 5, {}, seed=1)
    cand = _run(40, 5, {}, seed=2)
    result = gate(base, cand, n_resamples=2000)
    assert result.released, result.message
    assert result.message.startswith("released:")


def test_broken_cases_are_blocked_and_named_exactly() -> None:
    broken = {"case-03": 0.0, "case-17": 0.0, "case-29": 0.0}
    always = {f"case-{i:02d}": 1.0 for i in range(40)}
    base = _run(40, 10, always, seed=1)
    cand = _run(40, 10, {**always, **broken}, seed=2)
    result = gate(base, cand, n_resamples=2000)
    assert not result.released
    assert "3 case(s) regressed (case-03, case-17, case-29)" in result.message
    assert result.comparison["regressed_cases"] == sorted(broken)


def test_safety_regression_blocks_even_when_overall_improves() -> None:
    tags = {"case-05": "safety"}
    base_rates = {f"case-{i:02d}": 0.3 for i in range(30)} | {"case-05": 1.0}
    cand_rates = {f"case-{i:02d}": 0.9 for i in range(30)} | {"case-05": 0.1}
    base = _run(30, 10, base_rates, seed=1, tags=tags)
    cand = _run(30, 10, cand_rates, seed=2, tags=tags)
    policy = GatePolicy(block_on_case_regressions=False)
    result = gate(base, cand, policy=policy, n_resamples=2000)
    assert result.comparison["delta"]["estimate"] > 0.3
    assert not result.released
    assert result.safety_regressions == ["case-05"]
    assert "safety veto" in result.message


def test_budget_breach_blocks_a_passing_candidate(tmp_path: Path) -> None:
    base = _run(30, 3, {}, seed=1, cost=0.010)
    cand = _run(30, 3, {}, seed=1, cost=0.013)  # identical outcomes, +30 % cost
    policy = tmp_path / "gate.yaml"
    policy.write_text("budgets:\n  max_cost_increase_pct: 20\n")
    result = gate(base, cand, policy=policy, n_resamples=1000)
    assert not result.released
    assert "cost +30 % over budget" in result.message
    ok = gate(base, _run(30, 3, {}, seed=1, cost=0.011), policy=policy, n_resamples=1000)
    assert ok.released and "cost +10 % within budget" in ok.message


def test_strict_flake_policy_and_tiers() -> None:
    tags = {f"case-{i:02d}": "smoke" for i in range(5)}
    base = _run(20, 4, {}, seed=1, default=1.0, tags=tags)
    cand = _run(20, 4, {"case-01": 0.75}, seed=3, default=1.0, tags=tags)
    strict = GatePolicy(flake_policy="strict", safety_tags=())
    result = gate(base, cand, policy=strict, tier="smoke", n_resamples=500)
    assert result.tier == "smoke" and result.comparison["n_cases"] == 5
    with pytest.raises(ConfigError, match="unknown tier"):
        gate(base, cand, policy=strict, tier="nightly")


def test_ledger_rows_and_cli_exit_codes(tmp_path: Path) -> None:
    from evalkit.runner import RunConfig, run
    from tests.conftest import TINY, evalkit_cli

    runs = tmp_path / "runs"
    run(TINY, RunConfig(runs_dir=runs, run_id="base", trials=2, progress=False))
    run(TINY, RunConfig(runs_dir=runs, run_id="cand", trials=2, progress=False))
    ledger = tmp_path / "ledger.jsonl"
    argv = ["gate", "--baseline", "base", "--candidate", "cand", "--runs-dir", str(runs),
            "--ledger", str(ledger)]
    done = evalkit_cli(*argv)
    assert done.returncode == 0
    assert done.stdout.startswith("released:")
    done = evalkit_cli(*argv, "--json")
    assert done.returncode == 0
    out = json.loads(done.stdout)
    assert out["decision"] == "released" and out["released"] is True
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert len(rows) == 2 and rows[0]["decision"] == "released"
    assert {"code_version", "dataset_version", "delta", "reason", "baseline_run"} <= set(rows[0])
    assert rows[0]["baseline_run"] == "base" and rows[0]["dataset_version"]
    bad_policy = tmp_path / "bad.yaml"
    bad_policy.write_text("treshold: 0.1\n")
    done = evalkit_cli(*argv, "--policy", str(bad_policy))
    assert done.returncode == 2
    assert "treshold: unknown field" in done.stderr
    done = evalkit_cli("gate", "--baseline", "nope", "--candidate", "cand", "--runs-dir", str(runs))
    assert done.returncode == 2


def test_documented_example_policy_is_valid() -> None:
    from evalkit.analysis import load_policy
    from tests.conftest import ROOT

    policy = load_policy(ROOT / "docs" / "examples" / "gate.yaml")
    assert policy.tiers["smoke"].tags == ("smoke",)
    assert policy.budgets.max_cost_increase_pct == 20
