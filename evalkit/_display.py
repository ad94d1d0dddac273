"""Rich display of result objects in Jupyter, without the result types depending on the report.

The result types live in :mod:`evalkit.stats`, :mod:`evalkit.analysis` and
:mod:`evalkit.ablation`, which may not import :mod:`evalkit.report` (where the tables and
figures are drawn). Each type's ``_repr_html_`` (inherited from :class:`RichDisplay`) asks
this registry instead, and the report fills it through a hook:

- a package that draws renderers calls :func:`add_renderer_loader` when it is imported
  (``evalkit.report`` does, in its ``__init__``); the loader, which registers one renderer per
  type with :func:`register_html`, runs at the first display, so importing the package stays
  light;
- a notebook that only imported ``evalkit.analysis`` has not imported the report: the first
  display imports the packages of :data:`RENDERER_PACKAGES`, which adds their loaders.

A type without a renderer returns None from ``_repr_html_``, and Jupyter shows its plain
``repr``.

Figures go the same way: a result type's ``plot...`` method calls :func:`draw`, which finds
the drawing the report registered for that type and name with :func:`register_figure` (the
report, and matplotlib with it, imported only then).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

#: Packages that add a renderer loader when imported, imported at the first display. A root
#: module naming a package above it: the one such edge, declared in ``PLUGIN_EDGES`` of
#: ``tests/test_architecture.py``.
RENDERER_PACKAGES: tuple[str, ...] = ("evalkit.report",)

_RENDERERS: dict[type, Callable[[Any], str]] = {}
_FIGURES: dict[tuple[type, str], Callable[..., Any]] = {}
_PENDING_LOADERS: list[Callable[[], None]] = []
_IMPORTED_PACKAGES: set[str] = set()


def register_html(cls: type, render: Callable[[Any], str]) -> None:
    """Make ``render(obj)`` the HTML of every ``cls`` instance shown in a notebook.

    Args:
        cls: The result type.
        render: Returns escaped, self-contained HTML for one instance.
    """
    _RENDERERS[cls] = render


def register_figure(cls: type, name: str, draw: Callable[..., Any]) -> None:
    """Make ``draw(obj, **options)`` the figure ``name`` of every ``cls`` instance.

    Args:
        cls: The result type.
        name: The figure's name (the ``plot`` method that asks for it).
        draw: Returns a matplotlib ``Figure`` for one instance.
    """
    _FIGURES[(cls, name)] = draw


def draw(obj: object, name: str, **options: Any) -> Any:
    """The figure ``name`` of ``obj``, drawn by the function registered for its type.

    Args:
        obj: A result object.
        name: The figure's name.
        **options: Passed to the drawing function.

    Returns:
        A matplotlib ``Figure``.

    Raises:
        LookupError: No figure of that name is registered for the object's type.
    """
    _load_renderers()
    for cls in type(obj).__mro__:
        figure = _FIGURES.get((cls, name))
        if figure is not None:
            return figure(obj, **options)
    raise LookupError(f"no figure {name!r} is registered for {type(obj).__name__}")


def add_renderer_loader(load: Callable[[], None]) -> None:
    """Run ``load()`` before the next display: it registers renderers with :func:`register_html`.

    Args:
        load: Imports the renderers (which may be heavy: it runs only when something is shown)
            and registers them.
    """
    _PENDING_LOADERS.append(load)


def rich_html(obj: object) -> str | None:
    """The HTML of ``obj`` from the renderer of its type (or of a base type), if any.

    Args:
        obj: A result object.

    Returns:
        The markup, or None when no renderer is registered for its type.

    Examples:
        >>> rich_html(object()) is None
        True
    """
    _load_renderers()
    for cls in type(obj).__mro__:
        render = _RENDERERS.get(cls)
        if render is not None:
            return render(obj)
    return None


def _load_renderers() -> None:
    """Import the renderer packages once, then run every loader not run yet."""
    for package in RENDERER_PACKAGES:
        if package not in _IMPORTED_PACKAGES:
            importlib.import_module(package)
            _IMPORTED_PACKAGES.add(package)
    while _PENDING_LOADERS:
        _PENDING_LOADERS.pop(0)()


class RichDisplay:
    """Base of the result types shown in Jupyter by the renderer registered for their type."""

    __slots__ = ()

    def _repr_html_(self) -> str | None:
        """Rich display in Jupyter: banner, tables and figure (``evalkit.report``), or None."""
        return rich_html(self)

