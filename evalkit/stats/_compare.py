"""``compare`` on tables: two result frames, or two conditions of one frame.

The run-level :func:`evalkit.compare` (``evalkit.analysis.compare``) reads runs and calls this.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

from evalkit.errors import InputError
from evalkit.stats._frame import KEY_COLUMNS, as_frame, match_columns, only_columns
from evalkit.stats._options import CompareOptions
from evalkit.stats._paired import PairedComparison
from evalkit.stats._reuse import SAMPLE_COLUMNS
from evalkit.stats._stratified import compare_pair, compare_runs
from evalkit.stats._types import METRICS

#: The columns a comparison reads: the item keys, the outcome, the status (skipped rows are
#: left out, errors count as failures) and the provenance that finds reused pairs. A run
#: holds some forty more; they are dropped before any work, so the per-condition loop does
#: not copy them again and again.
COMPARED_COLUMNS = frozenset((*KEY_COLUMNS, "status", *METRICS, *SAMPLE_COLUMNS))


def compare_tables(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame | None = None,
    *,
    conditions: Sequence[str] | None = None,
    labels: tuple[str, str] | None = None,
    options: CompareOptions | None = None,
) -> PairedComparison:
    """Did the candidate do better, worse, or can we not tell yet? (tables in, verdict out).

    Two runs are matched on ``case_id`` and ``condition`` (plus ``provider`` or ``lane`` when
    either run holds several of them), and trials line up by ``trial``. With ``candidate=None`` and
    ``conditions=(A, B)``, two conditions of one run are compared instead: rows of condition
    ``A`` are the baseline, rows of ``B`` the candidate, matched on ``case_id`` (and provider)
    and trial; the ``condition`` reported for every case is then ``"B vs A"`` (e.g.
    ``"preloaded vs none"``), and the result's ``baseline_label``/``candidate_label`` are ``A``
    and ``B``. With two runs, ``conditions`` restricts both to those conditions.

    The procedure is :func:`paired_compare`: paired cluster-bootstrap interval and the verdict
    of ``docs/architecture.md`` for the whole comparison; Fisher's exact test per case with
    Holm's correction (by default) for the per-case verdicts. Rows with status ``"skipped"``
    are excluded; errors and timeouts count as failures.

    Between two runs every condition is also compared on its own (``by_condition``, each over
    its cases); when the runs share several conditions the overall figures are a pool
    stratified by case (each case one cluster, its per-condition differences averaged), so a
    case is never counted once per condition. Item pairs whose two sides are one sample (an
    outcome reused from the cache, or a deterministic provider with the same seed) are left
    out of every figure and counted in ``reused_items``.

    Args:
        baseline: Baseline results (tidy DataFrame).
        candidate: Candidate results; None to compare two conditions of ``baseline``.
        conditions: ``(baseline_condition, candidate_condition)`` for one run, or a filter on
            conditions for two runs.
        labels: ``(baseline_label, candidate_label)`` of two tables (e.g. their run ids);
            default ``("baseline", "candidate")``. Two conditions are labelled by their names.
        options: How the comparison decides (metric, threshold, confidence, resamples,
            seed, per-case level and corrections, trial resampling; None: the defaults).

    Returns:
        A :class:`PairedComparison`; ``.to_dict()`` is the ``evalkit compare --json`` object.

    Raises:
        InputError: Bad input, unknown conditions, or nothing to match.

    Examples:
        >>> run = pd.DataFrame({
        ...     "case_id": list("abcdefgh") * 2,
        ...     "condition": ["none"] * 8 + ["preloaded"] * 8,
        ...     "passed": [False, False, True, False, False, True, False, False] + [True] * 8,
        ... })
        >>> result = compare_tables(run, conditions=("none", "preloaded"),
        ...                         options=CompareOptions(n_resamples=2000))
        >>> out = result.to_dict()
        >>> out["verdict"], out["wins"], out["cases"][0]["condition"]
        ('improved', 6, 'preloaded vs none')
        >>> result.baseline_label, result.candidate_label, result.conditions
        ('none', 'preloaded', ('none', 'preloaded'))
    """
    settings = options or CompareOptions()
    metric = settings.metric
    base = as_frame(only_columns(baseline, COMPARED_COLUMNS), what="baseline", value=metric)
    names = labels or ("baseline", "candidate")
    compared: tuple[str, str] | None = None
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
        names = compared = (first, second)
        label = f"{second} vs {first}"
        base_rows = base[base["condition"] == first].assign(condition=label)
        cand_rows = base[base["condition"] == second].assign(condition=label)
    else:
        cand = as_frame(only_columns(candidate, COMPARED_COLUMNS), what="candidate", value=metric)
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
    if compared is None:
        result = compare_runs(base_rows, cand_rows, on, settings)
    else:
        result = compare_pair(base_rows, cand_rows, on, settings)
    return dataclasses.replace(
        result, baseline_label=names[0], candidate_label=names[1], conditions=compared
    )
