"""The reasons' membership lookup agrees with pandas' ``isin`` on Arrow and object columns."""

from __future__ import annotations

import pandas as pd
import pytest

from evalkit.results._reasons import _isin


@pytest.mark.parametrize("dtype", ["str", "string[pyarrow]", object])
@pytest.mark.parametrize(
    "values", [{"b", "d"}, ["a", "zz"], [], ("b", "b", "c")],
    ids=["set", "one-absent", "empty", "repeated"],
)
def test_membership_is_what_pandas_isin_says(dtype: object, values: tuple[str, ...]) -> None:
    """Strings looked up in strings, a missing cell matching nothing."""
    series = pd.Series(["a", "b", None, "c", "b", "d"], index=[5, 4, 3, 2, 1, 0], dtype=dtype)
    found = _isin(series, values)
    assert found.dtype == bool
    assert found.index.tolist() == series.index.tolist()
    assert found.tolist() == series.isin(list(values)).tolist()
    assert not found[3]


@pytest.mark.parametrize("dtype", ["str", object])
def test_values_that_are_not_all_strings_are_looked_up_as_objects(dtype: object) -> None:
    series = pd.Series(["1", "b", None], dtype=dtype)
    assert _isin(series, [1, "b"]).tolist() == [False, True, False]
