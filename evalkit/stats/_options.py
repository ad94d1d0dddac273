"""The settings every paired comparison shares, validated once: :class:`CompareOptions`."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from evalkit._options import Options, merge_flat
from evalkit._settings import (
    ALPHA,
    CONFIDENCE,
    N_RESAMPLES,
    SEED,
    THRESHOLD,
    Alpha,
    Confidence,
    Resamples,
    Threshold,
)
from evalkit.stats._frame import check_choice
from evalkit.stats._settings import DEFAULT_THRESHOLD
from evalkit.stats._types import CORRECTIONS, METRICS, Correction, Metric


class CompareOptions(Options):
    """How a paired comparison decides, as one validated object.

    :func:`~evalkit.stats.compare_tables`, :func:`~evalkit.stats.paired_compare` and
    :func:`~evalkit.stats.sequential_compare_tables` take it as ``options=``. Every field is
    checked when the object is built (a :class:`~evalkit.errors.ConfigError` names the flag
    and the field, as for a flat keyword), so a function given ``options=`` never checks them
    again; the flat keyword arguments of those functions build one of these.

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
    seed: int | None = SEED.default
    alpha: Alpha = ALPHA.default
    correction: Correction = "holm"
    case_correction: Correction = "fdr_bh"
    resample_trials: bool = False

    @classmethod
    def resolve(cls, options: CompareOptions | None = None, **flat: Any) -> CompareOptions:
        """The options of a call given as an object or as flat keywords (never both).

        The one place where a flat ``threshold=None`` becomes the default threshold.

        Args:
            options: The options object passed, or None.
            **flat: The call's flat keywords of the same names (``threshold=None`` meaning
                the default; a keyword left out or at its default is not given).

        Raises:
            InputError: A flat keyword was changed from its default beside ``options``, or a
                value is out of range (a ``ConfigError`` naming the flag and the field).

        Examples:
            >>> CompareOptions.resolve(None, threshold=None).threshold
            0.05
            >>> CompareOptions.resolve(CompareOptions(seed=3), seed=0).seed
            3
        """
        return compare_options(options, **flat)

    @model_validator(mode="before")
    @classmethod
    def _choices(cls, data: Any) -> Any:
        """The named choices, checked with the message every choice of evalkit has."""
        if isinstance(data, dict):
            check_choice("metric", data.get("metric", "passed"), METRICS)
            check_choice("correction", data.get("correction", "holm"), CORRECTIONS)
            check_choice("case_correction", data.get("case_correction", "fdr_bh"), CORRECTIONS)
        return data


#: The flat keyword arguments a comparison function takes instead of ``options``, each with
#: the value that means "not given" (``threshold=None`` is the default threshold).
_UNSET: dict[str, Any] = {
    name: None if name == "threshold" else field.default
    for name, field in CompareOptions.model_fields.items()
}


def compare_options(options: CompareOptions | None, **flat: Any) -> CompareOptions:
    """The options of a call: ``options`` as given, or built from the flat keywords.

    Args:
        options: The options object passed, or None.
        **flat: The call's flat keyword arguments of the same names (``threshold=None``
            meaning the default).

    Returns:
        The options, validated.

    Raises:
        InputError: A flat keyword was changed from its default beside ``options`` (which
            of the two would win is not obvious), or a value is out of range.
    """
    given = merge_flat("options", options, CompareOptions, _UNSET, flat)
    if given is not None:
        return given
    if flat.get("threshold") is None:
        flat["threshold"] = DEFAULT_THRESHOLD
    return CompareOptions(**flat)
