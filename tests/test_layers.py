"""Packages import each other only through their public ``__init__``, and never in a circle."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

import evalkit

ROOT = Path(evalkit.__file__).parent
#: Packages whose imports are held to the rule (every package, once all of them follow it).
CHECKED = ("analysis", "cases", "cli", "matrix", "optimize", "report", "results", "stats")


def _imports() -> dict[Path, list[str]]:
    found: dict[Path, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        names: list[str] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.append(node.module)
            elif isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
        found[path] = [n for n in names if n.startswith("evalkit.")]
    return found


def _package(path: Path) -> str | None:
    parts = path.relative_to(ROOT).parts
    return parts[0] if len(parts) > 1 else None


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for path, names in _imports().items():
        source = _package(path)
        for name in names:
            target = name.split(".")[1]
            if source and target != source and not target.startswith("_") and target != "errors":
                edges[source].add(target)
    return edges


@pytest.mark.parametrize("package", CHECKED)
def test_no_import_of_another_package_private_module(package: str) -> None:
    offending = []
    for path, names in _imports().items():
        if _package(path) != package:
            continue
        for name in names:
            bits = name.split(".")
            if len(bits) > 2 and bits[1] != package and bits[2].startswith("_"):
                offending.append(f"{path.relative_to(ROOT)}: {name}")
    assert not offending, "import the package instead: " + "; ".join(offending)


@pytest.mark.parametrize("package", CHECKED)
def test_no_import_cycle_through(package: str) -> None:
    edges = _graph()

    def reachable(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    assert package not in reachable(package), f"{package} imports itself through another package"


def test_statistics_and_results_sit_at_the_bottom() -> None:
    edges = _graph()
    assert edges.get("stats", set()) == set()
    assert edges.get("results", set()) == set()
