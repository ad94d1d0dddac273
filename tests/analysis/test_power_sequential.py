"""``evalkit power --sequential``: expected cases of the sequential design beside the fixed n."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.analysis import power
from evalkit.errors import InputError
from evalkit.stats import required_cases, simulate_sequential

ROOT = Path(__file__).resolve().parents[2]


def test_power_reports_the_sequential_design_beside_the_fixed_one() -> None:
    result = power(effect=0.25, trials=3, sequential=True, n_sims=60, seed=4)
    fixed = required_cases(0.25, 3)
    assert result.n_cases == fixed.n_cases  # the fixed plan is unchanged
    plan = result.sequential
    assert plan is not None and result.n_cases is not None
    assert plan["plan_cases"] == result.n_cases
    assert plan["max_cases"] == 4 * result.n_cases
    assert plan["n_sims"] == 60 and plan["seed"] == 4
    assert plan["ratio_to_fixed"] == pytest.approx(plan["expected_cases"] / result.n_cases)
    # the same simulation, called directly, gives the same figures (seeded)
    again = simulate_sequential(
        0.25, 3, max_cases=4 * result.n_cases, plan_cases=result.n_cases, n_sims=60, seed=4
    )
    assert again.expected_cases == plan["expected_cases"]
    assert plan["improved"] >= 0.9
    assert result.to_dict()["sequential"]["expected_cases"] == plan["expected_cases"]


def test_without_the_flag_the_result_has_no_sequential_plan() -> None:
    assert power(effect=0.15, trials=3).sequential is None


def test_sequential_needs_an_effect_without_cases() -> None:
    with pytest.raises(InputError, match="--sequential"):
        power(cases=50, effect=0.15, sequential=True)


def test_cli_prints_and_returns_the_sequential_plan() -> None:
    argv = [sys.executable, "-m", "evalkit", "power", "--effect", "0.2", "--trials", "3"]
    done = subprocess.run(
        [*argv, "--sequential", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["sequential"]["plan_cases"] == out["n_cases"]
    text = subprocess.run(
        [*argv, "--sequential"],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert "cases to a verdict" in text.stdout and "x the fixed design" in text.stdout
