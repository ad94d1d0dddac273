"""The built-in readers behind the importer registry, each in the registry's one signature.

Each adapter imports its format's module only when that format is read. The promptfoo,
skill-creator, Harbor and Terminal-Bench readers take the request themselves.
"""

from __future__ import annotations

from evalkit.interop._import_common import ParsedSource
from evalkit.interop._import_options import InspectOptions
from evalkit.interop._import_registry import ImportRequest


def read_csv(request: ImportRequest) -> ParsedSource:
    """``--format csv``: columns ``case_id, condition, passed`` and optional ones."""
    from evalkit.interop._import_tables import read_result_rows_table

    return read_result_rows_table(request.files, "csv", request.lane)


def read_jsonl(request: ImportRequest) -> ParsedSource:
    """``--format jsonl``: one JSON object per line, the CSV's columns."""
    from evalkit.interop._import_tables import read_result_rows_table

    return read_result_rows_table(request.files, "jsonl", request.lane)


def read_inspect_logs(request: ImportRequest) -> ParsedSource:
    """``--format inspect``: Inspect AI ``.eval``/``.json`` logs."""
    from evalkit.interop._import_inspect import read_inspect

    options = request.options_as(InspectOptions)
    return read_inspect(
        request.files, request.listed, options.condition_from, options.scorer, request.lane
    )
