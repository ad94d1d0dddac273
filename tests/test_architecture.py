"""The package structure of docs/architecture.md, checked against the code's own imports.

Every ``import`` statement in ``evalkit/`` (module level or inside a function: an import
deferred to call time is still a dependency) is read with :mod:`ast`, and so is every string
constant that names an evalkit module (``importlib.import_module("evalkit.x")``,
``__import__``, the ``"evalkit.x._y:attr"`` entries of registry tables): a module imported by
name is a dependency too. The tests fail on an import cycle between modules (statements) or
between packages, on an import of another package's private module, on a package importing
one that docs/architecture.md does not allow it to, on a root-level module importing a
package, and on a public exception class defined outside ``evalkit/errors.py``.

One kind of string is not an import: the declared edges of :data:`DECLARED_STRING_EDGES`, each
with its reason. A name has one home: no package answers a name that lives in another one.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import importlib.util
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

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
    "analysis": {"cases", "results", "stats"},
    "interop": {"analysis", "cases", "matrix", "results"},
    "sequential": {"analysis", "cases", "results", "runner", "stats"},
    "report": {"ablation", "analysis", "optimize", "results", "sequential", "stats"},
    "viewer": {"analysis", "report", "results", "stats"},
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
        "sequential",
        "stats",
        "viewer",
    },
}


# Edges made by naming a module in a string that the layering would refuse, each declared with
# why it is not a dependency. They are left out of the graph (an upward edge here is a hook that
# runs after both sides are imported, not an import the lower side needs).
DECLARED_STRING_EDGES: dict[tuple[str, str], str] = {
    (
        "evalkit._display",
        "evalkit.report",
    ): "the display registry imports its declared renderer package (RENDERER_PACKAGES) at the "
    "first display, so that a notebook that only imported evalkit.analysis still shows rich "
    "HTML; the report registers its renderers through the registry's hook",
    (
        "evalkit._registry",
        "evalkit.providers._registry",
    ): "the plugin registry's kind table (PLUGIN_KINDS) imports a kind's registry only when "
    "that kind is first asked for; the kind's registry imports the root module, not back",
    (
        "evalkit._registry",
        "evalkit.interop._import_registry",
    ): "the plugin registry's kind table (PLUGIN_KINDS) imports a kind's registry only when "
    "that kind is first asked for; the kind's registry imports the root module, not back",
    (
        "evalkit._registry",
        "evalkit.optimize._optimizer_registry",
    ): "the plugin registry's kind table (PLUGIN_KINDS) imports a kind's registry only when "
    "that kind is first asked for; the kind's registry imports the root module, not back",
    (
        "evalkit._registry",
        "evalkit.cases._suite_formats",
    ): "the plugin registry's kind table (PLUGIN_KINDS) imports a kind's registry only when "
    "that kind is first asked for; the kind's registry imports the root module, not back",
    (
        "evalkit._registry",
        "evalkit.analysis._compare_metrics",
    ): "the plugin registry's kind table (PLUGIN_KINDS) imports a kind's registry only when "
    "that kind is first asked for; the kind's registry imports the root module, not back",
}

# A string naming an evalkit module: ``evalkit.a.b``, ``evalkit.a.b:attr`` or ``evalkit.a.name``.
_NAMES_A_MODULE = re.compile(r"evalkit(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_][\w.]*)?")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _named_module(text: str, modules: set[str]) -> str | None:
    """The evalkit module a string names (the longest dotted prefix that is one), if any.

    The bare ``evalkit`` does not count: ``"evalkit.importers"`` is an entry-point group, not
    the top-level package.
    """
    if not _NAMES_A_MODULE.fullmatch(text):
        return None
    parts = text.partition(":")[0].split(".")
    while len(parts) > 1:
        if ".".join(parts) in modules:
            return ".".join(parts)
        parts.pop()
    return None


def _string_imports(tree: ast.Module, modules: set[str]) -> set[str]:
    """The evalkit modules named by the file's string constants."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant):
            continue
        named = _named_module(node.value, modules) if isinstance(node.value, str) else None
        if named is not None:
            found.add(named)
    return found


