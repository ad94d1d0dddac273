"""CompareOptions and PowerDesign: below evalkit.compare and evalkit.power, the object alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from evalkit.errors import InputError
from evalkit.stats import (
    DEFAULT_THRESHOLD,
    AdaptiveTrials,
    CompareOptions,
    PowerDesign,
    check_threshold,
    compare_tables,
    estimate_variance_components,
    minimum_detectable_effect,
    paired_compare,
    required_cases,
    required_trials,
    sequential_compare_tables,
    simulate_sequential,
)
from evalkit.stats._adaptive_power import AGENT_CONCENTRATION
from tests.stats.conftest import matrix_to_frame


def _run(seed: int = 3, cases: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = matrix_to_frame(rng.random((cases, 3)) < 0.5, condition="none")
    cand = matrix_to_frame(rng.random((cases, 3)) < 0.75, condition="preloaded")
    return pd.concat([base, cand], ignore_index=True)


SETTINGS = {
    "threshold": 0.02,
    "confidence": 0.9,
    "n_resamples": 500,
    "seed": 7,
    "alpha": 0.1,
    "correction": "fdr_bh",
}


def test_compare_with_options_equals_compare_with_keywords() -> None:
    """The top-level evalkit.compare's flat keywords give compare_tables' options result."""
    import evalkit

    run = _run()
    flat = evalkit.compare(run, conditions=("none", "preloaded"), **SETTINGS)  # type: ignore[arg-type]
    options = CompareOptions(**SETTINGS)  # type: ignore[arg-type]
    boxed = compare_tables(run, conditions=("none", "preloaded"), options=options)
    assert boxed.delta == flat.delta and boxed.cases.equals(flat.cases)
    assert boxed.threshold == 0.02 and boxed.correction == "fdr_bh"


def test_paired_compare_and_sequential_compare_take_options() -> None:
    run = _run(seed=5)
    base, cand = run[run["condition"] == "none"], run[run["condition"] == "preloaded"]
    base, cand = base.assign(condition="x"), cand.assign(condition="x")
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        paired_compare(base, cand, **SETTINGS)  # type: ignore[arg-type]
    boxed = paired_compare(base, cand, options=CompareOptions(**SETTINGS))  # type: ignore[arg-type]
    assert (boxed.threshold, boxed.alpha, boxed.correction) == (0.02, 0.1, "fdr_bh")
    shared = {k: v for k, v in SETTINGS.items() if k != "n_resamples"}
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        sequential_compare_tables(run, conditions=("none", "preloaded"), **shared)  # type: ignore[arg-type]
    boxed_seq = sequential_compare_tables(
        run, conditions=("none", "preloaded"), options=CompareOptions(**shared)  # type: ignore[arg-type]
    )
    assert boxed_seq.threshold == 0.02 and boxed_seq.delta.confidence == 0.9


def test_options_are_checked_when_built_and_never_mixed_with_keywords() -> None:
    assert CompareOptions().threshold == DEFAULT_THRESHOLD
    with pytest.raises(InputError, match="--threshold / threshold must be"):
        CompareOptions(threshold=-0.1)
    with pytest.raises(InputError, match="--resamples / n_resamples must be an integer >= 100"):
        CompareOptions(n_resamples=0)
    with pytest.raises(InputError, match="--correction / correction must be one of holm, "):
        CompareOptions(correction="sidak")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword argument 'seed'"):
        compare_tables(_run(), conditions=("none", "preloaded"), options=CompareOptions(), seed=1)
    frozen = CompareOptions()
    with pytest.raises(ValidationError, match="frozen"):
        frozen.threshold = 0.2  # type: ignore[misc]


THRESHOLD_RULE = r"--threshold / threshold must be a number in \[0, 1\]"


def test_one_range_rule_for_the_threshold() -> None:
    assert check_threshold(None) == 0.05
    assert check_threshold(1) == 1.0 and check_threshold(0) == 0.0
    for bad in (-0.01, 1.5, float("nan"), "x"):
        with pytest.raises(InputError, match=THRESHOLD_RULE):
            check_threshold(bad)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=THRESHOLD_RULE):
        compare_tables(_run(), conditions=("none", "preloaded"),
                       options=CompareOptions(threshold=2.0))
    with pytest.raises(InputError, match=THRESHOLD_RULE):
        required_cases(0.1, threshold=2.0)


def test_power_functions_with_a_design_equal_the_flat_keywords() -> None:
    flat = {"baseline_rate": 0.3, "correlation": 0.4, "alpha": 0.1, "power": 0.9}
    design = PowerDesign(**flat)
    assert minimum_detectable_effect(80, 3, design=design).alpha == 0.1
    assert required_cases(0.15, 3, design=design).baseline_rate == 0.3
    assert required_trials(0.2, 300, design=design).correlation == 0.4
    assert design.var_between == pytest.approx(0.3 * 0.7 / 5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'alpha'"):
        required_cases(0.15, 3, design=design, alpha=0.2)  # type: ignore[call-arg]
    with pytest.raises(InputError, match="`correlation`"):
        PowerDesign(correlation=2.0)


def test_a_design_from_components_equals_the_components_keyword() -> None:
    components = estimate_variance_components(_run(seed=11)[lambda d: d["condition"] == "none"])
    design = PowerDesign.from_components(components, power=0.9)
    assert required_cases(0.2, 3, design=design) == required_cases(
        0.2, 3, design=PowerDesign.from_components(components, power=0.9)
    )


def test_simulate_sequential_takes_an_adaptive_design_or_fixed_trials() -> None:
    design = AdaptiveTrials(total_trials=3)
    settings = {"max_cases": 120, "round_cases": 10, "n_sims": 15, "seed": 4}
    adaptive = simulate_sequential(  # type: ignore[call-overload]
        0.2, adaptive=design, concentration=AGENT_CONCENTRATION, **settings
    )
    fixed = simulate_sequential(0.2, 3, concentration=AGENT_CONCENTRATION, **settings)  # type: ignore[call-overload]
    assert adaptive.design is not None and adaptive.design["total_trials"] == 3
    assert 0.0 < adaptive.stage_two_share < 1.0  # some cases stop after their first trial
    assert adaptive.expected_items < 3 * 2 * fixed.expected_cases * 1.5
    with pytest.raises(InputError, match="total_trials"):
        simulate_sequential(0.2, 5, adaptive=design)
