"""Means: t intervals and clustered standard errors (Miller 2024, eq. 4)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import special

from evalkit._settings import CONFIDENCE
from evalkit.errors import InputError
from evalkit.stats._interval import Interval

ArrayLike = Sequence[float] | np.ndarray | pd.Series


def as_values(values: ArrayLike, name: str = "values") -> np.ndarray:
    """Return ``values`` as a 1-D float array, rejecting NaN and non-numbers.

    Args:
        values: Numbers (booleans count as 0/1).
        name: The argument name used in error messages.

    Returns:
        A float64 array.

    Raises:
        InputError: Not one-dimensional, not numeric, or holding NaN/inf.
    """
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"`{name}` must hold numbers, but {values!r} was passed.") from exc
    if array.ndim != 1:
        raise InputError(f"`{name}` must be one-dimensional, but has shape {array.shape}.")
    if not np.isfinite(array).all():
        raise InputError(f"`{name}` holds NaN or infinite values; drop or fill them first.")
    return array


def t_interval(values: np.ndarray, confidence: float, label: str = "t") -> Interval:
    """Student-t interval for the mean of ``values`` (no validation; internal).

    Args:
        values: Finite numbers.
        confidence: Confidence level.
        label: The method stored in the result.

    Returns:
        ``Interval``; bounds are NaN with fewer than two values.
    """
    n = len(values)
    if n == 0:
        return Interval(float("nan"), float("nan"), float("nan"), confidence, label)
    mean = float(np.mean(values))
    if n < 2:
        return Interval(mean, float("nan"), float("nan"), confidence, label)
    se = float(np.std(values, ddof=1)) / np.sqrt(n)
    half = float(special.stdtrit(n - 1, 0.5 + confidence / 2.0)) * se  # t.ppf, lighter
    low, high = float(min(mean - half, mean)), float(max(mean + half, mean))
    return Interval(mean, low, high, confidence, label)


def mean_ci(values: ArrayLike, confidence: float = CONFIDENCE.default) -> Interval:
    """Mean with a Student-t confidence interval (``n - 1`` degrees of freedom).

    Treats the values as independent. For several trials per case, average the trials
    within each case first, or use :func:`clustered_se` / :func:`cluster_bootstrap`.

    Args:
        values: Finite numbers.
        confidence: Confidence level.

    Returns:
        ``Interval(estimate, ci_low, ci_high, confidence, "t")``. With one value the bounds
        are NaN; with none the estimate is NaN too.

    Raises:
        InputError: Non-numeric, NaN or multi-dimensional values, or a bad confidence.

    Examples:
        >>> ci = mean_ci([0.2, 0.4, 0.6, 0.8])
        >>> round(ci.estimate, 2), round(ci.ci_low, 3), round(ci.ci_high, 3)
        (0.5, 0.089, 0.911)
    """
    level = CONFIDENCE.check(confidence)
    return t_interval(as_values(values), level, "t")


def clustered_se(values: ArrayLike, clusters: ArrayLike | Sequence[object]) -> float:
    """Clustered standard error of the mean of ``values`` (Miller 2024, eq. 4).

    ``SE = sqrt(C/(C-1) * sum_c (sum_{i in c} (s_i - mean))^2) / n`` with ``C`` clusters
    (cases) and ``n`` observations: the CLT variance plus the within-cluster covariance terms,
    with the usual small-sample factor C/(C-1). This equals statsmodels' cluster-robust
    standard error of an intercept-only OLS (``cov_type="cluster"``).

    Args:
        values: One value per observation (e.g. a trial's pass bit).
        clusters: The cluster (case) of each observation.

    Returns:
        The standard error; NaN with fewer than two clusters.

    Raises:
        InputError: Lengths differ, or invalid values.

    Examples:
        >>> round(clustered_se([1, 1, 0, 0, 1, 0], ["a", "a", "b", "b", "c", "c"]), 4)
        0.2887
    """
    x = as_values(values)
    groups = np.asarray(clusters, dtype=object)
    if groups.ndim != 1 or len(groups) != len(x):
        raise InputError(
            f"`clusters` must have one label per value ({len(x)}), but has shape {groups.shape}."
        )
    codes, uniques = pd.factorize(pd.Series(groups, dtype=object))
    n_clusters = len(uniques)
    if n_clusters < 2:
        return float("nan")
    residual = x - x.mean()
    sums = np.bincount(codes, weights=residual, minlength=n_clusters)
    variance = n_clusters / (n_clusters - 1) * float(np.sum(sums**2)) / len(x) ** 2
    return float(np.sqrt(variance))
