"""``evalkit power --sequential``: expected cases of the sequential design beside the fixed n."""

from __future__ import annotations

import json

import pytest
from statsmodels.stats.proportion import proportion_confint

from evalkit._settings import ROUND_CASES
from evalkit.analysis import power
from evalkit.errors import InputError
from evalkit.stats import (
    DEFAULT_CONCENTRATION,
    AdaptiveTrials,
    PowerDesign,
    headroom_model,
    required_cases,
    simulate_sequential,
)
from tests.conftest import CliResult, evalkit_cli

#: The one model ``power(effect=0.25, trials=3, sequential=True)`` plans both designs under.
MODEL = headroom_model(0.25, 3)


def test_power_reports_the_sequential_design_beside_the_fixed_one() -> None:
    result = power(effect=0.25, trials=3, sequential=True, n_sims=60, seed=4)
    fixed = required_cases(0.25, 3, design=PowerDesign.from_components(MODEL.components))
    assert result.n_cases == fixed.n_cases  # the fixed plan under the simulated model
    plan = result.sequential
    assert plan is not None and result.n_cases is not None
    assert plan["plan_cases"] == result.n_cases
    assert plan["max_cases"] == 4 * result.n_cases
    assert plan["n_sims"] == 60 and plan["seed"] == 4
    assert plan["ratio_to_fixed"] == pytest.approx(plan["expected_cases"] / result.n_cases)
    # the same simulation, called directly, gives the same figures (seeded)
    again = simulate_sequential(
        0.25, 3, max_cases=4 * result.n_cases, plan_cases=result.n_cases, n_sims=60, seed=4,
        coupling=MODEL.coupling,
    )
    assert again.expected_cases == plan["expected_cases"]
    assert plan["improved"] >= 0.9
    assert result.to_dict()["sequential"]["expected_cases"] == plan["expected_cases"]


def test_without_the_flag_the_result_has_no_sequential_plan() -> None:
    assert power(effect=0.15, trials=3).sequential is None


def test_sequential_needs_an_effect_without_cases() -> None:
    with pytest.raises(InputError, match="--sequential"):
        power(cases=50, effect=0.15, sequential=True)


def _power_cli(*flags: str) -> CliResult:
    return evalkit_cli("power", "--effect", "0.2", "--trials", "3", *flags)


