"""Helpers shared by the evalkit.stats tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest


def matrix_to_frame(
    matrix: np.ndarray, condition: str = "x", prefix: str = "c", value: str = "passed"
) -> pd.DataFrame:
    """Tidy frame from a (cases x trials) matrix; NaN cells are absent trials."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    cases, trials = np.nonzero(np.isfinite(matrix))
    values = matrix[cases, trials]
    return pd.DataFrame(
        {
            "case_id": [f"{prefix}{i:03d}" for i in cases],
            "condition": condition,
            "trial": trials,
            value: values > 0.5 if value == "passed" else values,
        }
    )


@pytest.fixture
def to_frame() -> Callable[..., pd.DataFrame]:
    """The :func:`matrix_to_frame` helper as a fixture."""
    return matrix_to_frame
