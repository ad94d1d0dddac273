"""The power functions' flat design keywords: one set, checked like a signature's own."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from evalkit.errors import InputError
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


def test_each_function_reads_every_design_keyword() -> None:
    given = {"baseline_rate": 0.3, "var_between": 0.03, "var_within": 0.15,
             "correlation": 0.2, "alpha": 0.1, "power": 0.9, "method": "normal"}
    design = PowerDesign(**given)
    cases = [
        (minimum_detectable_effect(80, 2, **given),
         minimum_detectable_effect(80, 2, design=design)),
        (required_cases(0.12, 2, **given), required_cases(0.12, 2, design=design)),
        (required_trials(0.12, 300, **given), required_trials(0.12, 300, design=design)),
    ]
    for flat, whole in cases:
        assert flat == whole
        assert (flat.baseline_rate, flat.var_between, flat.var_within, flat.correlation) == (
            0.3, 0.03, 0.15, 0.2)
        assert (flat.alpha, flat.method) == (0.1, "normal")


def test_a_keyword_beside_the_design_is_refused() -> None:
    with pytest.raises(InputError, match="`power` inside `design`"):
        required_cases(0.1, 3, design=PowerDesign(), power=0.9)
