"""The settings every paired comparison shares, validated once: :class:`CompareOptions`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from evalkit._settings import ALPHA, CONFIDENCE, N_RESAMPLES, SEED
from evalkit.errors import InputError
from evalkit.stats._frame import check_choice
from evalkit.stats._settings import DEFAULT_THRESHOLD, check_threshold
from evalkit.stats._types import CORRECTIONS, METRICS, Correction, Metric


@dataclass(frozen=True)
class CompareOptions:
    """How a paired comparison decides, as one validated object.

    :func:`~evalkit.stats.compare`, :func:`~evalkit.stats.paired_compare` and
    :func:`~evalkit.stats.sequential_compare_tables` take it as ``options=``. Every field is
    checked when the object is built (an :class:`~evalkit.errors.InputError` names the
    field), so a function given ``options=`` never checks them again; the flat keyword
    arguments of those functions build one of these.

    Attributes:
        metric: ``"passed"`` (pass rate) or ``"score"``.
        threshold: Practical threshold of "improved", in [0, 1] (5 pp of pass rate, or 0.05
            of score, by default).
        confidence: Confidence level of the intervals, in (0, 1).
        n_resamples: Bootstrap replicates (>= 100).
        seed: Seed (same seed, same result); None draws a fresh one.
        alpha: Per-case significance level after correction, in (0, 1).
        correction: Multiplicity correction across cases (``"holm"``, ``"fdr_bh"``, ...).
        resample_trials: Two-stage bootstrap with trial resampling (conservative).

    Examples:
        >>> CompareOptions(threshold=0.1).threshold
        0.1
        >>> CompareOptions(metric="score", n_resamples=2000).confidence
        0.95
    """

    metric: Metric = "passed"
    threshold: float = DEFAULT_THRESHOLD
    confidence: float = CONFIDENCE.default
    n_resamples: int = N_RESAMPLES.default
    seed: int | None = SEED.default
    alpha: float = ALPHA.default
    correction: Correction = "holm"
    resample_trials: bool = False

    def __post_init__(self) -> None:
        """Check every field (the first bad one raises, named) and store it normalised."""
        check_choice("metric", self.metric, METRICS)
        check_choice("correction", self.correction, CORRECTIONS)
        checked = {
            "confidence": CONFIDENCE.check(self.confidence),
            "alpha": ALPHA.check(self.alpha),
            "n_resamples": N_RESAMPLES.check(self.n_resamples),
            "threshold": check_threshold(self.threshold),
            "resample_trials": bool(self.resample_trials),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)


#: The flat keyword arguments a comparison function takes instead of ``options``, each with
#: the value that means "not given" (``threshold=None`` is the default threshold).
_UNSET: dict[str, Any] = {
    field.name: None if field.name == "threshold" else field.default
    for field in dataclasses.fields(CompareOptions)
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
    if options is None:
        if flat.get("threshold") is None:
            flat["threshold"] = DEFAULT_THRESHOLD
        return CompareOptions(**flat)
    if not isinstance(options, CompareOptions):
        raise InputError(
            f"`options` must be a CompareOptions, not {type(options).__name__}"
        )
    changed = sorted(name for name, value in flat.items() if value != _UNSET[name])
    if changed:
        raise InputError(
            f"pass {', '.join(f'`{name}`' for name in changed)} inside `options` "
            "(CompareOptions) or leave `options` out, not both"
        )
    return options
