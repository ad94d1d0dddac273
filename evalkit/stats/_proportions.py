"""Intervals for proportions and per-group pass rates."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import special

from evalkit._settings import CONFIDENCE
from evalkit.errors import InputError
from evalkit.stats._frame import as_frame, check_choice
from evalkit.stats._interval import Interval
from evalkit.stats._means import t_interval

#: Accepted ``method`` values of :func:`proportion_ci` and the statsmodels name of each.
PROPORTION_METHODS = {
    "wilson": "wilson",
    "clopper-pearson": "beta",
    "beta": "beta",
    "jeffreys": "jeffreys",
}
PASS_RATE_METHODS = ("auto", "wilson", "cluster")


def wilson_bounds(count: float, nobs: float, alpha: float) -> tuple[float, float]:
    """Wilson's two-sided interval, as statsmodels' ``proportion_confint(method="wilson")``.

    The same operations in the same order on the same float64 types (its critical value
    ``norm.isf(alpha / 2)`` is ``-ndtri(alpha / 2)``), so the bounds are statsmodels' own to the
    last bit (tests compare them); written out because importing
    ``statsmodels.stats.proportion`` imports ``scipy.stats``, which would cost every
    ``evalkit run`` more than a second before its summary table.

    Args:
        count: Successes (may be fractional, e.g. an effective count).
        nobs: Trials (> 0).
        alpha: One minus the confidence level.

    Returns:
        ``(low, high)``, clipped to [0, 1].

    Examples:
        >>> [round(b, 3) for b in wilson_bounds(8, 10, 0.05)]
        [0.49, 0.943]
    """
    n = np.asarray(nobs, dtype=np.float64)  # 0-d arrays, as statsmodels holds them
    q = np.asarray(count, dtype=np.float64) / n
    crit = -special.ndtri(alpha / 2.0)
    crit2 = crit**2
    denom = 1 + crit2 / n
    center = (q + crit2 / (2 * n)) / denom
    dist = crit * np.sqrt(q * (1.0 - q) / n + crit2 / (4.0 * n**2))
    dist /= denom
    return float(np.clip(center - dist, 0, 1)), float(np.clip(center + dist, 0, 1))


def proportion_ci(
    successes: float, n: float, confidence: float = CONFIDENCE.default, method: str = "wilson"
) -> Interval:
    """Confidence interval for a binomial proportion (statsmodels ``proportion_confint``).

    Wilson is the default: it behaves well at small n and near 0 % / 100 % (Brown, Cai &
    DasGupta 2001). ``"clopper-pearson"`` (alias ``"beta"``) is the exact, conservative
    interval; ``"jeffreys"`` is the equal-tailed Beta(1/2, 1/2) posterior interval with Brown et
    al.'s boundary fix (lower bound 0 when ``successes == 0``, upper bound 1 when
    ``successes == n``). With ``n == 0`` nothing is known: the estimate is NaN and the interval
    is (0, 1).

    Args:
        successes: Number of successes, ``0 <= successes <= n`` (may be fractional, e.g. an
            effective count).
        n: Number of trials (``>= 0``).
        confidence: Confidence level.
        method: ``"wilson"``, ``"clopper-pearson"`` / ``"beta"`` or ``"jeffreys"``.

    Returns:
        ``Interval(estimate, ci_low, ci_high, confidence, method)`` with bounds in [0, 1].

    Raises:
        InputError: Counts out of range, bad confidence or unknown method.

    Examples:
        >>> ci = proportion_ci(8, 10)
        >>> round(ci.estimate, 2), round(ci.ci_low, 3), round(ci.ci_high, 3), ci.method
        (0.8, 0.49, 0.943, 'wilson')
        >>> proportion_ci(0, 0).ci_low, proportion_ci(0, 0).ci_high
        (0.0, 1.0)
    """
    level = CONFIDENCE.check(confidence)
    check_choice("method", method, PROPORTION_METHODS)
    label = "clopper-pearson" if method == "beta" else method
    try:
        x, m = float(successes), float(n)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"`successes` and `n` must be numbers, but {successes!r} and {n!r} were passed."
        ) from exc
    if not (math.isfinite(x) and math.isfinite(m)) or m < 0 or x < 0 or x > m:
        raise InputError(
            f"proportion_ci needs 0 <= successes <= n, but successes={successes!r} and "
            f"n={n!r} were passed."
        )
    if m == 0:
        return Interval(float("nan"), 0.0, 1.0, level, label)
    if method == "wilson":
        low, high = wilson_bounds(x, m, 1.0 - level)
    else:  # Clopper-Pearson and Jeffreys: beta quantiles of scipy.stats, imported on use
        from statsmodels.stats.proportion import proportion_confint

        low, high = proportion_confint(x, m, alpha=1.0 - level, method=PROPORTION_METHODS[method])
    estimate = x / m
    low, high = float(low), float(high)
    if method == "jeffreys":
        low = 0.0 if x == 0 else low
        high = 1.0 if x == m else high
    low = min(max(low, 0.0), estimate)
    high = max(min(high, 1.0), estimate)
    return Interval(estimate, low, high, level, label)


def cluster_wilson(
    unit_means: np.ndarray, n_obs: int, confidence: float, *, small_sample: bool = False
) -> Interval:
    """Wilson interval with a design-effect-adjusted (effective) sample size.

    The estimate is the mean of the unit (case) means. Its clustered variance is
    ``var(unit means) / C`` (for equal cluster sizes this is exactly Miller's eq. 4 with the
    C/(C-1) correction). The effective sample size ``n_eff = p(1-p) / var`` (Kish's design
    effect; Korn & Graubard 1998 use the same device with Clopper-Pearson) is capped at the number
    of observations, and set to the number of units when ``p`` is 0 or 1 or there is a single
    unit (where the variance says nothing). The Wilson interval of ``p`` at ``n_eff`` then stays
    inside [0, 1] and is sane at 0 % and 100 %.

    With ``small_sample=True`` the effective sample size is further multiplied by
    ``(C - 1) / C`` (C = number of units), the same few-cluster correction as Hesterberg's
    expanded bootstrap interval. Measured (4,000 simulations, Beta case rates, 3 trials):
    with rare passes (mean 0.09) and 20 cases the plain version covers 90.4-95.0 % at
    nominal 95 % (lowest for strongly clustered cases), the corrected one 96.9-97.3 %; at 100
    cases both cover about 95 %.

    Args:
        unit_means: Per-unit mean of a 0/1 outcome.
        n_obs: Total number of observations over all units.
        confidence: Confidence level.
        small_sample: Apply the ``(C - 1) / C`` few-cluster correction.

    Returns:
        ``Interval`` with method ``"cluster-wilson"``.
    """
    units = len(unit_means)
    if units == 0:
        return Interval(float("nan"), 0.0, 1.0, confidence, "cluster-wilson")
    p = float(np.mean(unit_means))
    p = min(max(p, 0.0), 1.0)
    if units < 2 or p <= 0.0 or p >= 1.0:
        n_eff = float(units)
    else:
        variance = float(np.var(unit_means, ddof=1)) / units
        n_eff = _kish_size(p, variance, float(n_obs))
    if small_sample and units >= 2:
        n_eff *= (units - 1) / units
    return _wilson_at(p, n_eff, confidence)


def ratio_wilson(
    num: np.ndarray, den: np.ndarray, confidence: float, *, small_sample: bool = True
) -> Interval:
    """Clustered Wilson interval of a share ``sum(num) / sum(den)`` over cases.

    The share of events among per-case opportunities (unlocked cases among cases failing
    without the skill, correct triggers among triggers, ...). Its variance is the ratio
    estimator's clustered one, ``C/(C-1) * sum((num_i - p den_i)^2) / sum(den)^2`` over the
    ``C`` cases with ``den_i > 0``; the Wilson interval is then taken at the effective sample
    size ``p(1-p) / variance`` (capped at ``sum(den)``), as in :func:`cluster_wilson`. Where the
    variance says nothing (a share of 0 or 1, or one case), the effective size is the number of
    cases, so 4 of 4 cases gets Wilson's [0.51, 1] and never a zero-width interval. A
    percentile bootstrap cannot do this: every replicate of 4 of 4 is 1.

    Args:
        num: Per-case numerators (events).
        den: Per-case denominators (opportunities; 0 where the case does not count).
        confidence: Confidence level.
        small_sample: Apply the ``(C - 1) / C`` few-cluster correction of
            :func:`cluster_wilson` to the variance-based effective size.

    Returns:
        ``Interval`` with method ``"cluster-wilson"`` (NaN estimate and bounds when no case
        counts).

    Examples:
        >>> import numpy as np
        >>> ci = ratio_wilson(np.ones(4), np.ones(4), 0.95)
        >>> round(ci.estimate, 2), round(ci.ci_low, 2), ci.ci_high
        (1.0, 0.51, 1.0)
    """
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    counted = den > 0
    units = int(counted.sum())
    total = float(den[counted].sum())
    if units == 0 or total <= 0:
        nan = float("nan")
        return Interval(nan, nan, nan, confidence, "cluster-wilson")
    p = min(max(float(num[counted].sum()) / total, 0.0), 1.0)
    if units < 2 or p <= 0.0 or p >= 1.0:
        n_eff = float(units)
    else:
        residual = num[counted] - p * den[counted]
        variance = units / (units - 1) * float(np.sum(residual**2)) / total**2
        n_eff = _kish_size(p, variance, total)
        if small_sample:
            n_eff *= (units - 1) / units
    return _wilson_at(p, n_eff, confidence)


def _kish_size(p: float, variance: float, cap: float) -> float:
    """Kish's effective sample size ``p (1 - p) / variance``, capped at ``cap``, at least 1."""
    return max(cap if variance <= 0.0 else min(cap, p * (1.0 - p) / variance), 1.0)


