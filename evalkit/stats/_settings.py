"""The practical threshold and the bootstrap replicates, as the settings' table declares them.

The threshold's one default and its one range rule are the entry
:data:`evalkit._settings.THRESHOLD` of the shared settings' table; every layer that takes a
threshold (the statistics, the gate policy, the optimiser, the command line) takes them from
there or from here, so ``evalkit --help`` and a policy file read them without loading numpy.

The bootstrap replicates' two defaults are its entries :data:`evalkit._settings.N_RESAMPLES`
and :data:`evalkit._settings.N_RESAMPLES_QUICK`, named here for the notebooks, whose
parameters take them instead of writing a number again: a notebook and the command line then
draw the same resamples and print the same interval for the same run and seed.
"""

from __future__ import annotations

from evalkit._settings import N_RESAMPLES, N_RESAMPLES_QUICK, THRESHOLD
from evalkit.errors import InputError

#: Practical threshold of "improved": 5 pp of pass rate (or 0.05 of score).
DEFAULT_THRESHOLD = THRESHOLD.default

#: Bootstrap replicates of an interval read once: compare, the gate, lift and their reports.
DEFAULT_RESAMPLES = N_RESAMPLES.default

#: Bootstrap replicates of the loops that compute an interval many times (a trend's periods,
#: pairwise cases, ablated components): screens, not the reported verdict.
QUICK_RESAMPLES = N_RESAMPLES_QUICK.default


def check_threshold(threshold: float | None) -> float:
    """Return the practical threshold, validated to lie in [0, 1] (None: the default).

    The threshold is a difference of pass rates (or of scores, which lie in [0, 1]), so no
    value above 1 can ever be reached.

    Args:
        threshold: The threshold passed, or None for :data:`DEFAULT_THRESHOLD`.

    Returns:
        The threshold as a float.

    Raises:
        ConfigError: Not a number in [0, 1]; the message names ``--threshold`` and
            ``threshold`` (:meth:`evalkit._settings.Setting.check`).

    Examples:
        >>> check_threshold(None), check_threshold(0.1)
        (0.05, 0.1)
    """
    if threshold is None:
        return DEFAULT_THRESHOLD
    return THRESHOLD.check(threshold)


def threshold_field(value: float) -> float:
    """:func:`check_threshold` as a settings model's field validator (it raises ``ValueError``).

    ``threshold: Annotated[float, AfterValidator(threshold_field)]`` gives a model the one
    range rule, reported by pydantic under the field's name (as the field type
    ``evalkit._settings.Threshold`` does).

    Raises:
        ValueError: Not a number in [0, 1].
    """
    try:
        return check_threshold(value)
    except InputError as exc:
        raise ValueError(str(exc)) from None
