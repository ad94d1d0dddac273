"""Does the skill help some providers more than others? (condition x provider interaction).

Every provider of a leaderboard-shaped run answers the same cases, so the per-provider
deltas are not independent studies: a hard case pulls every provider's delta the same way.
A meta-analysis that treats them as independent (DerSimonian-Laird on the per-provider
estimates) mistakes that shared case noise for precision and under-states the between-provider
variance. evalkit blocks on the case instead: the per-(case, provider) paired differences
``d[c, p]`` (candidate rate minus baseline rate, trials averaged, conditions averaged when
several) are fitted with the two-way model ``d ~ C(provider) + C(case)`` (statsmodels OLS),
and

- the **interaction test** is the F test of the provider term (``anova_lm``, type II): "the
  skill's effect is the same for every provider", with case effects removed;
- the **between-provider variance** ``tau2`` is its method-of-moments estimate,
  ``max(0, (MS_provider - MS_residual) / n_cases)`` (the expected provider mean square is
  ``sigma2 + n_cases * tau2`` in a balanced layout);
- ``I2 = tau2 / (tau2 + MS_residual / n_cases)``, the share of the spread of the provider
  deltas that is real rather than noise (``(F - 1) / F`` when ``F > 1``);
- the **prediction interval** for a new provider is the pooled (case-clustered) estimate
  ``+- t(k - 1) * sqrt(tau2 + se_pooled^2)`` (Higgins, Thompson & Spiegelhalter 2009, with
  the clustered standard error of the pool in place of the meta-analytic one).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from evalkit.stats._interval import json_float

#: Fewest providers with which a between-provider variance is estimated.
MIN_PROVIDERS = 2


@dataclass(frozen=True)
class Heterogeneity:
    """How much the effect of the candidate differs between providers.

    Attributes:
        n_providers: Providers compared.
        n_cases: Cases shared by the model (cases with at least two providers).
        f_statistic: F statistic of the provider term (case-blocked), NaN when undefined.
        df_num: Numerator degrees of freedom (providers - 1).
        df_den: Residual degrees of freedom.
        pvalue: p-value of the interaction test (NaN when undefined).
        tau2: Between-provider variance of the true deltas (method of moments, >= 0).
        i2: Share of the between-provider spread that is not noise (0..1).
        estimate: The pooled delta the prediction interval is centred on.
        pi_low: Lower bound of the prediction interval for a new provider.
        pi_high: Upper bound.
        confidence: Level of the prediction interval and of the test.
        method: How the figures were computed.
    """

    n_providers: int
    n_cases: int
    f_statistic: float
    df_num: int
    df_den: int
    pvalue: float
    tau2: float
    i2: float
    estimate: float
    pi_low: float
    pi_high: float
    confidence: float
    method: str = "two-way OLS d ~ C(provider) + C(case), F test (statsmodels)"

    @property
    def differs(self) -> bool:
        """Whether the interaction test rejects at ``1 - confidence``."""
        return bool(np.isfinite(self.pvalue) and self.pvalue <= 1.0 - self.confidence)

    def line(self) -> str:
        """One line for the compare text."""
        if not np.isfinite(self.pvalue):
            return (
                f"providers: {self.n_providers}; no test of whether the effect differs "
                "between them (too few shared cases, or no case-to-case variation left)"
            )
        said = "differs between providers" if self.differs else "no evidence it differs"
        level = round(self.confidence * 100)
        return (
            f"providers: effect {said} (interaction F({self.df_num}, {self.df_den}) = "
            f"{self.f_statistic:.2f}, p = {self.pvalue:.3g}); tau = {np.sqrt(self.tau2):.3f}, "
            f"I2 = {self.i2 * 100:.0f} %; a new provider: {self.pi_low:+.3f} to "
            f"{self.pi_high:+.3f} ({level} % prediction interval)"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON object (undefined numbers are None)."""
        return {
            "n_providers": int(self.n_providers),
            "n_cases": int(self.n_cases),
            "interaction": {
                "f_statistic": json_float(self.f_statistic),
                "df_num": int(self.df_num),
                "df_den": int(self.df_den),
                "pvalue": json_float(self.pvalue),
            },
            "tau2": json_float(self.tau2),
            "i2": json_float(self.i2),
            "prediction_interval": {
                "estimate": json_float(self.estimate),
                "low": json_float(self.pi_low),
                "high": json_float(self.pi_high),
            },
            "confidence": float(self.confidence),
            "method": self.method,
            "line": self.line(),
        }