def _wilson_at(p: float, n_eff: float, confidence: float) -> Interval:
    """The Wilson interval of ``p`` at ``n_eff`` observations, kept in [0, 1] around ``p``."""
    low, high = wilson_bounds(p * n_eff, n_eff, 1.0 - confidence)
    low = min(max(float(low), 0.0), p)
    high = max(min(float(high), 1.0), p)
    return Interval(p, low, high, confidence, "cluster-wilson")


def pass_rates(
    data: pd.DataFrame,
    by: Sequence[str] = ("condition",),
    units: str = "case_id",
    value: str = "passed",
    confidence: float = CONFIDENCE.default,
    method: str = "auto",
) -> pd.DataFrame:
    """Pass rate (or mean score) per group, with a confidence interval.

    The estimate of a group is the mean over its units (cases) of the per-unit mean, so a
    case with more trials does not weigh more (``docs/architecture.md``, "Metrics and verdicts").

    Interval choice (``method="auto"``): when every case of a group has exactly one trial, the
    Wilson interval on the pooled counts (``"wilson"``); when cases have several trials, their
    trials are correlated, so the interval is a Wilson interval at the design-effect-adjusted
    effective sample size derived from the clustered standard error (``"cluster-wilson"``, see
    :func:`cluster_wilson`). ``method="wilson"`` forces the pooled Wilson interval (it treats
    every row as independent, which understates the width when cases have several trials);
    ``method="cluster"`` forces the clustered one. A non-boolean ``value`` (e.g. ``"score"``)
    gets a t interval on the per-unit means (``"cluster-t"``), clipped to [0, 1] when every
    value lies there.

    Rows with status ``"skipped"`` are excluded; ``"error"``/``"timeout"`` rows count as
    failures.

    Args:
        data: Tidy results (DataFrame).
        by: Group columns (may be empty for one overall row).
        units: The clustering unit, normally ``"case_id"``.
        value: ``"passed"`` (boolean) or a numeric column such as ``"score"``.
        confidence: Confidence level.
        method: ``"auto"``, ``"wilson"`` or ``"cluster"`` (see above).

    Returns:
        DataFrame, one row per group: the ``by`` columns, then ``n_cases`` (units), ``n``
        (rows), ``estimate``, ``ci_low``, ``ci_high``, ``confidence``, ``method``.

    Raises:
        InputError: Missing columns, invalid values or unknown method.

    Examples:
        >>> df = pd.DataFrame({
        ...     "case_id": ["a", "b", "c", "d"] * 2,
        ...     "condition": ["none"] * 4 + ["preloaded"] * 4,
        ...     "passed": [True, False, False, True, True, True, True, False],
        ... })
        >>> table = pass_rates(df)
        >>> table[["condition", "n_cases", "estimate", "method"]]
           condition  n_cases  estimate  method
        0       none        4      0.50  wilson
        1  preloaded        4      0.75  wilson
    """
    level = CONFIDENCE.check(confidence)
    check_choice("method", method, PASS_RATE_METHODS)
    by = [by] if isinstance(by, str) else list(by)
    required = list(dict.fromkeys([*by, units]))
    df = as_frame(data, value=value, required=required)
    binary = value == "passed"
    if method == "wilson" and not binary:
        raise InputError(
            f"method='wilson' needs a boolean value column, but `{value}` is numeric; "
            "use method='auto' or 'cluster'."
        )
    unit_table = (
        df.groupby([*by, units], sort=True, dropna=False)[value]
        .agg(["mean", "size", "sum"])
        .reset_index()
    )
    rows: list[dict[str, object]] = []
    groups = unit_table.groupby(by, sort=True, dropna=False) if by else [((), unit_table)]
    for key, group in groups:
        keys = key if isinstance(key, tuple) else (key,)
        means = group["mean"].to_numpy(dtype=float)
        sizes = group["size"].to_numpy(dtype=int)
        n_obs = int(sizes.sum())
        if binary and (method == "wilson" or (method == "auto" and sizes.max() == 1)):
            estimate = float(means.mean())
            ci = proportion_ci(estimate * n_obs, n_obs, level, "wilson")
        elif binary:
            ci = cluster_wilson(means, n_obs, level)
        else:
            ci = t_interval(means, level, "cluster-t")
            if np.all((means >= 0.0) & (means <= 1.0)):  # scores live in [0, 1]
                ci = ci._replace(ci_low=max(ci.ci_low, 0.0), ci_high=min(ci.ci_high, 1.0))
        row: dict[str, object] = dict(zip(by, keys, strict=True))
        row.update(
            n_cases=len(means),
            n=n_obs,
            estimate=ci.estimate,
            ci_low=ci.ci_low,
            ci_high=ci.ci_high,
            confidence=level,
            method=ci.method,
        )
        rows.append(row)
    columns = [*by, "n_cases", "n", "estimate", "ci_low", "ci_high", "confidence", "method"]
    return pd.DataFrame(rows, columns=columns)
