"""One refusal for every bad record of an import: each named, up to a cap, then counted."""

from __future__ import annotations

from evalkit.errors import InputError

#: Bad records named in one error before the rest are only counted.
MAX_LISTED = 20


def refusal(problems: list[str], total: int, what: str) -> InputError:
    """The error of an import refused for ``problems`` (nothing is imported).

    Args:
        problems: One line per bad record, naming its file, where in it and what is wrong.
        total: How many records were read, good and bad.
        what: What the bad records are not, after the count (``"Harbor trial results
            cannot be imported"``).

    Returns:
        The error: the count, then the first :data:`MAX_LISTED` problems, then how many more.

    Examples:
        >>> print(refusal(["a.json: x", "b.json: y"], 5, "rows are bad"))
        2 of 5 rows are bad; nothing was imported:
          a.json: x
          b.json: y
    """
    shown = problems[:MAX_LISTED]
    more = len(problems) - len(shown)
    lines = "\n  ".join(shown) + (f"\n  ... and {more} more" if more else "")
    return InputError(f"{len(problems)} of {total} {what}; nothing was imported:\n  {lines}")
