"""Lazy package attributes (PEP 562), declared once as the package's ``TYPE_CHECKING`` imports.

A package ``__init__`` states its public names first (``__all__``, PEP 8's place under the
docstring), lists them as ordinary imports inside one ``if TYPE_CHECKING:`` block, so mypy,
editors and ``tests/test_architecture.py`` read them as imports, and at run time calls
:func:`attach` instead::

    __all__ = ["compare"]

    from typing import TYPE_CHECKING

    from evalkit import _lazy

    if TYPE_CHECKING:
        from evalkit.analysis._compare import compare
    else:
        __getattr__, __dir__ = _lazy.attach(__name__, __file__)

:func:`attach` reads the block from the source and imports a name's module the first time
the name is used (mypy never sees the hook, so a misspelt import is still an error).
``import evalkit`` and ``evalkit --version`` therefore never load pandas, scipy or
statsmodels.

``__all__`` is the package's public surface, what users and plugin authors need. A name of
the block that ``__all__`` leaves out is the package's internal surface: it resolves the same
way, for sibling packages, but it is not part of the API (docs/api.md lists the public
names; ``tests/test_architecture.py`` keeps plumbing off ``__all__``).

Every name has one home: a name that moves is imported from its new package by every caller
(nothing was released, so there are no deprecated aliases; CHANGELOG.md says what moved).
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def declared_imports(package: str, init_file: str | Path) -> dict[str, tuple[str, str]]:
    """The names a package ``__init__`` imports under ``if TYPE_CHECKING:``.

    Args:
        package: The package's dotted name (its ``__name__``).
        init_file: Its ``__init__.py`` (its ``__file__``).

    Returns:
        ``{public name: (module, attribute)}``.
    """
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"), filename=str(init_file))
    found: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for statement in node.body:
            if not isinstance(statement, ast.ImportFrom):
                continue
            module = statement.module or ""
            if statement.level:
                base = package.split(".")[: len(package.split(".")) - (statement.level - 1)]
                module = ".".join([*base, module] if module else base)
            for alias in statement.names:
                found[alias.asname or alias.name] = (module, alias.name)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def attach(
    package: str,
    init_file: str | Path,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Module ``__getattr__`` and ``__dir__`` that import a package's public names on first use.

    Args:
        package: The package's ``__name__``.
        init_file: The package's ``__file__``.

    Returns:
        ``(__getattr__, __dir__)`` to assign in the package's namespace.
    """
    targets = declared_imports(package, init_file)

    def __getattr__(name: str) -> Any:
        try:
            module, attribute = targets[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module), attribute)
        # Bound in the package's namespace, so the next lookup does not come here again.
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(targets))

    return __getattr__, __dir__