def _imports(path: Path, modules: set[str], strings: bool = True) -> set[str]:
    """Every evalkit module this file imports, by statement or (``strings``) naming it in a string.

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
    if strings:
        found |= _string_imports(tree, modules)
    return {name for name in found if name == "evalkit" or name.startswith("evalkit.")}


def _files() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


@functools.cache
def _graph(strings: bool = True) -> dict[str, set[str]]:
    """Every module's evalkit imports (with ``strings``, by name too), declared edges left out."""
    files = _files()
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        imported = _imports(path, set(files), strings)
        targets = {target for target in imported if target in files} - {name}
        graph[name] = {target for target in targets if (name, target) not in DECLARED_STRING_EDGES}
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
    # Import statements only: a registry names its built-in entries by string, and an entry
    # importing the registry's types back is how a registry works, not a circle at import time
    # (between packages, string imports count: see test_no_package_import_cycle).
    graph = _graph(strings=False)
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


#: Names that lived in another package before the first release (CHANGELOG.md): each is
#: answered by its one home only.
MOVED_BEFORE_RELEASE = [
    ("evalkit.analysis", "import_results", "evalkit.interop"),
    ("evalkit.analysis", "run_until_verdict", "evalkit.sequential"),
    ("evalkit.cases", "skill_components", "evalkit.ablation"),
    ("evalkit.judge", "Verdict", "evalkit.judge"),
    ("evalkit.report", "trend", "evalkit.analysis"),
    ("evalkit.scorers", "run_command", "evalkit.sandbox"),
    ("evalkit.stats", "compare", "evalkit.stats"),
]


@pytest.mark.parametrize(("package", "name", "home"), MOVED_BEFORE_RELEASE)
def test_a_moved_name_has_one_home(package: str, name: str, home: str) -> None:
    old = importlib.import_module(package)
    with pytest.raises(AttributeError, match=name):
        getattr(old, name)
    assert name not in dir(old)
    if home != package:
        assert name in importlib.import_module(home).__all__


def test_string_imports_are_read() -> None:
    graph = _graph()
    # The provider registry names its built-ins as "module:factory", the CLI its subcommands.
    assert "evalkit.providers._simulated" in graph["evalkit.providers._registry"]
    assert "evalkit.cli._run" in graph["evalkit.cli._main"]


def test_root_modules_import_no_package() -> None:
    """Root-level modules are the foundation: only the facade and ``__main__`` reach packages."""
    offenders = [
        f"{module} -> {target}"
        for module, targets in _graph().items()
        if module not in ("evalkit", "evalkit.__main__") and _package_of(module) is None
        for target in targets
        if _package_of(target) is not None
    ]
    assert offenders == []


def test_declared_string_edges_exist_and_say_why() -> None:
    files = _files()
    for (source, target), reason in DECLARED_STRING_EDGES.items():
        tree = ast.parse(files[source].read_text(encoding="utf-8"))
        assert target in _string_imports(tree, set(files)), f"{source} no longer names {target}"
        assert len(reason) > 40


def _base_names(node: ast.ClassDef) -> set[str]:
    return {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}


def test_every_exception_class_is_in_errors() -> None:
    """Public exception classes live in evalkit/errors.py (packages re-export them from there).

    A private one (``_Stop``: a signal that never leaves its module) may stay where it is used.
    """
    exceptions = {
        name
        for name, value in vars(builtins).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    }
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in PACKAGE.rglob("*.py")}
    defined: dict[str, Path] = {}
    grew = True
    while grew:  # a class deriving from one found is an exception too
        grew = False
        for path, tree in trees.items():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name not in defined:
                    if _base_names(node) & (exceptions | set(defined)):
                        defined[node.name] = path
                        grew = True
    elsewhere = sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for name, path in defined.items()
        if path.name != "errors.py" and not name.startswith("_")
    )
    assert len(defined) > 20
    assert elsewhere == []


def _calls_named(tree: ast.Module, name: str) -> list[ast.Call]:
    """Every call of ``name(...)`` or ``x.name(...)`` in the tree."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == name
    ]


def test_one_plugin_registry() -> None:
    """Providers, import formats and optimizers are kinds of one registry, read in one place.

    Only ``evalkit/_registry.py`` reads entry points; every ``Registry(...)`` is built in the
    module its kind's entry in ``PLUGIN_KINDS`` names, with that kind; and every kind's
    registry is that object.
    """
    from evalkit._registry import ENTRY_POINT_GROUP, PLUGIN_KINDS, Registry, registry

    built: dict[str, str] = {}
    readers = []
    for module, path in _files().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if _calls_named(tree, "entry_points"):
            readers.append(module)
        for call in _calls_named(tree, "Registry"):
            kind = next(k.value for k in call.keywords if k.arg == "kind")
            assert isinstance(kind, ast.Constant), f"{module}: Registry(kind=...) is a literal"
            assert kind.value not in built, f"two registries of kind {kind.value!r}"
            built[str(kind.value)] = module
    assert readers == ["evalkit._registry"]
    assert built == {kind: spec.partition(":")[0] for kind, spec in PLUGIN_KINDS.items()}
    for kind in PLUGIN_KINDS:
        found = registry(kind)
        assert isinstance(found, Registry) and found.kind == kind
        assert found.group == ENTRY_POINT_GROUP


def _numeric_literal(node: ast.expr | None) -> bool:
    """A number written in the code (``2``, ``0.95``, ``-1``, ``10_000``), not a bool."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    )


