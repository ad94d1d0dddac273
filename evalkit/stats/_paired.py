"""Paired comparison of a baseline and a candidate, matched by case (and trial)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from evalkit._display import RichDisplay
from evalkit._settings import CASE_CORRECTION
from evalkit.stats._bootstrap import paired_delta_interval
from evalkit.stats._case_floor import case_decisions, case_verdict_note
from evalkit.stats._case_interaction import CaseInteraction, case_interaction
from evalkit.stats._case_screen import case_columns, case_screen
from evalkit.stats._case_summary import case_summary, named_case_rows
from evalkit.stats._case_table import case_table
from evalkit.stats._equivalence import equivalence
from evalkit.stats._frame import (
    as_frame,
    json_ready,
    json_records,
    records,
)
from evalkit.stats._heterogeneity import Heterogeneity
from evalkit.stats._interval import Interval, json_float
from evalkit.stats._matrix import build_pairs
from evalkit.stats._mcnemar import McNemarResult, arm_correlation, mcnemar_test
from evalkit.stats._options import CompareOptions
from evalkit.stats._providers import provider_summary, provider_table
from evalkit.stats._row_family import family_columns
from evalkit.stats._signflip import SignFlipResult, sign_flip_test
from evalkit.stats._ties import PairTies, RowPairs, row_pairs
from evalkit.stats._types import Correction, Metric, Verdict
from evalkit.stats._unmatched import left_out_reasons, left_out_text, unmatched_summary
from evalkit.stats._verdicts import (
    overall_verdict,
)


@dataclass(frozen=True)
class PairedComparison(RichDisplay):
    """Result of :func:`paired_compare` (and of :func:`compare`).

    Attributes:
        metric: The compared value column, ``"passed"`` or ``"score"``.
        delta: Mean over cases of (candidate - baseline) per-case rate, with its paired
            cluster-bootstrap interval.
        se: Paired standard error, ``sd(per-case deltas) / sqrt(n_cases)``.
        correlation: Pearson correlation of the per-case baseline and candidate rates (NaN when
            either is constant).
        wins: Cases whose candidate rate is higher.
        losses: Cases whose candidate rate is lower.
        ties: Cases with equal rates.
        n_cases: Matched cases.
        mcnemar: McNemar's test on aligned pass bits, or None (scores, or no aligned trials).
            It pools trials and ignores clustering, so it is kept for reference only and never
            shown beside the verdict; :attr:`sign_flip` is the test that goes with it.
        verdict: Overall verdict (``improved``/``regressed``/``inconclusive``): the interval
            and the sign-flip test over cases must agree (see :func:`overall_verdict`).
        threshold: Practical threshold used for "improved".
        alpha: Per-case significance level (after correction).
        correction: Multiplicity correction across cases.
        cases: Per-case table: the unit columns, then ``n_baseline, n_candidate,
            baseline_rate, candidate_rate, estimate, ci_low, ci_high, p_value, p_adjusted,
            verdict``.
        unmatched: Units present on one side only (unit columns, ``side``, ``n``); reported,
            never silently dropped.
        baseline_label: What the baseline is: its condition when two conditions of one run
            are compared, its run id when two runs are, else ``"baseline"``.
        candidate_label: What the candidate is, likewise.
        conditions: ``(baseline, candidate)`` conditions when two conditions of one run were
            compared (every case's ``condition`` then names both), else None.
        sign_flip: Exact sign-flip test over cases of the mean per-case difference.
        verdict_note: Why the verdict is inconclusive when the interval, the sign-flip test
            and the threshold point different ways ("" when they agree).
        reused_items: Matched item pairs left out because their two sides are one sample
            (an outcome reused from the cache, or a deterministic provider with the same seed;
            see :mod:`evalkit.stats._reuse`).
        reuse_note: One line explaining :attr:`reused_items` ("" when there are none).
        by_condition: Between two runs, one comparison per condition, each over its own cases
            (empty when two conditions of one run are compared).
        pooled_conditions: The conditions the overall figures pool when there are several;
            the pool is stratified by case (each case is one cluster, its per-condition
            differences averaged). Empty when the comparison covers one condition.
        by_provider: With several providers, one comparison per provider over its own cases.
        pooled_providers: The providers the overall figures pool (each case one cluster, its
            per-provider differences averaged: a shared case counts once).
        left_out_providers: Providers with items in the comparison that contributed no case,
            each with where its items are: ``"baseline"`` or ``"candidate"`` (it ran only
            that side), ``"reused"`` (its pairs were one sample) or ``"both"`` (both sides,
            no case in common). Read them in words with :attr:`left_out_reasons`.
        heterogeneity: Interaction test, ``tau2``, ``I2`` and prediction interval, or None.
        case_screen: One row per case and condition pooling its providers as strata (CMH for
            pass bits, a stratified permutation test for scores), corrected across cases with
            :attr:`case_correction` (:func:`~evalkit.stats.case_screen`); None when not
            computed (the per-condition and per-provider parts).
        case_correction: The correction of :attr:`case_screen` (``"fdr_bh"`` by default).
        case_interaction: Whether the change differs between cases (the case x condition
            interaction F test, :class:`~evalkit.stats.CaseInteraction`), or None.
    """

    metric: Metric
    delta: Interval
    se: float
    correlation: float
    wins: int
    losses: int
    ties: int
    n_cases: int
    mcnemar: McNemarResult | None
    verdict: Verdict
    threshold: float
    alpha: float
    correction: Correction
    cases: pd.DataFrame
    unmatched: pd.DataFrame
    baseline_label: str = "baseline"
    candidate_label: str = "candidate"
    conditions: tuple[str, str] | None = None
    sign_flip: SignFlipResult | None = None
    verdict_note: str = ""
    reused_items: int = 0
    reuse_note: str = ""
    by_condition: tuple[tuple[str, PairedComparison], ...] = ()
    pooled_conditions: tuple[str, ...] = ()
    by_provider: tuple[tuple[str, PairedComparison], ...] = ()
    pooled_providers: tuple[str, ...] = ()
    left_out_providers: tuple[tuple[str, str], ...] = ()
    heterogeneity: Heterogeneity | None = None
    case_screen: pd.DataFrame | None = None
    case_correction: Correction = CASE_CORRECTION.default
    case_interaction: CaseInteraction | None = None

    @property
    def scope(self) -> str:
        """Which conditions (and providers) the overall figures speak for, in words."""
        if self.pooled_providers:
            over = (
                f" and conditions {', '.join(self.pooled_conditions)}"
                if self.pooled_conditions
                else ""
            )
            counted = len(self.pooled_providers)
            of = f" of {counted + len(self.left_out_providers)}" if self.left_out_providers else ""
            text = (
                f"pooled over {counted}{of} providers{over}, clustered by case "
                "(each case counts once, its per-provider differences averaged)"
            )
            if self.left_out_providers:
                text += f"; not compared: {self.left_out_text()}"
            return text
        if self.pooled_conditions:
            contributing, reused = self.contributing_conditions, self.reused_conditions
            text = (
                f"pooled over conditions {', '.join(contributing) or 'none'}, stratified by "
                "case (each case counts once, its per-condition differences averaged)"
            )
            if reused:
                text += (
                    f"; left out as reused (every pair one sample, no case): {', '.join(reused)}"
                )
            return text
        if self.by_condition:
            return f"condition {self.by_condition[0][0]}"
        if self.conditions is not None:
            return f"{self.conditions[1]} vs {self.conditions[0]}"
        return ""

    @property
    def left_out_reasons(self) -> dict[str, str]:
        """Why each of :attr:`left_out_providers` contributed no case, in words."""
        return left_out_reasons(self)

    def left_out_text(self) -> str:
        """The providers that contributed no case, grouped by reason: ``"a, b (ran only X)"``."""
        return left_out_text(self.left_out_reasons)

    @property
    def contributing_conditions(self) -> tuple[str, ...]:
        """The pooled conditions that contributed at least one matched case."""
        parts = dict(self.by_condition)
        return tuple(
            c for c in self.pooled_conditions if c not in parts or parts[c].n_cases > 0
        )

    @property
    def reused_conditions(self) -> tuple[str, ...]:
        """The pooled conditions that contributed no case (every pair reused, or none matched)."""
        contributing = set(self.contributing_conditions)
        return tuple(c for c in self.pooled_conditions if c not in contributing)

    def condition_summary(self) -> dict[str, Any]:
        """This comparison as one entry of ``by_condition`` (without the condition name)."""
        return {
            "verdict": self.verdict,
            "delta": {
                "estimate": json_float(self.delta.estimate),
                "ci_low": json_float(self.delta.ci_low),
                "ci_high": json_float(self.delta.ci_high),
            },
            "n_cases": int(self.n_cases),
            "reused_items": int(self.reused_items),
            "wins": int(self.wins),
            "losses": int(self.losses),
            "ties": int(self.ties),
            "sign_flip_pvalue": None if self.sign_flip is None else self.sign_flip.pvalue,
            "verdict_note": self.verdict_note,
            "reuse_note": self.reuse_note,
            "by_provider": self.provider_summary(),
        }

    def provider_summary(self) -> dict[str, dict[str, Any]]:
        """``by_provider`` of the JSON (:func:`~evalkit.stats.provider_summary`)."""
        return provider_summary(self)

    def provider_table(self) -> pd.DataFrame:
        """One row per provider, Holm across them (:func:`~evalkit.stats.provider_table`)."""
        return provider_table(self)

    @property
    def regressed_providers(self) -> list[str]:
        """Providers whose delta is significantly negative after Holm across providers."""
        return [str(p) for p in self.provider_table().query("regressed")["provider"]]

    @property
    def equivalence(self) -> dict[str, Any]:
        """"No practical difference"? ``{"equivalent", "margin", "note"}`` (``equivalence``)."""
        return equivalence(self)

    def case_decisions(self) -> pd.Series:
        """Why each row of :attr:`cases` has its verdict (raw and corrected p, the rule)."""
        return case_decisions(self.cases, correction=self.correction, alpha=self.alpha,
                              confidence=self.delta.confidence)

    @property
    def case_verdict_note(self) -> str:
        """Why no case can be named regressed or improved ("" when some case could be).

        It reads the pooled case rows when there are (their trials pooled over providers and
        conditions), else the per-unit rows.
        """
        rows = self.case_screen if self.case_screen is not None else self.cases
        return case_verdict_note(rows, binary=self.metric == "passed", alpha=self.alpha)

    @property
    def case_rows(self) -> pd.DataFrame:
        """The rows that name cases: :attr:`case_screen` when computed, else :attr:`cases`."""
        return self.case_screen if self.case_screen is not None else self.cases

    @property
    def regressed_cases(self) -> list[str]:
        """Case ids named ``"regressed"`` (by the pooled case rows when there are)."""
        return _case_ids(self.case_rows, "regressed")

    @property
    def improved_cases(self) -> list[str]:
        """Case ids named ``"improved"`` (by the pooled case rows when there are)."""
        return _case_ids(self.case_rows, "improved")

    @property
    def named_cases(self) -> dict[str, list[dict[str, Any]]]:
        """``{"regressed": [...], "improved": [...]}``: each named case with its figures.

        Each entry: ``case_id`` (and ``lane`` when cases were matched on it), ``estimate``,
        ``ci_low``, ``ci_high``, ``p_value``, ``p_adjusted``, ``n_baseline``,
        ``n_candidate`` (the pooled row's; :func:`~evalkit.stats.named_case_rows`).
        """
        return named_case_rows(self.case_rows)

    @property
    def case_summary(self) -> str:
        """The sentence said first when the change is concentrated or a case is named.

        E.g. ``"-0.7 pp on average, concentrated: 2 cases dropped 32-49 pp"``; "" when no case
        is named and the change is not shown to differ between cases.
        """
        return case_summary(self)

    def to_dict(self) -> dict[str, Any]:
        """Return the ``compare`` JSON shape (``docs/architecture.md``) (plain Python values only).

        Returns:
            ``{"verdict", "metric", "delta": {"estimate", "ci_low", "ci_high"}, "wins",
            "losses", "ties", "n_cases", "cases": [{"case_id", "condition", "verdict",
            "estimate", "ci_low", "ci_high"}], "regressed_cases", "improved_cases"}``; a case
            also carries ``"provider"`` / ``"lane"`` when cases were matched on them.
            Extended with ``"threshold"``, ``"unmatched"`` (items present on one side
            only), ``"baseline_label"`` and ``"candidate_label"``, ``"sign_flip"``
            (``{"pvalue", "n_cases", "exact"}``, the test over cases that goes with the
            verdict) and ``"verdict_note"`` (why the verdict is inconclusive when the signals
            differ). Extended with ``"reused_items"`` and ``"reuse_note"`` (pairs left out as
            one sample), ``"by_condition"`` (``[{"condition", "verdict", "delta",
            "n_cases", "reused_items", ..., "p_value", "p_adjusted"}]``, one comparison per
            condition between two runs; ``p_adjusted`` is Holm across the conditions, which a
            condition's direction needs below alpha, None with one condition), ``"pooled"``
            (``{"method": "stratified-by-case", "conditions"}`` when the overall figures pool
            several conditions, else None) and ``"scope"`` (the same in words).
            Extended with ``"by_provider"`` (:func:`~evalkit.stats.provider_summary`),
            ``"pooled_providers"`` and ``"heterogeneity"`` (:class:`~evalkit.stats.Heterogeneity`);
            several providers make ``"pooled"`` ``{"method": "clustered-by-case", ...}``.
            The keys that only the runs can fill (``"judge_calibration"``,
            ``"failure_changes"``, ``"report_metrics"``, ``"ungraded_items"``,
            ``"ungraded_note"``, ``"next_step"``) hold their empty values here and a case has
            no ``"reasons"``: :meth:`evalkit.analysis.RunComparison.to_dict` fills them in.
            Undefined numbers are None.
        """
        unit_columns = [c for c in ("lane", "case_id", "condition", "provider") if c in self.cases]
        numbers = ("estimate", "ci_low", "ci_high", "p_value", "p_adjusted")
        case_rows = json_records(self.cases, [
            *((column, "plain") for column in unit_columns), ("verdict", "str"),
            *((column, "float") for column in numbers),
        ])
        for item, decided in zip(case_rows, self.case_decisions().tolist(), strict=True):
            item["decided_by"] = decided
        # the case rows are plain already: the rest is made plain, then they are put in
        out = json_ready(
            {
                "verdict": self.verdict,
                "metric": self.metric,
                "delta": {
                    "estimate": json_float(self.delta.estimate),
                    "ci_low": json_float(self.delta.ci_low),
                    "ci_high": json_float(self.delta.ci_high),
                },
                "wins": int(self.wins),
                "losses": int(self.losses),
                "ties": int(self.ties),
                "n_cases": int(self.n_cases),
                "cases": [],
                "regressed_cases": self.regressed_cases,
                "improved_cases": self.improved_cases,
                "named_cases": self.named_cases,
                "case_summary": self.case_summary,
                "case_screen": None
                if self.case_screen is None
                else {
                    "correction": self.case_correction,
                    "alpha": self.alpha,
                    "rows": [],
                },
                "case_interaction": self.case_interaction
                and self.case_interaction.to_dict(),
                "case_verdict_note": self.case_verdict_note,
                "equivalence": self.equivalence,
                "threshold": self.threshold,
                "unmatched": records(self.unmatched),
                "baseline_label": self.baseline_label,
                "candidate_label": self.candidate_label,
                "sign_flip": None
                if self.sign_flip is None
                else {
                    "pvalue": self.sign_flip.pvalue,
                    "n_cases": self.sign_flip.n_cases,
                    "exact": self.sign_flip.exact,
                    "method": self.sign_flip.method,
                    "at_floor": self.sign_flip.at_floor,
                },
                "verdict_note": self.verdict_note,
                "reused_items": int(self.reused_items),
                "reuse_note": self.reuse_note,
                "by_condition": [
                    {"condition": name} | part.condition_summary() | family
                    for (name, part), family in zip(
                        self.by_condition, family_columns(self.by_condition), strict=True
                    )
                ],
                "pooled": {
                    "method": "clustered-by-case"
                    if self.pooled_providers
                    else "stratified-by-case",
                    "conditions": list(self.pooled_conditions),
                    "contributing": list(self.contributing_conditions),
                    "left_out_reused": list(self.reused_conditions),
                }
                | ({"providers": list(self.pooled_providers)} if self.pooled_providers else {})
                if self.pooled_conditions or self.pooled_providers
                else None,
                "scope": self.scope,
                "judge_calibration": None,
                "failure_changes": None,
                "report_metrics": [],
                "by_provider": self.provider_summary(),
                "pooled_providers": list(self.pooled_providers),
                "left_out_providers": [
                    {"provider": name, "reason": reason}
                    for name, reason in self.left_out_reasons.items()
                ],
                "unmatched_summary": unmatched_summary(self),
                "heterogeneity": self.heterogeneity and self.heterogeneity.to_dict(),
                "ungraded_items": 0,
                "ungraded_note": "",
                "next_step": None,
            }
        )
        out["cases"] = case_rows
        if self.case_screen is not None:
            out["case_screen"]["rows"] = _screen_records(self.case_screen)
        return dict(out)


def _screen_records(screen: pd.DataFrame) -> list[dict[str, Any]]:
    """The pooled case rows as JSON records (numbers as floats, NaN as None)."""
    columns = [c for c in case_columns(screen) if c in screen.columns]
    counts = ("n_strata", "n_baseline", "n_candidate")
    numbers = ("baseline_rate", "candidate_rate", "estimate", "ci_low", "ci_high", "p_value",
               "p_adjusted", "p_smallest")
    return json_records(screen, [
        *((c, "plain") for c in columns), ("verdict", "str"), *((c, "int") for c in counts),
        *((c, "float") for c in numbers), ("method", "str"),
    ])


def _case_ids(cases: pd.DataFrame, which: str) -> list[str]:
    """Unique case ids with the given verdict, in table order."""
    ids = cases.loc[cases["verdict"] == which, "case_id"].astype(str).tolist()
    return list(dict.fromkeys(ids))


def compare_matrices(
    keys: pd.DataFrame,
    baseline: np.ndarray,
    candidate: np.ndarray,
    unmatched: pd.DataFrame,
    options: CompareOptions,
    *,
    summary: Callable[[pd.DataFrame, RowPairs], OverallSummary] | None = None,
    screen: bool = True,
) -> PairedComparison:
    """Paired comparison of two aligned ``(cases x trials)`` matrices (no input validation).

    Args:
        keys: One row per case (unit columns).
        baseline: ``(C, K)`` baseline values, NaN = absent trial, each row non-empty.
        candidate: ``(C, K)`` candidate values, same layout.
        unmatched: Units present on one side only.
        options: The comparison's settings (metric, threshold, confidence, resamples, seed,
            per-case level and correction, trial resampling).
        summary: The overall figures from the per-case table and its rows' aligned trial
            pairs (e.g. a pool stratified by case), computed instead of
            :func:`overall_summary` over the matrices.
        screen: Also compute the pooled case rows and the case x condition interaction
            (False for the parts of a larger comparison, which report their own rows only).

    Returns:
        The comparison.
    """
    cases = case_table(keys, baseline, candidate, options)
    extra: dict[str, Any] = {"case_correction": options.case_correction}
    if screen:
        extra["case_screen"] = case_screen(keys, baseline, candidate, options)
        extra["case_interaction"] = case_interaction(
            keys, baseline, candidate, confidence=options.confidence,
            binary=options.metric == "passed", seed=options.seed,
        )
    if summary is not None:
        overall = summary(cases, row_pairs(baseline, candidate))
    else:
        overall = overall_summary(baseline, candidate, options)
    return PairedComparison(
        metric=options.metric,
        mcnemar=mcnemar_test(baseline, candidate) if options.metric == "passed" else None,
        threshold=options.threshold,
        alpha=options.alpha,
        correction=options.correction,
        cases=cases,
        unmatched=unmatched,
        **overall,
        **extra,
    )


class OverallSummary(TypedDict):
    """The overall figures of a comparison over cases (fields of :class:`PairedComparison`).

    Its keys are keyword arguments of :class:`PairedComparison`, so mypy checks each one and
    its type against that field where a summary is passed on (``**summary``).
    """

    delta: Interval
    se: float
    correlation: float
    wins: int
    losses: int
    ties: int
    n_cases: int
    verdict: Verdict
    sign_flip: SignFlipResult
    verdict_note: str


def overall_summary(
    baseline: np.ndarray,
    candidate: np.ndarray,
    options: CompareOptions,
    ties: PairTies | None = None,
) -> OverallSummary:
    """Interval, sign-flip test, verdict and counts of the per-case differences.

    Args:
        baseline: ``(C, K)`` baseline values, NaN = absent trial, each row non-empty.
        candidate: ``(C, K)`` candidate values, same layout.
        options: The comparison's settings (threshold, confidence, bootstrap replicates,
            seed, trial resampling).
        ties: The aligned trial pairs behind the rows (None: counted from the matrices).

    Returns:
        The overall figures.
    """
    n_resamples, seed = options.n_resamples, options.seed
    delta = paired_delta_interval(
        baseline,
        candidate,
        n_resamples=n_resamples,
        confidence=options.confidence,
        seed=seed,
        resample_trials=options.resample_trials,
        ties=ties,
    )
    rate_b = np.nanmean(baseline, axis=1)
    rate_c = np.nanmean(candidate, axis=1)
    diffs = rate_c - rate_b
    n_cases = len(diffs)
    se = float(np.std(diffs, ddof=1) / np.sqrt(n_cases)) if n_cases >= 2 else float("nan")
    sign_flip = sign_flip_test(diffs, n_resamples, seed)
    decision = overall_verdict(delta, sign_flip.pvalue, n_cases, options.threshold)
    close = np.isclose(diffs, 0.0, rtol=0.0, atol=1e-12)
    return OverallSummary(
        delta=delta,
        se=se,
        correlation=arm_correlation(rate_b, rate_c),
        wins=int(np.sum((diffs > 0) & ~close)),
        losses=int(np.sum((diffs < 0) & ~close)),
        ties=int(np.sum(close)),
        n_cases=n_cases,
        verdict=decision.verdict,
        sign_flip=sign_flip,
        verdict_note=decision.note,
    )


def paired_compare(
    baseline_df: pd.DataFrame,
    candidate_df: pd.DataFrame,
    *,
    on: Sequence[str] = ("case_id", "condition"),
    trial_col: str = "trial",
    options: CompareOptions | None = None,
) -> PairedComparison:
    """Paired comparison of a candidate against a baseline, matched by case and trial.

    Procedure:

    1. Rows are matched on ``on`` (a unit = a case, by default in one condition); units on one
       side only go to ``unmatched``. Within a unit, trials with the same ``trial_col`` label
       "line up".
    2. Per unit, trials are averaged first; the overall effect is the mean over units of
       ``candidate_rate - baseline_rate``, with a paired cluster-bootstrap interval
       (:func:`paired_bootstrap_delta`, Hesterberg's expanded percentile, widened to contain
       the t interval of the per-case differences and, where every case moved alike, the
       Wilson interval of the mean difference at the number of cases, or with every
       difference zero the exact bound of the aligned pairs' discordance rate: the rule ``lift``'s
       differences use too, :func:`~evalkit.stats.case_delta_interval`), the paired standard
       error and the correlation of the two arms' per-case rates.
    3. ``verdict``: improved when the interval excludes 0, the estimate reaches ``threshold``
       (default 0.05); regressed when the upper bound is below 0. Below 20 cases the exact
       sign-flip test over cases must also reject at ``1 - confidence``, so fewer than 6
       cases (at 95 %) never give a verdict; ``verdict_note`` says why whenever the signals
       differ.
    4. Wins/losses/ties count units by the sign of their difference; McNemar's test (exact
       when fewer than 25 discordant pairs, else chi-square with continuity correction) runs
       on the pass bits of aligned (unit, trial) pairs and is kept for reference (it pools
       trials and ignores clustering).
    5. Per unit: Newcombe interval of the difference of two proportions (scores: Welch t),
       Fisher's exact test (scores: exact permutation test), then Holm (default) across units;
       a unit is named regressed/improved only when its adjusted p-value is below ``alpha``
       (see :mod:`evalkit.stats._verdicts` for the reasoning).

    Args:
        baseline_df: Baseline results (tidy frame).
        candidate_df: Candidate results.
        on: Unit columns to match on.
        trial_col: Trial column; equal labels line up.
        options: How the comparison decides (:class:`CompareOptions`: ``metric``
            ``"passed"`` or ``"score"``, ``threshold`` (default 0.05), ``confidence``,
            ``n_resamples``, ``seed``, ``alpha``, ``correction`` (``"holm"`` by default,
            ``"bonferroni"``, ``"fdr_bh"``, ``"fdr_by"`` or ``"none"``) and
            ``resample_trials``); None: the defaults.

    Returns:
        A :class:`PairedComparison`; its ``cases`` table has the unit columns, then
        ``n_baseline, n_candidate, baseline_rate, candidate_rate, estimate, ci_low, ci_high,
        p_value, p_adjusted, verdict``.

    Raises:
        InputError: Invalid input or arguments, or no unit in common.

    Examples:
        >>> passed = [True, False, False, True, False, False, True, False, False, False, True]
        >>> base = pd.DataFrame({"case_id": list("abcdefghijk"), "condition": "none",
        ...                      "passed": passed})
        >>> cand = base.assign(passed=True)
        >>> options = CompareOptions(n_resamples=2000)
        >>> result = paired_compare(base, cand, options=options)
        >>> result.verdict, result.wins, result.losses, result.ties
        ('improved', 7, 0, 4)
        >>> round(result.delta.estimate, 2), round(result.sign_flip.pvalue, 4)
        (0.64, 0.0156)
        >>> paired_compare(base.head(4), cand.head(4), options=options).verdict_note[:40]
        'no verdict is possible with 4 case(s): t'
    """
    settings = options or CompareOptions()
    on = [on] if isinstance(on, str) else list(on)
    base = as_frame(baseline_df, what="baseline", value=settings.metric, required=on)
    cand = as_frame(candidate_df, what="candidate", value=settings.metric, required=on)
    pairs = build_pairs(base, cand, on, settings.metric, trial_col)
    return compare_matrices(pairs.keys, pairs.baseline, pairs.candidate, pairs.unmatched, settings)
