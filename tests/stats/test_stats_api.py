"""The public surface of evalkit.stats and its import boundaries."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import evalkit.stats as stats_pkg
from evalkit._display import RENDERER_PACKAGES
from evalkit._lazy import declared_imports

PACKAGE = Path(stats_pkg.__file__).parent
# evalkit._display: the registry behind the result types' _repr_html_ (it imports no evalkit
# module but, at the first display, its declared renderer package).
# evalkit._lazy: the package __init__'s lazy names.
ALLOWED_EVALKIT_IMPORTS = (
    "evalkit.errors",
    "evalkit.results",
    "evalkit.stats",
    "evalkit._display",
    "evalkit._lazy",
    "evalkit._percent",  # a leaf: how every surface rounds a percentage (no imports)
    "evalkit._settings",  # the shared settings' table (imports only evalkit.errors)
    "evalkit._options",  # the one kind of options object (pydantic; imports evalkit.errors)
)


def test_all_matches_public_names() -> None:
    for name in stats_pkg.__all__:  # lazy names are loaded on first use
        getattr(stats_pkg, name)
    public = {name for name in vars(stats_pkg) if not name.startswith("_")}
    public -= {"annotations", "TYPE_CHECKING"}
    modules = {name for name in public if name.startswith("_")}
    assert not modules
    internal = set(declared_imports(stats_pkg.__name__, stats_pkg.__file__)) - set(
        stats_pkg.__all__
    )  # the names sibling packages import, not for users
    assert set(stats_pkg.__all__) == {
        name for name in public if not isinstance(getattr(stats_pkg, name), type(stats_pkg))
    } - internal
    assert stats_pkg.__all__ == sorted(stats_pkg.__all__)


def test_contract_names_exist() -> None:
    for name in (
        "proportion_ci",
        "pass_rates",
        "mean_ci",
        "clustered_se",
        "cluster_bootstrap",
        "paired_bootstrap_delta",
        "paired_compare",
        "verdict",
        "flip_rate_between",
        "flip_rate_within",
        "minimum_detectable_effect",
        "required_cases",
        "required_trials",
        "estimate_variance_components",
        "simulate_power",
        "cohens_kappa",
        "compare_tables",
    ):
        assert callable(getattr(stats_pkg, name)), name


def test_only_errors_and_results_are_imported_from_evalkit() -> None:
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module == "evalkit":
                names = [f"evalkit.{alias.name}" for alias in node.names]  # e.g. evalkit._lazy
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name == "evalkit" or name.startswith("evalkit."):
                    assert name.startswith(ALLOWED_EVALKIT_IMPORTS), f"{path.name}: {name}"


def test_the_display_registry_imports_nothing_from_evalkit() -> None:
    tree = ast.parse((PACKAGE.parent / "_display.py").read_text(encoding="utf-8"))
    modules: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modules.append(node.module or "")
        elif isinstance(node, ast.Import):
            modules.extend(alias.name for alias in node.names)
    assert modules and not [m for m in modules if m.startswith("evalkit")]
    # The one evalkit module it names is its declared renderer package, imported at the first
    # display (the declared edge of tests/test_architecture.py).
    named = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"evalkit(\.\w+)+", node.value)
    }
    assert named == set(RENDERER_PACKAGES) == {"evalkit.report"}


def test_private_modules_are_small() -> None:
    for path in PACKAGE.glob("_*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) < 700, path.name
