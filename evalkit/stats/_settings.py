"""The practical threshold: its one default and its one range rule (no heavy imports).

Every layer that takes a threshold (the statistics, the gate policy, the optimiser, the
command line) takes its default and its check from here, so ``evalkit --help`` and a policy
file read it without loading numpy.
"""

from __future__ import annotations

import math

from evalkit.errors import InputError

#: Practical threshold of "improved": 5 pp of pass rate (or 0.05 of score).
DEFAULT_THRESHOLD = 0.05


def check_threshold(threshold: float | None) -> float:
    """Return the practical threshold, validated to lie in [0, 1] (None: the default).

    The threshold is a difference of pass rates (or of scores, which lie in [0, 1]), so no
    value above 1 can ever be reached.

    Args:
        threshold: The threshold passed, or None for :data:`DEFAULT_THRESHOLD`.

    Returns:
        The threshold as a float.

    Raises:
        InputError: Not a number in [0, 1]; the message names ``threshold``.

    Examples:
        >>> check_threshold(None), check_threshold(0.1)
        (0.05, 0.1)
    """
    if threshold is None:
        return DEFAULT_THRESHOLD
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        value = math.nan
    if not 0.0 <= value <= 1.0:
        raise InputError(
            "The value for `threshold` must be a number in [0, 1] (e.g. 0.05 for 5 pp), "
            f"but {threshold!r} was passed."
        )
    return value


def threshold_field(value: float) -> float:
    """:func:`check_threshold` as a settings model's field validator (it raises ``ValueError``).

    ``threshold: Annotated[float, AfterValidator(threshold_field)]`` gives a model the one
    range rule, reported by pydantic under the field's name.

    Raises:
        ValueError: Not a number in [0, 1].
    """
    try:
        return check_threshold(value)
    except InputError as exc:
        raise ValueError(str(exc)) from None
