"""The power functions take their design as one object: a flat design keyword is refused."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from evalkit.stats import (
    PowerDesign,
    PowerResult,
    minimum_detectable_effect,
    required_cases,
    required_trials,
)


@pytest.mark.parametrize(
    ("function", "first"),
    [(minimum_detectable_effect, 100), (required_cases, 0.1), (required_trials, 0.1)],
)
def test_an_unknown_keyword_is_a_type_error_naming_it(
    function: Callable[..., PowerResult], first: float
) -> None:
    unknown = rf"{function.__name__}\(\) got an unexpected keyword argument 'baseline'"
    with pytest.raises(TypeError, match=unknown):
        function(first, 3, baseline=0.4)
    with pytest.raises(TypeError, match=unknown):
        function(first, 3, design=PowerDesign(), baseline=0.4)


def test_each_function_reads_every_input_of_its_design() -> None:
    """The design object is the one way in: every input it holds reaches the result."""
    given = {"baseline_rate": 0.3, "var_between": 0.03, "var_within": 0.15,
             "correlation": 0.2, "alpha": 0.1, "power": 0.9, "method": "normal"}
    design = PowerDesign(**given)
    for found in (minimum_detectable_effect(80, 2, design=design),
                  required_cases(0.12, 2, design=design),
                  required_trials(0.12, 300, design=design)):
        assert (found.baseline_rate, found.var_between, found.var_within, found.correlation) == (
            0.3, 0.03, 0.15, 0.2)
        assert (found.alpha, found.method) == (0.1, "normal")
    assert required_cases(0.12, 2, design=design) != required_cases(0.12, 2)


@pytest.mark.parametrize(
    ("function", "first"),
    [(minimum_detectable_effect, 100), (required_cases, 0.1), (required_trials, 0.1)],
)
def test_a_design_input_as_a_flat_keyword_is_a_type_error(
    function: Callable[..., PowerResult], first: float
) -> None:
    """Below ``evalkit.power``, the statistics take the design object alone."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'power'"):
        function(first, 3, power=0.9)
