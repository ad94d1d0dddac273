"""Does the skill help some providers more than others? (condition x provider interaction).

Every provider of a leaderboard-shaped run answers the same cases, so the per-provider
deltas are not independent studies: a hard case pulls every provider's delta the same way.
A meta-analysis that treats them as independent (DerSimonian-Laird on the per-provider
estimates) mistakes that shared case noise for precision and under-states the between-provider
variance. evalkit blocks on the case instead: the per-(case, provider) paired differences
``d[c, p]`` (candidate rate minus baseline rate, trials averaged, conditions averaged when
several) are fitted with the two-way model ``d ~ C(provider) + C(case)`` (the case term
absorbed by demeaning within case, which gives the numbers of statsmodels' OLS on the dense
design in time linear in the cases), and

- the **interaction test** is the F test of the provider term (``anova_lm``, type II): "the
  skill's effect is the same for every provider", with case effects removed;
- the **between-provider variance** ``tau2`` is its method-of-moments estimate,
  ``max(0, (MS_provider - MS_residual) / n_cases)`` (the expected provider mean square is
  ``sigma2 + n_cases * tau2`` in a balanced layout);
- ``I2 = tau2 / (tau2 + MS_residual / n_cases)``, the share of the spread of the provider
  deltas that is real rather than noise (``(F - 1) / F`` when ``F > 1``);
- the **prediction interval** for a new provider is the pooled (case-clustered) estimate
  ``+- t(k - 1) * sqrt(tau2 + se_pooled^2)`` (Higgins, Thompson & Spiegelhalter 2009, with
  the clustered standard error of the pool in place of the meta-analytic one). It is shown
  from :data:`MIN_PREDICTION_PROVIDERS` providers on; below, the JSON keeps it with
  ``"shown": false`` and a note, and the text says why it is withheld.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from evalkit._percent import percent
from evalkit._settings import CONFIDENCE
from evalkit.stats._fixed_effects import FTest, nested_f_test, treatment_columns, within_fit
from evalkit.stats._interval import json_float

#: Fewest providers with which a between-provider variance is estimated.
MIN_PROVIDERS = 2

#: Fewest providers with which the prediction interval for a new provider is shown. Below it
#: the interval rests on ``t(k - 1)`` (12.7 at two providers, 4.3 at three) and on a ``tau2``
#: estimated from a handful of deltas: it is kept in the JSON, flagged, and withheld from text.
MIN_PREDICTION_PROVIDERS = 5


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
    method: str = "two-way OLS d ~ C(provider) + C(case), case absorbed (within), type II F test"

    @property
    def prediction_shown(self) -> bool:
        """Whether the prediction interval rests on enough providers to be shown."""
        return bool(
            self.n_providers >= MIN_PREDICTION_PROVIDERS and np.isfinite(self.pi_low)
        )

    @property
    def prediction_note(self) -> str:
        """Why the prediction interval is withheld ("" when it is shown)."""
        if self.prediction_shown or not np.isfinite(self.pi_low):
            return ""
        return (
            f"no prediction interval for a new provider from {self.n_providers} providers "
            f"(it needs at least {MIN_PREDICTION_PROVIDERS}: with fewer, t({self.n_providers - 1})"
            " and a spread estimated from so few deltas make it wider than anything it could "
            "rule out)"
        )

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
        said = (
            "the effect differs between providers"
            if self.differs
            else "no evidence the effect differs"
        )
        level = round(self.confidence * 100)
        text = (
            f"providers: {said} (interaction F({self.df_num}, {self.df_den}) = "
            f"{self.f_statistic:.2f}, p = {self.pvalue:.3g}); between-provider sd of the "
            f"effect tau = {np.sqrt(self.tau2) * 100:.1f} pp, I2 = {self.i2 * 100:.0f} %"
        )
        if self.prediction_shown:
            return (
                f"{text}; a new provider: {percent(self.pi_low):+.1f} to "
                f"{percent(self.pi_high):+.1f}"
                f" pp ({level} % prediction interval)"
            )
        return f"{text}; {self.prediction_note}" if self.prediction_note else text

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
                "shown": self.prediction_shown,
                "note": self.prediction_note,
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
    confidence: float = CONFIDENCE.default,
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
    d, provider, case_key = _unit_differences(cases, list(clusters))
    shared = np.bincount(case_key)[case_key] >= MIN_PROVIDERS
    d, provider, case_key = d[shared], provider[shared], case_key[shared]
    providers = len(pd.unique(provider))
    n_cases = len(np.unique(case_key))
    nan = float("nan")
    f_stat = pvalue = tau2 = i2 = nan
    df_num = max(providers - 1, 0)
    df_den = len(d) - providers - n_cases + 1
    if providers >= MIN_PROVIDERS and n_cases >= 2 and df_den >= 1:
        test = _provider_f_test(d, provider, case_key)
        f_stat, pvalue, df_num, df_den = test.f_statistic, test.pvalue, test.df_num, test.df_den
        ms_resid = max(test.ms_resid, 0.0)
        ms_provider = test.sum_sq / df_num if df_num >= 1 else 0.0
        per_provider = len(d) / providers
        tau2 = max(0.0, (ms_provider - ms_resid) * providers / len(d))
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


def _unit_differences(
    cases: pd.DataFrame, clusters: list[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The finite paired differences per (case, provider), in sorted (case, provider) order.

    Args:
        cases: The per-unit table (``baseline_rate``, ``candidate_rate``, the keys).
        clusters: The columns that name a case.

    Returns:
        ``(d, provider, case_key)``: each (case, provider)'s mean difference over its rows,
        its provider, and its case as an integer numbering the cases in sorted order.
    """
    keys = [*clusters, "provider"]
    diffs = (
        cases.assign(d=cases["candidate_rate"] - cases["baseline_rate"])
        .groupby(keys, sort=True)["d"]
        .mean()
        .reset_index()
    )
    diffs = diffs[np.isfinite(diffs["d"])]
    case_key = diffs.groupby(clusters, sort=False).ngroup()  # one integer per case
    return (
        diffs["d"].to_numpy(dtype=float),
        diffs["provider"].to_numpy(),
        case_key.to_numpy(dtype=np.intp),
    )


def _provider_f_test(d: np.ndarray, provider: np.ndarray, case: np.ndarray) -> FTest:
    """Type II F test of the provider term in ``d ~ C(provider) + C(case)``, in linear time.

    The case term is absorbed by the within transformation (:mod:`._fixed_effects`): the
    differences and the treatment-coded provider columns are demeaned within each case, so
    no case dummy is built. The F test of the provider term is that of the demeaned provider
    columns against the case means alone: for a design of full rank, the numbers
    statsmodels' ``anova_lm(fit, typ=2)`` gives for the provider term of the dense formula
    fit (no term contains it); when the providers fall into groups that share no case (so
    only contrasts within a group are estimable), the nested test of statsmodels'
    ``compare_f_test``, on the rank the providers add. The tests check both to 1e-9.

    Returns:
        The :class:`~evalkit.stats._fixed_effects.FTest`; F and p are NaN when the residual
        variance is 0 (every difference explained, e.g. all equal).
    """
    test = nested_f_test(within_fit(d, case), within_fit(d, case, treatment_columns(provider)))
    if not test.ms_resid > 1e-12:  # every difference explained: no test
        return test._replace(f_statistic=float("nan"), pvalue=float("nan"), sum_sq=0.0)
    return test
