"""An inconclusive gate says what would settle it (the ``next_step`` of ``compare``)."""

from __future__ import annotations

import html
import json
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.analysis import GatePolicy, NextStep, gate
from evalkit.cli import build_parser
from evalkit.runner import RunConfig, run
from evalkit.stats import PowerDesign, estimate_variance_components, required_cases, required_trials
from tests.conftest import TINY, evalkit_cli


def _rows(run_id: str, seed: int, n_cases: int = 12, trials: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rates = np.random.default_rng(7).uniform(0.2, 0.9, n_cases)  # the same cases both runs
    return pd.DataFrame([
        {"run_id": run_id, "case_id": f"c{i:02d}", "condition": "preloaded", "trial": t,
         "passed": bool(rng.random() < rates[i])}
        for i in range(n_cases) for t in range(trials)
    ])


def test_an_inconclusive_gate_plans_from_the_gated_rows() -> None:
    base, cand = _rows("b", 1), _rows("c", 2)  # A/A: the same true rates
    result = gate(base, cand, n_resamples=1000)
    assert result.comparison["verdict"] == "inconclusive" and result.released
    step = result.next_step
    assert step is not None and result.comparison["next_step"] == step
    assert {"cases", "trials", "effect", "command"} <= set(step)
    effect = result.comparison["delta"]["estimate"]
    assert step["effect"] == pytest.approx(effect)
    components = estimate_variance_components(base, cand)
    if abs(effect) > 0.05 or effect < 0:
        assert step["cases"] == required_cases(effect, 3,
                                               design=PowerDesign.from_components(
                                                   components,
                                               ), threshold=0.05).n_cases
    assert step["cases_at_threshold"] == required_cases(0.05, 3,
                                                        design=PowerDesign.from_components(
                                                            components,
                                                        ), threshold=0.0).n_cases
    if step["trials"] is not None:
        assert step["trials"] == required_trials(effect, 12,
                                                 design=PowerDesign.from_components(
                                                     components,
                                                 )).n_trials
    assert step["command"] is None  # tables in: no suite to name
    assert result.to_dict()["next_step"] == step
    shown = result._repr_html_()  # the rich display in Jupyter
    assert shown is not None and html.escape(NextStep(**step).text()) in shown


def test_a_blocked_regression_has_no_next_step() -> None:
    base = _rows("b", 1).assign(passed=True)
    cand = base.assign(run_id="c", passed=False)
    result = gate(base, cand, n_resamples=500)
    assert result.comparison["verdict"] == "regressed" and not result.released
    assert result.next_step is None and result.comparison["next_step"] is None


@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("gate-next") / "runs"
    for run_id, seed in (("base", 1), ("cand", 2)):  # other seeds: no pair is one sample
        run(TINY, RunConfig(runs_dir=runs, run_id=run_id, trials=2, seed=seed, progress=False,
                            use_cache=False))
    return runs


def test_gate_cli_prints_and_returns_the_next_step(tiny_runs: Path) -> None:
    argv = ["gate", "--baseline", "base", "--candidate", "cand", "--runs-dir", str(tiny_runs)]
    done = evalkit_cli(*argv, "--json")
    out = json.loads(done.stdout)
    assert done.returncode == (0 if out["released"] else 1)
    assert out["comparison"]["verdict"] == "inconclusive"  # 4 cases: no verdict is possible
    step = out["next_step"]
    assert step == out["comparison"]["next_step"] and step["current_cases"] == 4
    assert step["current_trials"] == 2
    if step["command"] is not None:  # two runs: a fresh run of the suite with more trials
        args = build_parser().parse_args(shlex.split(step["command"])[1:])
        assert Path(args.suite) == TINY and args.trials == step["trials"] and args.no_cache
    text = evalkit_cli(*argv).stdout
    assert NextStep(**step).text() in text and "next step:" in text


def test_a_strict_gate_plans_cases_for_its_one_outcome_per_case() -> None:
    """Strict flake policy: a case is one outcome folded from 3 trials; the plan says so."""
    base, cand = _rows("b", 1, n_cases=20), _rows("c", 2, n_cases=20)
    result = gate(base, cand, policy=GatePolicy(flake_policy="strict"), n_resamples=1000)
    assert result.comparison["verdict"] == "inconclusive"
    step = result.next_step
    assert step is not None
    assert step["current_trials"] == 3 and step["trials"] is None
    assert "strict flake policy" in step["note"] and "all of its 3 trials pass" in step["note"]
    assert "one trial per case" not in step["note"]
    assert "cases at 3 trials" in NextStep(**step).text()


def test_the_gate_says_which_policy_decided_and_names_an_equivalent_change() -> None:
    import numpy as np
    import pandas as pd

    from evalkit.analysis import gate

    rng = np.random.default_rng(0)
    chance = np.repeat(1 / (1 + np.exp(-rng.normal(0, 1.5, 600))), 3)

    def side(shift: float = 0.0) -> pd.DataFrame:
        return pd.DataFrame({"case_id": np.repeat([f"c{i}" for i in range(600)], 3),
                             "condition": "c", "trial": np.tile(range(3), 600),
                             "passed": rng.random(1800) < np.clip(chance + shift, 0, 1)})

    same = gate(side(), side())
    assert same.released and same.comparison["equivalence"]["equivalent"]
    assert "no practical difference (within ±5 pp)" in same.message
    assert same.policy.startswith("policy: the defaults (no --policy file), tier release")
    assert "Released although" not in same.policy
    # 12 cases, three lose one trial of three: -8.3 pp, inconclusive, released, and said so
    cases = [f"k{i:02d}" for i in range(12)]
    before = pd.DataFrame([{"case_id": c, "condition": "c", "trial": t, "passed": True}
                           for c in cases for t in range(3)])
    after = before.assign(passed=[not (i < 9 and i % 3 == 2) for i in range(36)])
    drop = gate(before, after)
    assert drop.released and drop.comparison["verdict"] == "inconclusive"
    assert "Released although the change is -8.3 pp" in drop.policy
