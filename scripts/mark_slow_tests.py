"""Mark every test that took longer than a limit with ``@pytest.mark.slow``.

Reads the ``--durations=0`` report of a pytest run (its standard output, saved to a file) and
adds the marker above each slow test function that does not carry it yet, so
``make test-fast`` (``-m "not slow and not serial"``) stays fast::

    .venv/bin/python -m pytest -n 4 --dist loadgroup --durations=0 -q > durations.log
    .venv/bin/python scripts/mark_slow_tests.py durations.log --over 5

A parametrized test is marked as a whole when any of its cases is slow (call, setup and teardown
time of one case are added up). Only ``tests/`` files are edited; ``import pytest`` is added where
a file lacks it.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_LINE = re.compile(r"^\s*([0-9.]+)s\s+(call|setup|teardown)\s+(\S+)")


def slow_functions(report: str, over: float) -> dict[Path, set[str]]:
    """Test functions (file, qualified name) whose slowest case took more than ``over`` s."""
    per_case: dict[str, float] = defaultdict(float)
    for line in report.splitlines():
        match = _LINE.match(line)
        if match:
            per_case[match.group(3)] += float(match.group(1))
    out: dict[Path, set[str]] = defaultdict(set)
    for nodeid, seconds in per_case.items():
        if seconds <= over or not nodeid.startswith("tests/") or "::" not in nodeid:
            continue
        file, _, name = nodeid.partition("::")
        out[ROOT / file].add(name.split("@")[0].split("[")[0].replace("::", "."))
    return out


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[f"{node.name}.{item.name}"] = item
    return found


def _is_slow_marker(decorator: ast.expr) -> bool:
    return ast.unparse(decorator) == "pytest.mark.slow"


def mark(path: Path, names: set[str]) -> int:
    """Add ``@pytest.mark.slow`` to the named functions of one file; how many were added."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    module_marked = any(
        isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark"
                                             for t in node.targets)
        and "pytest.mark.slow" in ast.unparse(node.value)
        for node in tree.body
    )
    if module_marked:
        return 0
    lines = source.splitlines(keepends=True)
    functions = _functions(tree)
    inserts = []
    for name in names:
        node = functions.get(name)
        if node is None or any(_is_slow_marker(d) for d in node.decorator_list):
            continue
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        indent = " " * node.col_offset
        inserts.append((first - 1, f"{indent}@pytest.mark.slow\n"))
    for index, text in sorted(inserts, reverse=True):
        lines.insert(index, text)
    if inserts and not any(
        isinstance(n, ast.Import) and any(a.name == "pytest" for a in n.names) for n in tree.body
    ):
        after = next((n.end_lineno or 0 for n in tree.body
                      if isinstance(n, ast.ImportFrom) and n.module == "__future__"), 0)
        lines.insert(after, "import pytest\n")  # ruff --fix sorts it
    path.write_text("".join(lines), encoding="utf-8")
    return len(inserts)


def main() -> None:
    """Read the report, mark the files, print what was marked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="pytest output with --durations=0")
    parser.add_argument("--over", type=float, default=5.0, help="seconds (default 5)")
    args = parser.parse_args()
    total = 0
    for path, names in sorted(slow_functions(args.report.read_text(), args.over).items()):
        added = mark(path, names)
        total += added
        if added:
            print(f"{path.relative_to(ROOT)}: {added} marked")
    print(f"{total} test function(s) marked slow")


if __name__ == "__main__":
    main()
