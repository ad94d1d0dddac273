"""The settings every paired comparison shares, validated once: :class:`CompareOptions`."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from evalkit._options import Options
from evalkit._settings import (
    ALPHA,
    CASE_CORRECTION,
    CONFIDENCE,
    CORRECTION,
    N_RESAMPLES,
    SEED,
    THRESHOLD,
    Alpha,
    CaseCorrectionChoice,
    Confidence,
    CorrectionChoice,
    Resamples,
    Seed,
    Threshold,
)
from evalkit.stats._frame import check_choice
from evalkit.stats._types import METRICS, Metric


class CompareOptions(Options):
    """How a paired comparison decides, as one validated object.

    :func:`~evalkit.stats.compare_tables`, :func:`~evalkit.stats.paired_compare` and
    :func:`~evalkit.stats.sequential_compare_tables` take it as ``options=``. Every field is
    checked when the object is built (a :class:`~evalkit.errors.ConfigError` names the flag
    and the field), so a function given ``options=`` never checks them
    again; only the top-level :func:`evalkit.compare` takes the fields as flat keywords.

    Attributes:
        metric: ``"passed"`` (pass rate) or ``"score"``.
        threshold: Practical threshold of "improved", in [0, 1] (5 pp of pass rate, or 0.05
            of score, by default).
        confidence: Confidence level of the intervals, in (0, 1).
        n_resamples: Bootstrap replicates (>= 100).
        seed: Seed (same seed, same result); None draws a fresh one.
        alpha: Per-case significance level after correction, in (0, 1).
        correction: Multiplicity correction across the per-unit rows (one per case and
            provider/condition: ``"holm"``, ``"fdr_bh"``, ...).
        case_correction: Correction across the pooled case rows, the screen of which cases
            moved (:mod:`evalkit.stats._case_screen`): ``"fdr_bh"`` (Benjamini-Hochberg, the
            default: a false discovery rate), ``"fdr_by"`` or ``"holm"`` (family-wise, for
            confirmatory uses such as the gate).
        resample_trials: Two-stage bootstrap with trial resampling (conservative).

    Examples:
        >>> CompareOptions(threshold=0.1).threshold
        0.1
        >>> CompareOptions(metric="score", n_resamples=2000).confidence
        0.95
    """

    metric: Metric = "passed"
    threshold: Threshold = THRESHOLD.default
    confidence: Confidence = CONFIDENCE.default
    n_resamples: Resamples = N_RESAMPLES.default
    seed: Seed | None = SEED.default
    alpha: Alpha = ALPHA.default
    correction: CorrectionChoice = CORRECTION.default
    case_correction: CaseCorrectionChoice = CASE_CORRECTION.default
    resample_trials: bool = False

    @model_validator(mode="before")
    @classmethod
    def _choices(cls, data: Any) -> Any:
        """The metric, checked before its type (the corrections are checked by their entries)."""
        if isinstance(data, dict):
            check_choice("metric", data.get("metric", "passed"), METRICS)
        return data