def heterogeneity(
    cases: pd.DataFrame,
    *,
    clusters: Sequence[str] = ("case_id",),
    estimate: float,
    se: float,
    confidence: float = 0.95,
) -> Heterogeneity:
    """Interaction test, ``tau2``, ``I2`` and prediction interval across providers.

    Args:
        cases: Per-unit table of a comparison (:func:`evalkit.stats._paired.case_table`) with
            a ``provider`` column and the ``clusters`` columns; ``baseline_rate`` and
            ``candidate_rate`` per unit (several conditions of a (case, provider) are averaged).
        clusters: The columns that name a case.
        estimate: The pooled, case-clustered delta (centre of the prediction interval).
        se: Its clustered standard error.
        confidence: Level of the prediction interval; the test rejects at ``1 - confidence``.

    Returns:
        The :class:`Heterogeneity`.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> grid = pd.MultiIndex.from_product([range(30), list("abc")],
        ...                                   names=["case_id", "provider"]).to_frame(False)
        >>> grid["baseline_rate"] = 0.3
        >>> grid["candidate_rate"] = 0.3 + np.where(grid["provider"] == "c", 0.4, 0.0)
        >>> grid["candidate_rate"] += rng.normal(0, 0.05, len(grid))
        >>> result = heterogeneity(grid, estimate=0.13, se=0.01)
        >>> result.differs, result.i2 > 0.9
        (True, True)
    """
    keys = [*clusters, "provider"]
    diffs = (
        cases.assign(d=cases["candidate_rate"] - cases["baseline_rate"])
        .groupby(keys, sort=True)["d"]
        .mean()
        .reset_index()
    )
    diffs = diffs[np.isfinite(diffs["d"])]
    case_key = diffs.groupby(list(clusters), sort=False).ngroup()  # one integer per case
    shared = case_key.map(case_key.value_counts()) >= MIN_PROVIDERS
    diffs, case_key = diffs[shared], case_key[shared]
    providers = int(diffs["provider"].nunique())
    n_cases = int(case_key.nunique())
    nan = float("nan")
    f_stat = pvalue = tau2 = i2 = nan
    df_num = max(providers - 1, 0)
    df_den = len(diffs) - providers - n_cases + 1
    if providers >= MIN_PROVIDERS and n_cases >= 2 and df_den >= 1:
        f_stat, pvalue, ms_provider, ms_resid = _provider_f_test(diffs["d"], diffs["provider"],
                                                                  case_key)
        per_provider = len(diffs) / providers
        tau2 = max(0.0, (ms_provider - ms_resid) * providers / len(diffs))
        within = ms_resid / per_provider
        i2 = tau2 / (tau2 + within) if tau2 + within > 0 else 0.0
    if np.isfinite(tau2) and np.isfinite(se) and providers >= MIN_PROVIDERS:
        t = float(stats.t.ppf(0.5 + confidence / 2.0, providers - 1))
        half = t * float(np.sqrt(tau2 + se**2))
        low, high = estimate - half, estimate + half
    else:
        low = high = nan
    return Heterogeneity(
        n_providers=providers,
        n_cases=n_cases,
        f_statistic=float(f_stat),
        df_num=int(df_num),
        df_den=int(max(df_den, 0)),
        pvalue=float(pvalue),
        tau2=float(tau2),
        i2=float(i2),
        estimate=float(estimate),
        pi_low=float(low),
        pi_high=float(high),
        confidence=float(confidence),
    )


def _provider_f_test(
    d: pd.Series, provider: pd.Series, case: pd.Series
) -> tuple[float, float, float, float]:
    """Type II F test of the provider term in ``d ~ C(provider) + C(case)`` (statsmodels).

    Returns:
        ``(F, p, MS_provider, MS_residual)``; F and p are NaN when the residual variance is 0.
    """
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm
    from statsmodels.tools.sm_exceptions import ValueWarning

    frame = pd.DataFrame(
        {"d": d.to_numpy(dtype=float), "provider": provider.to_numpy(), "case": case.to_numpy()}
    )
    fit = ols("d ~ C(provider) + C(case)", data=frame).fit()
    ms_resid = float(fit.mse_resid)
    if not ms_resid > 1e-12:  # every difference explained (e.g. all zero): no test
        return float("nan"), float("nan"), 0.0, max(ms_resid, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", ValueWarning)
        table = anova_lm(fit, typ=2)
    row = table.loc["C(provider)"]
    ms_provider = float(row["sum_sq"] / row["df"])
    return float(row["F"]), float(row["PR(>F)"]), ms_provider, ms_resid
