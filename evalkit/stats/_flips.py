"""Flip rates: how often outcomes disagree between two runs, or between trials of one run.

Intervals. Between runs, the overall flip rate gets a Wilson interval on the matched pairs when
every case contributes one pair; when cases contribute several pairs (several trials,
conditions or providers), pairs of a case are correlated and the interval is the Wilson
interval at the design-effect-adjusted effective sample size (``"cluster-wilson"``, clusters =
cases, as in :func:`pass_rates`). Each case's own row gets a Wilson interval on its pairs.

Within a run, a group with ``k`` trials and ``s`` passes has ``s * (k - s)`` disagreeing pairs
out of ``k * (k - 1) / 2``. The pooled rate is the ratio of the sums; its interval is the
Wilson interval at the effective sample size implied by the cluster-robust (ratio-estimator)
variance with clusters = cases. Per-group rows carry no interval: with a handful of trials the
pair share (an unbiased estimate of ``2 p (1 - p)``, which can reach 1 when ``k = 2``) has no
useful interval of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from evalkit._display import RichDisplay, draw
from evalkit._settings import CONFIDENCE
from evalkit.errors import InputError
from evalkit.stats._frame import as_frame, records

if TYPE_CHECKING:
    from matplotlib.figure import Figure
from evalkit.stats._interval import json_float
from evalkit.stats._proportions import proportion_ci
from evalkit.stats._reuse import reused_note, split_reused

#: Columns of :attr:`FlipRate.by_provider`.
PROVIDER_COLUMNS = (
    "provider", "n_pairs", "n_flips", "flip_rate", "ci_low", "ci_high", "confidence", "method"
)


def _provider_table(
    frame: pd.DataFrame, flips: str, pairs: str, confidence: float
) -> pd.DataFrame:
    """Per-provider pooled flip rates, clustered by case (empty with one provider).

    Args:
        frame: One row per group with ``provider``, ``case_id`` and the two count columns.
        flips: Column of disagreeing pairs.
        pairs: Column of pairs.
        confidence: Confidence level.

    Returns:
        The :data:`PROVIDER_COLUMNS` table.
    """
    if "provider" not in frame.columns or frame["provider"].nunique() < 2:
        return pd.DataFrame(columns=list(PROVIDER_COLUMNS))
    rows = []
    for provider, part in frame.groupby("provider", sort=True):
        per_case = part.groupby("case_id", sort=False)[[flips, pairs]].sum()
        n_pairs = int(per_case[pairs].sum())
        n_flips = int(per_case[flips].sum())
        low, high = _ratio_interval(
            per_case[flips].to_numpy(dtype=float), per_case[pairs].to_numpy(dtype=float),
            confidence,
        )
        rows.append(
            {
                "provider": str(provider),
                "n_pairs": n_pairs,
                "n_flips": n_flips,
                "flip_rate": n_flips / n_pairs if n_pairs else float("nan"),
                "ci_low": low,
                "ci_high": high,
                "confidence": confidence,
                "method": "cluster-wilson",
            }
        )
    return pd.DataFrame(rows, columns=list(PROVIDER_COLUMNS))


@dataclass(frozen=True)
class FlipRate(RichDisplay):
    """A flip rate with its interval and a per-case table.

    Attributes:
        flip_rate: Share of disagreeing pairs (NaN when there is no pair).
        n_pairs: Number of pairs compared.
        n_flips: Number of disagreeing pairs.
        ci_low: Lower confidence bound.
        ci_high: Upper confidence bound.
        confidence: Confidence level.
        method: Interval method (``"wilson"`` or ``"cluster-wilson"``).
        by_case: Per-case (or per-group) table; see the producing function for its columns.
        n_unmatched: Items present in one run only (between runs; 0 within a run).
        reused_items: Matched item pairs left out because both sides are one sample (between
            runs; see :mod:`evalkit.stats._reuse`).
        message: One line on the left-out pairs ("" when there are none); when every pair is
            one sample, how to measure noise instead; within a run of one trial per case,
            why there is no pair and what would give one.
        by_provider: With several providers, one row per provider: ``provider, n_pairs,
            n_flips, flip_rate, ci_low, ci_high, confidence, method`` (cluster-Wilson, clusters
            = cases); empty with one provider.

    :meth:`unstable_cases` lists the groups that flip most; :meth:`plot_heatmap` draws
    ``by_case`` as a case x condition heatmap (matplotlib, drawn by :mod:`evalkit.report`).
    """

    flip_rate: float
    n_pairs: int
    n_flips: int
    ci_low: float
    ci_high: float
    confidence: float
    method: str
    by_case: pd.DataFrame
    n_unmatched: int = 0
    reused_items: int = 0
    message: str = ""
    by_provider: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(PROVIDER_COLUMNS))
    )

    def to_dict(self) -> dict[str, Any]:
        """Return the ``flips`` JSON shape (``docs/architecture.md``).

        Returns:
            ``{"flip_rate", "n_pairs", "by_case": [...]}``, one record per row of ``by_case``;
            undefined numbers are None (``flip_rate`` is None when no pair is evidence).
            Extended with ``"reused_items"`` (pairs left out as one sample),
            ``"message"`` (why, and how to draw fresh samples) and ``"by_provider"`` (one
            record per provider when there are several). Extended with ``"ci_low"`` and
            ``"ci_high"`` (the interval the text prints; None when no pair was measured).
        """
        return {
            "flip_rate": json_float(self.flip_rate),
            "n_pairs": int(self.n_pairs),
            "by_case": records(self.by_case),
            "reused_items": int(self.reused_items),
            "message": self.message,
            "by_provider": records(self.by_provider),
            "ci_low": json_float(self.ci_low),
            "ci_high": json_float(self.ci_high),
        }


    def unstable_cases(self, n: int = 20) -> pd.DataFrame:
        """The ``n`` rows of ``by_case`` with the highest flip rate, most pairs first on ties.

        Args:
            n: Most rows.

        Returns:
            The ``by_case`` rows that flipped at least once, sorted.
        """
        table = self.by_case.dropna(subset=["estimate"])
        table = table[table["flips"] > 0]
        return table.sort_values(["estimate", "n"], ascending=[False, False], kind="stable").head(
            n
        )

    def plot_heatmap(
        self,
        *,
        title: str = "Flip rate by case and condition",
        colorbar_label: str = "flip rate",
        max_rows: int = 40,
    ) -> Figure:
        """The flip rate of each case (rows, most unstable first) and condition (columns).

        Args:
            title: Figure title.
            colorbar_label: Label of the colour bar.
            max_rows: Most cases drawn (the title says when some are left out).

        Returns:
            The figure.
        """
        figure = draw(
            self, "plot_heatmap", title=title, colorbar_label=colorbar_label, max_rows=max_rows
        )
        return cast("Figure", figure)


def flip_rate_between(
    run_a: pd.DataFrame,
    run_b: pd.DataFrame,
    on: Sequence[str] = ("lane", "case_id", "condition", "provider", "trial"),
    confidence: float = CONFIDENCE.default,
) -> FlipRate:
    """Share of matched work items whose ``passed`` differs between two runs.

    Items are matched on ``on`` (the work-item key without the run); a column of ``on`` that is
    absent from either frame is left out of the match (e.g. ``lane`` or ``provider`` in an
    imported CSV; a missing ``trial`` is 0, 1, ... by order of appearance). Items present in
    one run only are counted in ``n_unmatched``. Skipped rows are excluded; errors and timeouts
    count as failures. A pair whose two sides are one sample (an outcome reused from the cache,
    or a deterministic provider rerun with the same seed) cannot disagree and says nothing
    about noise: it is left out and counted in ``reused_items``; when every pair is such a
    copy the flip rate is NaN and ``message`` says how to draw fresh samples.

    Args:
        run_a: First run (tidy frame).
        run_b: Second run.
        on: Item key columns.
        confidence: Confidence level.

    Returns:
        :class:`FlipRate` whose ``by_case`` has columns ``case_id, condition, n, flips,
        estimate, ci_low, ci_high, confidence, method`` (``lane`` first when the runs hold
        several lanes; one row per case and condition;
        ``n`` = pairs, ``flips`` = disagreeing pairs, Wilson interval).

    Raises:
        InputError: Bad input, or no item in common.

    Examples:
        >>> a = pd.DataFrame({"case_id": list("abcd"), "condition": "none",
        ...                   "passed": [True, True, False, False]})
        >>> b = a.assign(passed=[True, False, False, True])
        >>> flips = flip_rate_between(a, b)
        >>> flips.flip_rate, flips.n_pairs, flips.method
        (0.5, 4, 'wilson')
    """
    level = CONFIDENCE.check(confidence)
    a = as_frame(run_a, what="run_a", required=("case_id",))
    b = as_frame(run_b, what="run_b", required=("case_id",))
    keys = [c for c in on if c in a.columns and c in b.columns]
    if "case_id" not in keys:
        raise InputError("`on` must include 'case_id' to match items between runs.")
    for name, df in (("run_a", a), ("run_b", b)):
        if df.duplicated(keys).any():
            raise InputError(
                f"`{name}` has several rows per {keys}; add the distinguishing column to `on`."
            )
    split = split_reused(a, b, keys)
    reused = len(split.reused)
    merged = split.baseline[[*keys, "passed"]].merge(
        split.candidate[[*keys, "passed"]],
        on=keys,
        how="outer",
        suffixes=("_a", "_b"),
        indicator=True,
    )
    both = merged["_merge"] == "both"
    n_unmatched = int((~both).sum())
    pairs = merged.loc[both].copy()
    if pairs.empty and reused:
        return _no_evidence(keys, level, reused, n_unmatched)
    if pairs.empty:
        raise InputError(f"the two runs share no work item on {keys}; nothing to compare.")
    pairs["flip"] = pairs["passed_a"].astype(bool) != pairs["passed_b"].astype(bool)
    several_lanes = "lane" in keys and pairs["lane"].nunique() > 1
    groups = [c for c in ("lane", "case_id", "condition") if c in keys]
    if not several_lanes and "lane" in groups:
        groups.remove("lane")
    per_case = pairs.groupby(groups, sort=True)["flip"].agg(n="size", flips="sum").reset_index()
    per_case["flips"] = per_case["flips"].astype("int64")
    low, high = proportion_confint(
        per_case["flips"].to_numpy(), per_case["n"].to_numpy(), alpha=1 - level, method="wilson"
    )
    per_case["estimate"] = per_case["flips"] / per_case["n"]
    estimate = per_case["estimate"].to_numpy(dtype=float)
    per_case["ci_low"] = np.minimum(np.clip(np.asarray(low, dtype=float), 0, 1), estimate)
    per_case["ci_high"] = np.maximum(np.clip(np.asarray(high, dtype=float), 0, 1), estimate)
    per_case["confidence"] = level
    per_case["method"] = "wilson"
    n_pairs = len(pairs)
    n_flips = int(pairs["flip"].sum())
    per_cluster = pairs.groupby("case_id", sort=False)["flip"].agg(["sum", "size"])
    if int(per_cluster["size"].max()) == 1:
        ci = proportion_ci(n_flips, n_pairs, level, "wilson")
        low, high, method = ci.ci_low, ci.ci_high, "wilson"
    else:
        low, high = _ratio_interval(
            per_cluster["sum"].to_numpy(dtype=float),
            per_cluster["size"].to_numpy(dtype=float),
            level,
        )
        method = "cluster-wilson"
    return FlipRate(
        flip_rate=n_flips / n_pairs,
        n_pairs=n_pairs,
        n_flips=n_flips,
        ci_low=low,
        ci_high=high,
        confidence=level,
        method=method,
        by_case=per_case,
        n_unmatched=n_unmatched,
        reused_items=reused,
        message=reused_note(reused, n_pairs + reused),
        by_provider=_provider_table(
            pairs.assign(pair=1, flip=pairs["flip"].astype(int)), "flip", "pair", level
        ),
    )


def _no_evidence(keys: list[str], level: float, reused: int, n_unmatched: int) -> FlipRate:
    """The flip rate of two runs that share every matched outcome: undefined."""
    groups = [c for c in ("case_id", "condition") if c in keys]
    columns = [*groups, "n", "flips", "estimate", "ci_low", "ci_high", "confidence", "method"]
    return FlipRate(
        flip_rate=float("nan"),
        n_pairs=0,
        n_flips=0,
        ci_low=float("nan"),
        ci_high=float("nan"),
        confidence=level,
        method="none",
        by_case=pd.DataFrame(columns=columns),
        n_unmatched=n_unmatched,
        reused_items=reused,
        message=(
            f"the two runs share every outcome ({reused} matched item pair(s) are one sample "
            "each: cache copies, or a deterministic provider rerun with the same seed), so they "
            "cannot disagree; to measure noise rerun with --no-cache (and a new --seed for "
            "seeded providers), e.g. evalkit run SUITE --no-cache --seed 2"
        ),
    )


def _ratio_interval(
    numerators: np.ndarray, denominators: np.ndarray, confidence: float
) -> tuple[float, float]:
    """Wilson interval of a pooled ratio at its cluster-robust effective sample size.

    ``R = sum(x) / sum(m)`` over clusters; its linearized variance is
    ``C/(C-1) * sum((x_c - R m_c)^2) / sum(m)^2``; the effective size is ``R(1-R)/var``, capped
    at ``sum(m)`` and set to the number of clusters when ``R`` is 0 or 1.

    Args:
        numerators: Per-cluster counts of events (e.g. disagreeing pairs).
        denominators: Per-cluster counts of opportunities (pairs).
        confidence: Confidence level.

    Returns:
        Lower and upper bounds.
    """
    keep = denominators > 0
    x, m = numerators[keep], denominators[keep]
    clusters = len(m)
    total = float(m.sum())
    if clusters == 0 or total == 0:
        return 0.0, 1.0
    ratio = float(x.sum()) / total
    if clusters < 2 or ratio <= 0.0 or ratio >= 1.0:
        n_eff = float(clusters)
    else:
        variance = clusters / (clusters - 1) * float(np.sum((x - ratio * m) ** 2)) / total**2
        n_eff = total if variance <= 0 else min(total, ratio * (1 - ratio) / variance)
        n_eff = max(n_eff, 1.0)
    ci = proportion_ci(ratio * n_eff, n_eff, confidence, "wilson")
    return ci.ci_low, ci.ci_high


def flip_rate_within(
    data: pd.DataFrame,
    by: Sequence[str] | None = None,
    confidence: float = CONFIDENCE.default,
) -> FlipRate:
    """Share of disagreeing trial pairs within each group of one run (and pooled).

    A group with ``k`` trials and ``s`` passes has ``s * (k - s)`` disagreeing pairs out of
    ``k * (k - 1) / 2``. The overall rate pools pairs over groups (ratio of sums); groups with
    fewer than two trials have no pair. Skipped rows are excluded; errors and timeouts count as
    failures. Trials are paired only within one work-item cell: by default (case, condition)
    plus ``lane`` and ``provider`` when the table has them, so two providers' trials of a case
    are never taken for repeats of one agent; with several providers ``by_provider`` gives each
    provider's own rate.

    Args:
        data: One run (tidy frame).
        by: Group columns; must include ``case_id`` (clusters are cases). Default
            ``case_id, condition``, with ``lane`` and ``provider`` when the table holds
            several of them.
        confidence: Confidence level.

    Returns:
        :class:`FlipRate` (method ``"cluster-wilson"``) whose ``by_case`` has the ``by``
        columns, then ``n_trials, passes, n, flips, estimate`` (``n`` = trial pairs,
        ``flips`` = disagreeing pairs; ``estimate`` NaN when ``n_trials < 2``).

    Raises:
        InputError: Bad input, or ``by`` without ``case_id``.

    Examples:
        >>> df = pd.DataFrame({"case_id": ["a"] * 3 + ["b"] * 3, "condition": "none",
        ...                    "trial": [0, 1, 2] * 2,
        ...                    "passed": [True, True, False, True, True, True]})
        >>> within = flip_rate_within(df)
        >>> within.by_case[["case_id", "n_trials", "passes", "n", "flips"]]
          case_id  n_trials  passes  n  flips
        0       a         3       2  3      2
        1       b         3       3  3      0
        >>> round(within.flip_rate, 3), within.n_pairs
        (0.333, 6)
    """
    level = CONFIDENCE.check(confidence)
    if by is None:
        by = ["case_id", "condition"]
        if isinstance(data, pd.DataFrame):
            several = [c for c in ("lane", "provider") if c in data and data[c].nunique() > 1]
            by = [*(["lane"] if "lane" in several else []), *by, *(
                ["provider"] if "provider" in several else []
            )]
    by = [by] if isinstance(by, str) else list(by)
    if "case_id" not in by:
        raise InputError("`by` must include 'case_id': trial pairs are formed within a case.")
    df = as_frame(data, required=by)
    table = df.groupby(by, sort=True)["passed"].agg(n_trials="size", passes="sum").reset_index()
    k = table["n_trials"].to_numpy(dtype=np.int64)
    s = table["passes"].to_numpy(dtype=np.int64)
    table["passes"] = s
    table["n"] = k * (k - 1) // 2
    table["flips"] = s * (k - s)
    pairs = table["n"].to_numpy(dtype=float)
    flips = table["flips"].to_numpy(dtype=float)
    table["estimate"] = np.divide(flips, pairs, out=np.full(len(table), np.nan), where=pairs > 0)
    n_pairs = int(table["n"].sum())
    n_flips = int(table["flips"].sum())
    per_case = table.groupby("case_id", sort=False)[["flips", "n"]].sum()
    message = ""
    if n_pairs == 0:  # nothing measured: no interval rather than [0, 1]
        rate, low, high = float("nan"), float("nan"), float("nan")
        if len(table):
            message = (
                "one trial per case: a flip within a run needs two trials of the same case "
                "(evalkit run --trials 2 or more), or compare two runs drawn with different "
                "seeds (evalkit flips RUN_A RUN_B)"
            )
    else:
        rate = n_flips / n_pairs
        low, high = _ratio_interval(
            per_case["flips"].to_numpy(dtype=float), per_case["n"].to_numpy(dtype=float), level
        )
    return FlipRate(
        message=message,
        flip_rate=rate,
        n_pairs=n_pairs,
        n_flips=n_flips,
        ci_low=low,
        ci_high=high,
        confidence=level,
        method="cluster-wilson",
        by_case=table,
        by_provider=_provider_table(table, "flips", "n", level),
    )