def _called(node: ast.expr | None, *names: str) -> bool:
    """``node`` is a call of one of ``names`` (``Field(...)``, ``Path(...)``)."""
    return isinstance(node, ast.Call) and getattr(
        node.func, "id", getattr(node.func, "attr", "")
    ) in names


def _literal_default(node: ast.expr | None, name: str) -> bool:
    """A default of the shared setting ``name`` written again instead of taken from the table.

    A number for a numeric setting; for a setting of choices, a string it accepts (one of its
    choices or aliases: another string, ``method="wilson"``, is a parameter of the same name
    that is not the setting); for a path, a string or ``Path(<string>)``; each also inside
    ``Field(<literal>)`` / ``Field(default=<literal>)``.
    """
    from pathlib import Path

    from evalkit._settings import SETTINGS

    setting = next(entry for entry in SETTINGS if entry.name == name)
    if _called(node, "Field"):
        assert isinstance(node, ast.Call)
        given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "default")]
        return any(_literal_default(value, name) for value in given)
    text = node.value if isinstance(node, ast.Constant) else None
    if setting.kind is str:
        return isinstance(text, str) and (
            text in setting.choices or text in dict(setting.aliases)
        )
    if setting.kind is Path:
        if _called(node, "Path", "PurePath"):
            assert isinstance(node, ast.Call)
            return any(isinstance(arg, ast.Constant) for arg in node.args)
        return isinstance(text, str)
    return _numeric_literal(node)


def _literal_setting_defaults(tree: ast.Module, names: frozenset[str]) -> list[tuple[int, str]]:
    """``(line, name)`` of each parameter or class field of a shared setting's name whose
    default is written as a literal (a number, a choice, a path) instead of taken from the
    table."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            with_default = positional[len(positional) - len(args.defaults) :]
            pairs = [
                *zip(with_default, args.defaults, strict=True),
                *zip(args.kwonlyargs, args.kw_defaults, strict=True),
            ]
            found += [
                (arg.lineno, arg.arg)
                for arg, default in pairs
                if arg.arg in names and _literal_default(default, arg.arg)
            ]
        elif isinstance(node, ast.ClassDef):
            found += [
                (item.lineno, item.target.id)
                for item in node.body
                if isinstance(item, ast.AnnAssign)
                and isinstance(item.target, ast.Name)
                and item.target.id in names
                and _literal_default(item.value, item.target.id)
            ]
    return found


def test_shared_settings_take_their_defaults_from_the_table() -> None:
    """A parameter, dataclass field or pydantic field named after a shared setting
    (``confidence``, ``alpha``, ``n_resamples``, ...) takes its default from
    ``evalkit/_settings.py`` (``CONFIDENCE.default``, or its ``Annotated`` type), never a number
    written again: each shared setting is declared once."""
    from evalkit._settings import SETTING_NAMES

    assert {"confidence", "alpha", "n_resamples", "retries", "concurrency", "seed", "power",
            "correction", "case_correction", "method", "runs_dir", "round_cases"} <= SETTING_NAMES
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "_settings.py"
        for line, name in _literal_setting_defaults(
            ast.parse(path.read_text(encoding="utf-8")), SETTING_NAMES
        )
    ]
    assert offenders == []


def test_the_settings_check_sees_a_literal_default() -> None:
    source = (
        "def f(x, confidence=0.95, *, seed: int | None = 0, alpha=ALPHA.default): ...\n"
        "class C:\n"
        "    n_resamples: int = Field(default=2000, ge=100)\n"
        "    retries: int = Field(-1)\n"
        "    concurrency: Concurrency = CONCURRENCY.default\n"
        "    other: int = 3\n"
    )
    found = _literal_setting_defaults(
        ast.parse(source), frozenset({"confidence", "seed", "alpha", "n_resamples", "retries",
                                      "concurrency"})
    )
    assert found == [(1, "confidence"), (1, "seed"), (3, "n_resamples"), (4, "retries")]


def test_the_settings_check_sees_a_literal_choice_path_or_round() -> None:
    source = (
        "def f(correction='holm', case_correction: str = 'bh', method='wilson',\n"
        "      runs_dir: str = 'runs', power=0.8, round_cases=1): ...\n"
        "def g(correction=CORRECTION.default, method='t', runs_dir=RUNS_DIR.default): ...\n"
        "class C:\n"
        "    runs_dir: Path = Path('runs')\n"
        "    case_correction: Correction = Field(default='fdr_bh')\n"
        "    method: str = 'cluster-bootstrap'\n"
        "    round_cases: RoundCases = ROUND_CASES.default\n"
    )
    names = frozenset({"correction", "case_correction", "method", "runs_dir", "power",
                       "round_cases"})
    found = _literal_setting_defaults(ast.parse(source), names)
    assert sorted(found) == [
        (1, "case_correction"), (1, "correction"), (2, "power"), (2, "round_cases"),
        (2, "runs_dir"), (3, "method"), (5, "runs_dir"), (6, "case_correction"),
    ]


# ---- public means user-facing ----------------------------------------------------------------


def _script(name: str) -> Any:
    """``scripts/NAME.py``, imported as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _api_reference() -> Any:
    """scripts/make_api_reference.py, imported as a module."""
    return _script("make_api_reference")


