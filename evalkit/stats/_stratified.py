"""Comparing two runs like with like: one comparison per condition, a pool stratified by case.

Two runs of a suite hold every case under several conditions. An edit to a skill changes only
the conditions that show the skill; pooling every (case, condition) as if it were a case of its
own dilutes the effect with unchanged conditions and counts each case once per condition. So
:func:`compare_runs` reports one comparison per condition (each over its cases) and, when there
are several, an overall figure in which each case is one cluster: its per-condition differences
are averaged first, then the paired interval, the sign-flip test and the verdict run over
cases. Pairs whose two sides are one sample are left out everywhere
(:mod:`evalkit.stats._reuse`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import partial

import numpy as np
import pandas as pd

from evalkit.stats._case_table import CASE_COLUMNS
from evalkit.stats._heterogeneity import heterogeneity
from evalkit.stats._interval import Interval
from evalkit.stats._matrix import PairedData, build_pairs, restrict_pairs
from evalkit.stats._options import CompareOptions
from evalkit.stats._paired import (
    OverallSummary,
    PairedComparison,
    compare_matrices,
    overall_summary,
)
from evalkit.stats._reuse import (
    ReuseSplit,
    reused_note,
    split_reused,
    split_reused_by,
    split_reused_counting_by,
)
from evalkit.stats._row_family import correct_family
from evalkit.stats._ties import RowPairs, pair_ties


def _share_a_unit(base: pd.DataFrame, cand: pd.DataFrame, on: Sequence[str]) -> bool:
    """Whether two validated frames hold at least one unit (``on`` values) in common.

    The unit columns of validated frames are strings without missing values, so units are
    compared as tuples of them.
    """
    if base.empty or cand.empty:
        return False
    units = set(zip(*(base[c].tolist() for c in on), strict=True))
    return any(unit in units for unit in zip(*(cand[c].tolist() for c in on), strict=True))


def no_evidence(
    on: Sequence[str], options: CompareOptions, reused: int, pairs: int
) -> PairedComparison:
    """The comparison of two sides whose every matched pair is one sample: inconclusive.

    Args:
        on: Unit columns.
        options: Comparison options.
        reused: Pairs left out.
        pairs: Pairs matched in all.

    Returns:
        An inconclusive comparison over 0 cases with undefined estimate and interval.
    """
    nan = float("nan")
    note = reused_note(reused, pairs)
    return PairedComparison(
        metric=options.metric,
        delta=Interval(nan, nan, nan, options.confidence, "paired-cluster-bootstrap"),
        se=nan,
        correlation=nan,
        wins=0,
        losses=0,
        ties=0,
        n_cases=0,
        mcnemar=None,
        verdict="inconclusive",
        threshold=options.threshold,
        alpha=options.alpha,
        correction=options.correction,
        cases=pd.DataFrame(columns=[*on, *CASE_COLUMNS]),
        unmatched=pd.DataFrame(columns=[*on, "side", "n"]),
        verdict_note=note,
        reused_items=reused,
        reuse_note=note,
    )


def _no_common_case(
    on: Sequence[str], options: CompareOptions, reused: int, n_pairs: int
) -> PairedComparison:
    """A part whose two sides share no unit once reused pairs are out: inconclusive, saying why.

    Args:
        on: Unit columns.
        options: Comparison options.
        reused: Pairs of the part left out as one sample.
        n_pairs: Pairs of the part matched in all.

    Returns:
        :func:`no_evidence`, noting that the runs share no case when no pair was reused.
    """
    result = no_evidence(on, options, reused, n_pairs)
    if reused:
        return result
    return dataclasses.replace(result, verdict_note="the two sides share no case here")


def compare_pair(
    base: pd.DataFrame,
    cand: pd.DataFrame,
    on: Sequence[str],
    options: CompareOptions,
    *,
    part: bool = False,
    split: ReuseSplit | None = None,
    pooled: bool = False,
    pairs: PairedData | None = None,
) -> PairedComparison:
    """One paired comparison on units ``on``, its reused pairs left out.

    Args:
        base: Validated baseline rows.
        cand: Validated candidate rows.
        on: Unit columns.
        options: Comparison options.
        part: The rows are one condition of a larger comparison: sharing no unit gives an
            inconclusive comparison over 0 cases instead of an error.
        split: ``split_reused(base, cand, [*on, "trial"])`` when the caller has it already.
        pooled: The units span several conditions: the overall figures are a pool stratified
            by case (see :func:`stratified_summary`) instead of a pool over units.
        pairs: ``build_pairs`` of ``split``'s two sides when the caller has it already.

    Returns:
        The comparison, with ``reused_items`` and ``reuse_note``.

    Raises:
        InputError: The two sides share no unit (reused pairs aside) and ``part`` is False.
    """
    if split is None:
        split = split_reused(base, cand, [*on, "trial"])
    reused = len(split.reused)
    if (reused or part) and not _share_a_unit(split.baseline, split.candidate, on):
        return _no_common_case(on, options, reused, split.n_pairs)
    providers = _providers(split, on)
    pooled = pooled or len(providers) > 1
    if pairs is None:
        pairs = build_pairs(split.baseline, split.candidate, on, options.metric)
    result = compare_matrices(
        pairs.keys,
        pairs.baseline,
        pairs.candidate,
        pairs.unmatched,
        options,
        summary=partial(stratified_summary, on=on, options=options) if pooled else None,
        screen=not part,
    )
    note = reused_note(reused, split.n_pairs)
    result = dataclasses.replace(result, reused_items=reused, reuse_note=note)
    if len(providers) > 1:
        result = with_providers(result, base, cand, on, options, providers)
    return result


def compare_parts(
    splits: dict[str, ReuseSplit],
    names: Sequence[str],
    on: Sequence[str],
    options: CompareOptions,
    *,
    pooled: bool = False,
) -> tuple[tuple[str, PairedComparison], ...]:
    """:func:`compare_pair` of each part of a split (one condition, one provider).

    Args:
        splits: Each part's :class:`ReuseSplit` (``split_reused_by``).
        names: The parts, in the order reported.
        on: Unit columns.
        options: Comparison options.
        pooled: Each part spans several conditions (its figures pooled by case).

    Returns:
        ``(name, comparison)`` per part.
    """
    return tuple(
        (
            name,
            compare_pair(
                splits[name].baseline,
                splits[name].candidate,
                on,
                options,
                part=True,
                split=splits[name],
                pooled=pooled,
            ),
        )
        for name in names
    )


def _providers(split: ReuseSplit, on: Sequence[str]) -> tuple[str, ...]:
    """The providers of a comparison's evidence (empty when ``provider`` is not a unit)."""
    if "provider" not in on:
        return ()
    both = set(split.baseline["provider"].unique()) | set(split.candidate["provider"].unique())
    return tuple(sorted(str(p) for p in both))


