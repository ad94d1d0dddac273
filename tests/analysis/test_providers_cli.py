"""Several providers through the command line: --provider, gate's provider rule, power."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.analysis import GatePolicy, gate, power
from evalkit.stats import minimum_detectable_effect, required_cases
from tests.conftest import evalkit_cli

ROOT = Path(__file__).resolve().parents[2]


def _runs(drop: str, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two runs of 3 providers x 40 cases x 4 trials; the candidate breaks ``drop`` only."""
    rng = np.random.default_rng(seed)
    rows_a, rows_b = [], []
    rates = rng.uniform(0.5, 0.9, 40)
    for provider in ("alpha", "beta", "gamma"):
        for case, rate in enumerate(rates):
            for trial in range(4):
                key = {"case_id": f"c{case:02d}", "condition": "none", "provider": provider,
                       "trial": trial}
                rows_a.append(key | {"passed": bool(rng.random() < rate)})
                later = 0.1 if provider == drop else min(1.0, rate + 0.05)
                rows_b.append(key | {"passed": bool(rng.random() < later)})
    return pd.DataFrame(rows_a), pd.DataFrame(rows_b)


def test_gate_can_require_that_no_provider_regressed() -> None:
    base, cand = _runs("gamma")
    lenient = gate(base, cand, n_resamples=2000,
                   policy=GatePolicy(block_on_case_regressions=False))
    strict = gate(base, cand, n_resamples=2000,
                  policy=GatePolicy(block_on_case_regressions=False,
                                    block_on_provider_regressions=True))
    assert strict.decision == "blocked"
    assert any("provider(s) regressed (gamma; Holm across providers)" in r
               for r in strict.reasons)
    assert strict.ledger_row["regressed_providers"] == ["gamma"]
    assert not any("provider" in r for r in lenient.reasons)
    fine = gate(*_runs("nobody"), n_resamples=2000,
                policy=GatePolicy(block_on_provider_regressions=True))
    assert fine.released and "no provider regressed (3 providers)" in fine.message


@pytest.mark.slow
def test_provider_filter_on_the_commands(tmp_path: Path) -> None:
    base, cand = _runs("gamma")
    for name, frame in (("before", base), ("after", cand)):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
        done = evalkit_cli("import", str(tmp_path / f"{name}.csv"), "--format", "csv", "--run-id",
                           name, "--runs-dir", str(tmp_path))
        assert done.returncode == 0
    common = ["--runs-dir", str(tmp_path), "--json"]
    done = evalkit_cli("compare", "before", "after", "--resamples", "1000", *common)
    assert done.returncode == 0
    everyone = json.loads(done.stdout)
    assert set(everyone["by_provider"]) == {"alpha", "beta", "gamma"}
    assert everyone["by_provider"]["gamma"]["verdict"] == "regressed"
    assert everyone["n_cases"] == 40 and everyone["heterogeneity"]["n_providers"] == 3
    done = evalkit_cli("compare", "before", "after", "--provider", "alpha,beta", "--resamples",
                       "1000", *common)
    assert done.returncode == 0
    two = json.loads(done.stdout)
    assert set(two["by_provider"]) == {"alpha", "beta"}
    done = evalkit_cli("compare", "before", "after", "--provider", "gamma", "--resamples", "1000",
                       *common)
    assert done.returncode == 0
    alone = json.loads(done.stdout)
    assert alone["by_provider"] == {} and alone["verdict"] == "regressed"
    done = evalkit_cli("flips", "before", "--provider", "beta", *common)
    assert done.returncode == 0
    assert json.loads(done.stdout)["n_pairs"] == 40 * 6
    done = evalkit_cli("gate", "--baseline", "before", "--candidate", "after", "--provider",
                       "alpha,beta", *common)
    assert done.returncode == 0
    assert json.loads(done.stdout)["released"]
    done = evalkit_cli("lift", "before", "--provider", "alpha,beta", *common)
    assert done.returncode == 0
    lifted = json.loads(done.stdout)
    assert {row["provider"] for row in lifted["success"]} == {"alpha", "beta"}
    assert {row["provider"] for row in lifted["pooled_metrics"]} == {"pooled"}


def test_unknown_provider_is_exit_2_listing_the_providers(tmp_path: Path) -> None:
    base, _ = _runs("gamma")
    base.to_csv(tmp_path / "r.csv", index=False)
    done = evalkit_cli("import", tmp_path / "r.csv", "--format", "csv", "--run-id", "r",
                       "--runs-dir", tmp_path)
    assert done.returncode == 0, done.stderr
    proc = evalkit_cli("flips", "r", "--provider", "delta", "--runs-dir", tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "provider(s) delta not in the results" in proc.stderr
    assert "alpha, beta, gamma" in proc.stderr


def test_compare_text_has_the_provider_table_and_heterogeneity_line(
    tmp_path: Path
) -> None:
    base, cand = _runs("gamma")
    data = pd.concat([base.assign(condition="none"), cand.assign(condition="skill")])
    data.to_csv(tmp_path / "r.csv", index=False)
    done = evalkit_cli("import", str(tmp_path / "r.csv"), "--format", "csv", "--run-id", "r",
                       "--runs-dir", str(tmp_path))
    assert done.returncode == 0
    done = evalkit_cli("compare", "r", "--conditions", "none,skill", "--resamples", "1000",
                       "--runs-dir", str(tmp_path))
    assert done.returncode == 0
    out = done.stdout
    assert "over 40 cases (pooled over 3 providers, clustered by case" in out
    assert "by provider (3;" in out
    gamma = [line for line in out.splitlines() if line.startswith("  gamma ")]
    assert len(gamma) == 1 and gamma[0].split()[1] == "regressed", out
    assert "providers: the effect differs between providers (interaction F(2, 78)" in out


def test_power_for_providers_that_share_cases() -> None:
    plain = power(effect=0.1, trials=3)
    assert power(effect=0.1, trials=3, providers=1, provider_correlation=0.3).n_cases == (
        plain.n_cases
    )
    # fully shared case effects: k providers only add trials
    shared = power(effect=0.1, trials=3, providers=6, provider_correlation=1.0)
    assert shared.n_cases == required_cases(effect=0.1, n_trials=18).n_cases
    assert shared.n_trials == 3
    needed = [power(effect=0.1, trials=3, providers=k, provider_correlation=0.5).n_cases
              for k in (1, 2, 6, 18)]
    assert needed == sorted(needed, reverse=True) and needed[-1] < needed[0] / 3
    lower = power(effect=0.1, trials=3, providers=18, provider_correlation=0.0).n_cases
    assert lower is not None and needed[-1] is not None and lower <= needed[-1]
    mde = power(cases=87, trials=3, providers=18, provider_correlation=1.0)
    assert mde.effect == pytest.approx(minimum_detectable_effect(87, 54).effect)
    with pytest.raises(Exception, match="--provider-correlation must lie in"):
        power(effect=0.1, providers=3, provider_correlation=2.0)
