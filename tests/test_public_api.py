"""The public surface: every package's __all__ matches what it exposes."""

from __future__ import annotations

import importlib

import pytest

import evalkit

PACKAGES = [
    "evalkit", "evalkit.cases", "evalkit.matrix", "evalkit.providers", "evalkit.scorers",
    "evalkit.runner", "evalkit.results", "evalkit.stats", "evalkit.analysis",
    "evalkit.optimize", "evalkit.report", "evalkit.sandbox", "evalkit.judge",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_matches_public_names(name: str) -> None:
    module = importlib.import_module(name)
    public = {
        n for n, v in vars(module).items()
        if not n.startswith("_") and not getattr(v, "__name__", "").startswith(f"{name}.")
        and not (hasattr(v, "__file__") and getattr(v, "__name__", "").startswith("evalkit"))
    }
    exported = set(module.__all__) - {"__version__"}
    assert exported <= set(vars(module)), f"{name}.__all__ names missing attributes"
    assert public - {"annotations"} <= exported, f"{name} exposes names not in __all__"


def test_top_level_functions_are_exported() -> None:
    for name in ("run", "compare", "lift", "flips", "power", "gate", "import_results",
                 "judge_run"):
        assert callable(getattr(evalkit, name))