def with_providers(
    result: PairedComparison,
    base: pd.DataFrame,
    cand: pd.DataFrame,
    on: Sequence[str],
    options: CompareOptions,
    providers: tuple[str, ...],
) -> PairedComparison:
    """Add one comparison per provider and the heterogeneity across them to ``result``.

    Each provider is compared on its own rows (its cases pooled over conditions, stratified
    by case, when there are several conditions); the heterogeneity figures come from the
    per-(case, provider) differences of ``result.cases``, centred on the case-clustered pool.

    Args:
        result: The pooled comparison (its overall figures clustered by case).
        base: Its validated baseline rows.
        cand: Its validated candidate rows.
        on: Unit columns (with ``provider``).
        options: Comparison options.
        providers: The providers, sorted.

    Returns:
        ``result`` with ``by_provider``, ``pooled_providers`` and ``heterogeneity``.
    """
    several_conditions = "condition" in on and result.cases["condition"].nunique() > 1
    _, splits = split_reused_by(base, cand, [*on, "trial"], "provider", providers)
    parts = correct_family(
        compare_parts(splits, providers, on, options, pooled=several_conditions),
        1.0 - options.confidence,
        "providers",
    )
    clusters = [c for c in on if c not in ("condition", "provider")]
    spread = heterogeneity(
        result.cases,
        clusters=clusters,
        estimate=result.delta.estimate,
        se=result.se,
        confidence=options.confidence,
    )
    method = result.delta.method.replace("stratified-by-case", "clustered-by-case")
    counted = {name for name, part in parts if part.n_cases > 0}
    return dataclasses.replace(
        result,
        delta=result.delta._replace(method=method),
        by_provider=parts,
        pooled_providers=tuple(p for p in providers if p in counted),
        left_out_providers=tuple(
            (p, _sides_of(p, splits[p])) for p in providers if p not in counted
        ),
        heterogeneity=spread,
    )


def _sides_of(provider: str, split: ReuseSplit) -> str:
    """Which side of a comparison a provider that contributed no case has items on.

    Returns:
        ``"baseline"`` or ``"candidate"`` (it ran only that side), ``"reused"`` (its only
        pairs were one sample), or ``"both"`` (both sides ran, but no case on both).
    """
    if len(split.reused):
        return "reused"
    on_baseline, on_candidate = len(split.baseline) > 0, len(split.candidate) > 0
    if on_baseline and not on_candidate:
        return "baseline"
    if on_candidate and not on_baseline:
        return "candidate"
    return "both"


