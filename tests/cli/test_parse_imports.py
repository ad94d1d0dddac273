"""Parsing an analysis command imports no statistics: each handler imports what it runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from evalkit.cli._main import build_parser
try:
    build_parser().parse_args(sys.argv[1:])
except SystemExit:
    pass
print("imported:", " ".join(m for m in ("scipy.stats", "evalkit.stats._allocation_compare",
                           "evalkit.stats._sequential_compare") if m in sys.modules))
"""


@pytest.mark.parametrize(
    "argv",
    [("compare", "--help"), ("lift", "--help"), ("flips", "--help"), ("power", "--help"),
     ("compare", "RUN", "--conditions", "a,b")],
)
def test_parsing_an_analysis_command_imports_no_statistics(argv: tuple[str, ...]) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True,
                          text=True, check=True, timeout=120)
    imported = done.stdout.rsplit("imported:", 1)[1].strip()
    assert imported == "", f"imported while parsing: {imported}"