def test_cli_prints_and_returns_the_sequential_plan() -> None:
    done = _power_cli("--sequential", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["sequential"]["plan_cases"] == out["n_cases"]
    text = _power_cli("--sequential")
    assert "cases to a verdict" in text.stdout and "x the fixed design" in text.stdout
    adaptive = _power_cli("--sequential", "--adaptive-trials")
    assert adaptive.returncode == 0, adaptive.stderr
    assert "with --adaptive-trials: expected" in adaptive.stdout
    assert "x the fixed design's items" in adaptive.stdout


def test_adaptive_trials_add_the_work_items_of_the_same_simulation() -> None:
    result = power(effect=0.25, trials=3, sequential=True, adaptive_trials=True, n_sims=40,
                   seed=4)
    plan = result.sequential
    assert plan is not None and result.n_cases is not None
    again = simulate_sequential(
        0.25, adaptive=AdaptiveTrials(total_trials=3), concentration=DEFAULT_CONCENTRATION,
        max_cases=4 * result.n_cases, round_cases=ROUND_CASES.default, plan_cases=result.n_cases,
        n_sims=40, seed=4, coupling=MODEL.coupling,
    )
    assert plan["expected_items"] == again.expected_items
    assert plan["items_ratio_to_fixed"] == pytest.approx(
        again.expected_items / (result.n_cases * 2 * 3)
    )
    assert plan["design"] == AdaptiveTrials(total_trials=3).to_dict()
    assert 0 < plan["stage_two_share"] < 1
    with pytest.raises(InputError, match="at least 2 trials"):
        power(effect=0.25, trials=1, sequential=True, adaptive_trials=True)
    with pytest.raises(InputError, match="only with --sequential"):
        power(effect=0.25, trials=3, adaptive_trials=True)


def test_plan_effect_simulates_the_futility_boundary() -> None:
    result = power(effect=0.25, trials=3, sequential=True, n_sims=60, seed=4, plan_effect=0.25,
                   futility_beta=0.1)
    plan = result.sequential
    assert plan is not None and result.n_cases is not None
    assert plan["plan_effect"] == 0.25 and plan["futility_beta"] == 0.1
    again = simulate_sequential(
        0.25, 3, max_cases=4 * result.n_cases, plan_cases=result.n_cases, n_sims=60, seed=4,
        plan_effect=0.25, futility_beta=0.1, coupling=MODEL.coupling,
    )
    assert again.futile_planned == plan["futile_planned"]
    assert again.expected_cases == plan["expected_cases"]
    assert plan["futile_planned"] <= plan["futile"] <= 1 - plan["improved"] + 1e-12  # shares
    with pytest.raises(InputError, match="only with --sequential"):
        power(effect=0.25, trials=3, plan_effect=0.25)
    text = _power_cli("--sequential", "--round-cases", "5", "--plan-effect", "0.2")
    assert text.returncode == 0, text.stderr
    assert "with --plan-effect 0.2 (beta 0.2): stopped futile" in text.stdout
    refused = _power_cli("--sequential", "--plan-effect", "1.5")
    assert refused.returncode == 2 and "plan_effect" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_the_fixed_design_at_the_sequential_designs_power_gives_equal_error_rates() -> None:
    result = power(effect=0.25, trials=3, sequential=True, n_sims=60, seed=4)
    plan = result.sequential
    assert plan is not None and result.n_cases is not None
    # credited with the lower 95 % Wilson bound of the simulated power, never the estimate
    wilson_low = proportion_confint(round(plan["improved"] * 60), 60, alpha=0.05,
                                    method="wilson")[0]
    assert plan["equal_power"] == pytest.approx(wilson_low)
    assert 0.8 < plan["equal_power"] < plan["improved"]
    same = required_cases(0.25, 3,
                          design=PowerDesign.from_components(
                              MODEL.components, power=plan["equal_power"],
                          ))
    assert plan["equal_power_cases"] == same.n_cases > result.n_cases
    assert plan["ratio_to_equal_power"] == pytest.approx(
        plan["expected_cases"] / plan["equal_power_cases"]
    )
    assert plan["ratio_to_equal_power"] < plan["ratio_to_fixed"]
    text = _power_cli("--sequential", "--round-cases", "5")
    assert text.returncode == 0, text.stderr
    assert "at equal error rates: a fixed design with the power" in text.stdout


def test_a_sequential_design_weaker_than_the_fixed_one_gets_no_equal_power_figure() -> None:
    # a budget of 5 cases cannot show the fixed design's 80 % power
    result = power(effect=0.25, trials=3, sequential=True, n_sims=40, seed=4, max_cases=5)
    plan = result.sequential
    assert plan is not None and plan["improved"] < 0.8
    assert plan["equal_power"] is None and plan["equal_power_cases"] is None
    assert plan["ratio_to_equal_power"] is None


def test_a_negative_effect_is_planned_and_reported_as_a_regression() -> None:
    """-25 pp: the verdict planned for is "regressed", and the equal-power figure uses it."""
    result = power(effect=-0.25, trials=3, sequential=True, n_sims=60, seed=4)
    plan = result.sequential
    assert plan is not None and result.n_cases is not None
    assert plan["improved"] == 0.0 and plan["regressed"] > 0.9
    wilson_low = proportion_confint(round(plan["regressed"] * 60), 60, alpha=0.05,
                                    method="wilson")[0]
    assert plan["equal_power"] == pytest.approx(wilson_low)
    assert plan["equal_power_cases"] is not None and plan["equal_power_cases"] > result.n_cases
    done = evalkit_cli("power", "--effect", "-0.2", "--trials", "3", "--sequential")
    assert done.returncode == 0, done.stderr
    assert "cases needed for the verdict regressed:" in done.stdout
    assert "regressed in " in done.stdout and "improved in " not in done.stdout
    assert "at equal error rates: a fixed design with the power" in done.stdout
    fixed = evalkit_cli("power", "--effect", "-0.2", "--trials", "3")
    assert "cases needed for the verdict regressed:" in fixed.stdout
