"""Percentages as every surface prints them, so one number rounds one way everywhere.

The same delta computed two ways (a mean of per-case differences in ``compare``, a difference
of per-case means in ``lift``) can differ in the last bit, 0.03749999999999999 against
0.0375, and at one decimal that prints as +3.7 pp in one place and +3.8 pp in the other.
Rounding to nine decimals of a percentage point first removes that float noise before the
display rounding.
"""

from __future__ import annotations


def percent(value: float) -> float:
    """``value * 100`` with float noise below 1e-9 percentage points removed.

    Examples:
        >>> f"{percent(0.03749999999999999):.1f}", f"{percent(0.0375):.1f}"
        ('3.8', '3.8')
    """
    return round(float(value) * 100.0, 9)
