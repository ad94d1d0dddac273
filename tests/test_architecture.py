"""The package structure of docs/architecture.md, checked against the code's own imports.

Every ``import`` statement in ``evalkit/`` (module level or inside a function: an import
deferred to call time is still a dependency) is read with :mod:`ast`. The tests fail on an
import cycle between modules or between packages, on an import of another package's private
module, and on a package importing one that docs/architecture.md does not allow it to.

A public name that moved keeps its old path as a deprecated alias, declared in its old
package's ``_MOVED`` table (names of packages, not imports: the old package does not depend on
the new one); the tests check that each alias answers, with a warning, the new package's name.
"""

from __future__ import annotations

import ast
import importlib
from collections import defaultdict
from pathlib import Path

import pytest

from evalkit._lazy import declared_aliases

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evalkit"

# What each package may import (besides itself), as docs/architecture.md states it. Root-level
# modules (``evalkit.errors``, ``evalkit._version``, ...) are the foundation every package uses.
ALLOWED: dict[str, set[str]] = {
    "sandbox": set(),
    "cases": {"sandbox"},
    "results": set(),
    "stats": set(),
    "matrix": {"cases", "scorers"},
    "providers": {"cases", "sandbox"},
    "scorers": {"cases", "providers", "sandbox"},
    "judge": {"cases", "providers", "results", "stats"},
    "runner": {"cases", "judge", "matrix", "providers", "scorers", "results", "sandbox"},
    "analysis": {"cases", "results", "runner", "stats"},
    "interop": {"analysis", "cases", "matrix", "results"},
    "report": {"ablation", "analysis", "optimize", "results", "stats"},
    "ablation": {"analysis", "cases", "results", "runner", "stats"},
    "optimize": {
        "analysis",
        "cases",
        "providers",
        "results",
        "runner",
        "sandbox",
        "scorers",
        "stats",
    },
    "cli": {
        "ablation",
        "analysis",
        "cases",
        "interop",
        "judge",
        "optimize",
        "providers",
        "report",
        "results",
        "runner",
        "sandbox",
        "scorers",
        "stats",
    },
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Every evalkit module this file imports.

    ``from a import b`` imports module ``a.b`` when that is a module, else a name of ``a``.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    me = _module_name(path)
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = me.split(".") if is_package else me.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            submodules = {f"{module}.{alias.name}" for alias in node.names}
            found.update(submodules & modules)
            if not submodules <= modules:
                found.add(module)
    return {name for name in found if name == "evalkit" or name.startswith("evalkit.")}


def _graph() -> dict[str, set[str]]:
    files = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        graph[name] = {target for target in _imports(path, set(files)) if target in files} - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _package_of(module: str) -> str | None:
    """The subpackage a module belongs to, or None for root-level modules."""
    parts = module.split(".")
    if len(parts) >= 2 and (PACKAGE / parts[1]).is_dir():
        return parts[1]
    return None


def test_graph_is_read() -> None:
    graph = _graph()
    # The walk sees the package: the CLI reaches the runner and the stats.
    assert any(target.startswith("evalkit.runner") for target in graph["evalkit.cli._run"])
    assert len(graph) > 50


def test_no_module_import_cycle() -> None:
    graph = _graph()
    # A package's __init__ re-exports its private modules; a private module importing its own
    # package's __init__ back would close a circle, and so does any deferred import.
    assert _cycles(graph) == []


def test_no_package_import_cycle() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, targets in _graph().items():
        source = _package_of(module)
        for target in targets:
            package = _package_of(target)
            if source and package and package != source:
                edges[source].add(package)
    assert _cycles(dict(edges)) == []


def test_no_import_of_another_packages_private_module() -> None:
    offenders = []
    for module, targets in _graph().items():
        source = _package_of(module)
        for target in targets:
            package = _package_of(target)
            private = any(part.startswith("_") for part in target.split(".")[2:])
            if package and package != source and private:
                offenders.append(f"{module} -> {target}")
    assert offenders == []


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_what_the_architecture_allows(package: str) -> None:
    used: set[str] = set()
    for module, targets in _graph().items():
        if _package_of(module) != package:
            continue
        used.update(p for t in targets if (p := _package_of(t)) and p != package)
    assert used <= ALLOWED[package], f"{package} imports {sorted(used - ALLOWED[package])}"


def test_every_package_is_in_the_table() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(ALLOWED)


def _aliases() -> list[tuple[str, str, str]]:
    """``(old package, name, new package)`` of every declared deprecated alias."""
    return [
        (f"evalkit.{init.parent.name}", name, target)
        for init in sorted(PACKAGE.glob("*/__init__.py"))
        for name, target in declared_aliases(init).items()
    ]


def test_aliases_are_declared() -> None:
    assert ("evalkit.analysis", "import_results", "evalkit.interop") in _aliases()


@pytest.mark.parametrize(("package", "name", "target"), _aliases())
def test_a_deprecated_alias_answers_the_new_packages_public_name(
    package: str, name: str, target: str
) -> None:
    old, new = importlib.import_module(package), importlib.import_module(target)
    assert name in new.__all__ and name not in old.__all__
    assert _package_of(target) not in ALLOWED[package.split(".")[1]]
    with pytest.warns(DeprecationWarning, match=f"import {target}.{name} instead"):
        value = getattr(old, name)
    assert value is getattr(new, name)