def _prose() -> str:
    """The user documentation as written: docs, README and notebooks, generated index left out."""
    reference = _api_reference()
    texts = []
    for path in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md",
                 *sorted((ROOT / "notebooks").glob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        head, _, rest = text.partition(reference.BEGIN)
        texts.append(head + rest.partition(reference.END)[2])
    return "\n".join(texts)


def _public(package: str) -> list[str]:
    return list(importlib.import_module(f"evalkit.{package}").__all__)


def test_the_api_reference_lists_every_public_name_as_it_is() -> None:
    """docs/api.md's index is what scripts/make_api_reference.py writes from the ``__all__``s."""
    reference = _api_reference()
    committed = reference.API_DOC.read_text(encoding="utf-8")
    assert committed == reference.rendered(committed), "run scripts/make_api_reference.py"
    for package in reference.packages():
        for name in _public(package):
            assert f"| `{name}` |" in committed, f"evalkit.{package}.{name}"


def test_the_architecture_docs_draw_the_errors_and_root_modules_as_they_are() -> None:
    """The error tree and the root-module table of docs/architecture.md come from the code."""
    tables = _script("make_architecture_tables")
    committed = tables.ARCHITECTURE_DOC.read_text(encoding="utf-8")
    assert committed == tables.rendered(committed), "run scripts/make_architecture_tables.py"
    import evalkit.errors

    for name, value in vars(evalkit.errors).items():
        if isinstance(value, type) and issubclass(value, Exception):
            assert f"── {name} " in committed or name == "EvalkitError", name
    for path in (ROOT / "evalkit").glob("_*.py"):
        if path.stem not in ("__init__", "__main__"):
            assert f"| `evalkit.{path.stem}` |" in committed, path.name


def test_no_plumbing_in_all() -> None:
    """A public name that other packages import is one the user documentation speaks of.

    Plumbing, a name other packages need and users never see, stays off ``__all__`` (in the
    package's ``TYPE_CHECKING`` block only: its internal surface for sibling packages). The
    command line is a user surface, so its imports do not count.
    """
    importers: dict[tuple[str, str], set[str]] = {}
    for module, path in _files().items():
        source = _package_of(module)
        if source in (None, "cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").count(".") == 1:
                target = (node.module or "").removeprefix("evalkit.")
                if node.module == f"evalkit.{target}" and target != source:
                    for alias in node.names:
                        importers.setdefault((target, alias.name), set()).add(str(source))
    prose = _prose()
    plumbing = sorted(
        f"evalkit.{package}.{name} (imported by {', '.join(sorted(importers[package, name]))})"
        for package in ALLOWED
        for name in _public(package)
        if (package, name) in importers and not re.search(rf"\b{re.escape(name)}\b", prose)
    )
    assert len(importers) > 100
    assert plumbing == []
