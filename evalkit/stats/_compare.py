"""``compare``: the library function behind ``evalkit compare``."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

from evalkit.errors import InputError
from evalkit.stats._frame import (
    as_frame,
    check_choice,
    check_confidence,
    check_positive_int,
    match_columns,
)
from evalkit.stats._matrix import build_pairs
from evalkit.stats._paired import PairedComparison, check_threshold, compare_matrices
from evalkit.stats._verdicts import CORRECTIONS

METRICS = ("passed", "score")


def compare(
    baseline: pd.DataFrame | str | os.PathLike[str],
    candidate: pd.DataFrame | str | os.PathLike[str] | None = None,
    *,
    conditions: Sequence[str] | None = None,
    metric: str = "passed",
    threshold: float | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    alpha: float = 0.05,
    correction: str = "holm",
    resample_trials: bool = False,
    runs_dir: str | os.PathLike[str] = "runs",
) -> PairedComparison:
    """Did the candidate do better, worse, or can we not tell yet? (``evalkit compare``).

    Two runs are matched on ``case_id`` and ``condition`` (plus ``provider`` or ``lane`` when
    either run holds several of them), and trials line up by ``trial``. With ``candidate=None`` and
    ``conditions=(A, B)``, two conditions of one run are compared instead: rows of condition
    ``A`` are the baseline, rows of ``B`` the candidate, matched on ``case_id`` (and provider)
    and trial; the ``condition`` reported for every case is then ``"B vs A"`` (e.g.
    ``"preloaded vs none"``). With two runs, ``conditions`` restricts both to those conditions.

    The procedure is :func:`paired_compare`: paired cluster-bootstrap interval and DESIGN.md's
    verdict for the whole comparison; Fisher's exact test per case with Holm's correction (by
    default) for the per-case verdicts. Rows with status ``"skipped"`` are excluded; errors and
    timeouts count as failures.

    Args:
        baseline: Baseline run (directory or run id) or tidy DataFrame.
        candidate: Candidate run or DataFrame; None to compare two conditions of ``baseline``.
        conditions: ``(baseline_condition, candidate_condition)`` for one run, or a filter on
            conditions for two runs.
        metric: ``"passed"`` (pass rate) or ``"score"``.
        threshold: Practical threshold for "improved" (default 0.05: 5 pp, or 0.05 of score).
        confidence: Confidence level.
        n_resamples: Bootstrap replicates.
        seed: Seed (same seed, same result).
        alpha: Per-case significance level after correction.
        correction: Multiplicity correction across cases (``"holm"`` or ``"fdr_bh"``, ...).
        resample_trials: Two-stage bootstrap with trial resampling (conservative).
        runs_dir: Where run ids are looked up.

    Returns:
        A :class:`PairedComparison`; ``.to_dict()`` is the ``compare`` JSON of DESIGN.md.

    Raises:
        InputError: Bad input, unknown conditions, or nothing to match.

    Examples:
        >>> run = pd.DataFrame({
        ...     "case_id": list("abcdefgh") * 2,
        ...     "condition": ["none"] * 8 + ["preloaded"] * 8,
        ...     "passed": [False, False, True, False, False, True, False, False] + [True] * 8,
        ... })
        >>> result = compare(run, conditions=("none", "preloaded"), n_resamples=2000)
        >>> out = result.to_dict()
        >>> out["verdict"], out["wins"], out["cases"][0]["condition"]
        ('improved', 6, 'preloaded vs none')
    """
    check_choice("metric", metric, METRICS)
    check_choice("correction", correction, CORRECTIONS)
    level = check_confidence(confidence)
    alpha = check_confidence(alpha, "alpha")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    limit = check_threshold(threshold)
    base = as_frame(baseline, what="baseline", value=metric, runs_dir=runs_dir)
    if candidate is None:
        if conditions is None or isinstance(conditions, str) or len(conditions) != 2:
            raise InputError(
                "compare needs a candidate run, or `conditions=(baseline, candidate)` naming two "
                f"conditions of the baseline run, but conditions={conditions!r} was passed."
            )
        first, second = (str(c) for c in conditions)
        if first == second:
            raise InputError(f"`conditions` must name two different conditions, not {first!r}.")
        available = sorted(base["condition"].unique())
        for name in (first, second):
            if name not in available:
                raise InputError(
                    f"condition {name!r} is not in the run; available conditions: {available}."
                )
        label = f"{second} vs {first}"
        base_rows = base[base["condition"] == first].assign(condition=label)
        cand_rows = base[base["condition"] == second].assign(condition=label)
    else:
        cand = as_frame(candidate, what="candidate", value=metric, runs_dir=runs_dir)
        base_rows, cand_rows = base, cand
        if conditions is not None:
            wanted = [conditions] if isinstance(conditions, str) else [str(c) for c in conditions]
            present = set(base["condition"]) | set(cand["condition"])
            unknown = [c for c in wanted if c not in present]
            if unknown:
                raise InputError(
                    f"condition(s) {unknown} are in neither run; available: {sorted(present)}."
                )
            base_rows = base[base["condition"].isin(wanted)]
            cand_rows = cand[cand["condition"].isin(wanted)]
            if base_rows.empty or cand_rows.empty:
                raise InputError(
                    f"after keeping conditions {wanted}, one run has no rows left to compare."
                )
    on = match_columns(base_rows, cand_rows)
    pairs = build_pairs(base_rows, cand_rows, on, metric)
    return compare_matrices(
        pairs.keys,
        pairs.baseline,
        pairs.candidate,
        pairs.unmatched,
        metric=metric,
        threshold=limit,
        confidence=level,
        n_resamples=n_resamples,
        seed=seed,
        alpha=alpha,
        correction=correction,
        resample_trials=bool(resample_trials),
    )