def stratified_summary(
    cases: pd.DataFrame, pairs: RowPairs, on: Sequence[str], options: CompareOptions
) -> OverallSummary:
    """The overall figures of a (case, condition) comparison as a pool over cases.

    Each case (the unit columns but ``condition``) is one cluster whose difference is the
    mean of its per-condition differences; the interval, the sign-flip test, the verdict and
    wins/losses/ties are then over cases (resampling cases: with ``resample_trials`` only
    the per-condition comparisons resample trials too). Per-(case, condition) rows, their
    exact tests and the unmatched items stay as they are.

    Args:
        cases: The per-(case, condition) table of the comparison (:func:`case_table`).
        pairs: Its rows' aligned trial pairs (for the interval where every case tied).
        on: Its unit columns.
        options: Comparison options.

    Returns:
        The overall figures, their interval's method marked ``stratified-by-case``.
    """
    clusters = [c for c in on if c not in ("condition", "provider")]
    grouped = cases.groupby(clusters, sort=True)
    rates = grouped[["baseline_rate", "candidate_rate"]].mean()
    overall = overall_summary(
        rates["baseline_rate"].to_numpy(dtype=float)[:, None],
        rates["candidate_rate"].to_numpy(dtype=float)[:, None],
        options.model_copy(update={"resample_trials": False}),  # one rate per case
        pair_ties(pairs, grouped.ngroup().to_numpy()),
    )
    delta = overall["delta"]
    return {**overall, "delta": delta._replace(method=f"{delta.method}, stratified-by-case")}


def compare_runs(
    base: pd.DataFrame, cand: pd.DataFrame, on: Sequence[str], options: CompareOptions
) -> PairedComparison:
    """Two runs compared per condition, with a pool stratified by case when there are several.

    The reused pairs are found once for both runs and shared out to the conditions (a pair
    lies in one condition), and with one provider the items are paired once and each
    condition cut out of the pairs; the overall figures of several conditions are computed
    only as the stratified pool.

    Args:
        base: Validated baseline rows.
        cand: Validated candidate rows.
        on: Unit columns (``case_id``, ``condition`` and maybe ``lane``/``provider``).
        options: Comparison options.

    Returns:
        The overall comparison with ``by_condition`` (one entry per condition both runs hold).

    Raises:
        InputError: The runs share no unit.
    """
    shared = tuple(sorted(set(base["condition"]) & set(cand["condition"])))
    keys = [*on, "trial"]
    pooled = len(shared) > 1
    if "provider" in on:  # each condition's providers are compared apart: split its rows
        split, parts = split_reused_by(base, cand, keys, "condition", shared)
        by_condition = compare_parts(parts, shared, on, options)
        overall = compare_pair(base, cand, on, options, split=split, pooled=pooled)
    else:
        split, counts = split_reused_counting_by(base, cand, keys, "condition", shared)
        whole = (
            build_pairs(split.baseline, split.candidate, on, options.metric)
            if _share_a_unit(split.baseline, split.candidate, on)
            else None
        )
        by_condition = tuple(
            (name, _condition_comparison(split, whole, name, on, options, *counts[name]))
            for name in shared
        )
        overall = compare_pair(base, cand, on, options, split=split, pooled=pooled, pairs=whole)
    if pooled:
        overall = dataclasses.replace(overall, pooled_conditions=shared)
    by_condition = correct_family(by_condition, 1.0 - options.confidence, "conditions")
    return dataclasses.replace(overall, by_condition=by_condition)


def _condition_comparison(
    split: ReuseSplit,
    whole: PairedData | None,
    name: str,
    on: Sequence[str],
    options: CompareOptions,
    reused: int,
    n_pairs: int,
) -> PairedComparison:
    """One condition of :func:`compare_runs` (one provider), cut out of the pairs of every one.

    It is what :func:`compare_pair` gives for the condition's rows of ``split`` with
    ``part=True``.
    """
    pairs = None
    if whole is not None:
        in_base = (split.baseline["condition"] == name).to_numpy(dtype=bool)
        in_cand = (split.candidate["condition"] == name).to_numpy(dtype=bool)
        trials = np.unique(
            np.concatenate(
                [
                    split.baseline["trial"].to_numpy()[in_base],
                    split.candidate["trial"].to_numpy()[in_cand],
                ]
            )
        )
        pairs = restrict_pairs(whole, "condition", name, trials)
    if pairs is None or pairs.keys.empty:
        return _no_common_case(on, options, reused, n_pairs)
    result = compare_matrices(
        pairs.keys, pairs.baseline, pairs.candidate, pairs.unmatched, options, screen=False
    )
    return dataclasses.replace(result, reused_items=reused, reuse_note=reused_note(reused, n_pairs))
