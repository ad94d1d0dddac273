"""Bradley-Terry strengths of several variants from pairwise judgements (a statsmodels GLM).

Model: P(i beats j) = sigmoid(s_i - s_j), with the first variant (the reference) at s = 0. It
is fitted as a binomial GLM without intercept whose design row for a pair (i, j) holds +1 in
i's column and -1 in j's; a tie is an outcome of 0.5 (a binomial proportion), i.e. half a win
to each side. Standard errors are **cluster-robust by case** (``cov_type="cluster"``): the
pairs of one case share its difficulty, so treating them as independent would understate the
uncertainty. The ranking sorts strengths; each strength's interval is against the reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats

from evalkit._settings import CONFIDENCE
from evalkit.errors import InputError
from evalkit.stats._frame import records

BT_COLUMNS = ("case_id", "first", "second", "outcome")


@dataclass(frozen=True)
class BradleyTerry:
    """A Bradley-Terry fit.

    Attributes:
        reference: The variant whose strength is fixed at 0.
        strengths: One row per variant, strongest first: ``variant, strength, ci_low,
            ci_high, se, p_value`` (log-odds against the reference; the reference has 0 and
            no interval), then ``rank`` (1 the strongest) and ``win_probability``: the
            model's P(variant beats the reference).
        n_pairs: Judged pairs used.
        n_cases: Cases (the clusters of the standard errors).
        confidence: Level of the intervals.
        method: ``"bradley-terry-glm-cluster"``.
    """

    reference: str
    strengths: pd.DataFrame
    n_pairs: int
    n_cases: int
    confidence: float
    method: str = "bradley-terry-glm-cluster"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "reference": self.reference,
            "strengths": records(self.strengths),
            "n_pairs": self.n_pairs,
            "n_cases": self.n_cases,
            "confidence": self.confidence,
            "method": self.method,
        }


def bradley_terry(
    pairs: pd.DataFrame,
    *,
    reference: str | None = None,
    confidence: float = CONFIDENCE.default,
) -> BradleyTerry:
    """Fit Bradley-Terry strengths with case-clustered intervals.

    Args:
        pairs: One row per judged pair: ``case_id``, ``first`` and ``second`` (the two
            variants) and ``outcome`` (1 ``first`` won, 0.5 tie, 0 ``second`` won).
        reference: The variant fixed at strength 0 (default: the first in sorted order).
        confidence: Level of the intervals.

    Returns:
        :class:`BradleyTerry`.

    Raises:
        InputError: Missing columns, bad outcomes, fewer than two variants, an unknown
            reference, or variants that never meet (the strengths are not identified).
    """
    confidence = CONFIDENCE.check(confidence)
    missing = [c for c in BT_COLUMNS if c not in pairs.columns]
    if missing:
        raise InputError(f"the Bradley-Terry frame lacks column(s) {missing}")
    df = pairs.loc[:, list(BT_COLUMNS)].copy()
    df["outcome"] = pd.to_numeric(df["outcome"], errors="coerce")
    if df["outcome"].isna().any() or not df["outcome"].between(0, 1).all():
        raise InputError("column 'outcome' must hold numbers in [0, 1]")
    variants = sorted(set(df["first"].astype(str)) | set(df["second"].astype(str)))
    if len(variants) < 2:
        raise InputError(f"Bradley-Terry needs at least two variants, got {variants}")
    ref = variants[0] if reference is None else str(reference)
    if ref not in variants:
        raise InputError(f"reference {ref!r} is not one of the variants {variants}")
    others = [v for v in variants if v != ref]
    _check_connected(df, variants)
    exog = np.zeros((len(df), len(others)))
    column = {v: i for i, v in enumerate(others)}
    for row, (a, b) in enumerate(zip(df["first"].astype(str), df["second"].astype(str),
                                     strict=True)):
        if a in column:
            exog[row, column[a]] += 1.0
        if b in column:
            exog[row, column[b]] -= 1.0
    groups = pd.factorize(df["case_id"].astype(str))[0]
    n_cases = int(groups.max()) + 1
    model = sm.GLM(df["outcome"].to_numpy(dtype=float), exog, family=sm.families.Binomial())
    if n_cases >= 2:
        fit = model.fit(cov_type="cluster", cov_kwds={"groups": groups})
    else:
        fit = model.fit()
    params = np.asarray(fit.params, dtype=float)
    se = np.asarray(fit.bse, dtype=float)
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    rows = [
        {"variant": ref, "strength": 0.0, "ci_low": float("nan"), "ci_high": float("nan"),
         "se": float("nan"), "p_value": float("nan")}
    ]
    for i, v in enumerate(others):
        p_value = float(2 * stats.norm.sf(abs(params[i] / se[i]))) if se[i] > 0 else float("nan")
        rows.append({"variant": v, "strength": float(params[i]), "ci_low": params[i] - z * se[i],
                     "ci_high": params[i] + z * se[i], "se": float(se[i]), "p_value": p_value})
    table = pd.DataFrame(rows).sort_values("strength", ascending=False, kind="stable")
    table["rank"] = np.arange(1, len(table) + 1)
    table["win_probability"] = 1.0 / (1.0 + np.exp(-table["strength"].to_numpy(dtype=float)))
    return BradleyTerry(ref, table.reset_index(drop=True), len(df), n_cases, confidence)


def _check_connected(df: pd.DataFrame, variants: list[str]) -> None:
    """Refuse variants that are never compared, directly or through others."""
    reached = {variants[0]}
    edges = list(zip(df["first"].astype(str), df["second"].astype(str), strict=True))
    changed = True
    while changed:
        changed = False
        for a, b in edges:
            if (a in reached) != (b in reached):
                reached |= {a, b}
                changed = True
    lost = sorted(set(variants) - reached)
    if lost:
        raise InputError(
            f"variants {lost} are never compared with {variants[0]!r}, directly or through "
            "another variant: their strengths are not identified"
        )
