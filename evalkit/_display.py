"""Rich display of result objects in Jupyter, without the result types depending on the report.

The result types live in :mod:`evalkit.stats` and :mod:`evalkit.analysis`, which may not
import :mod:`evalkit.report` (where the tables and figures are drawn). Each type's
``_repr_html_`` asks this registry instead; the first display imports the report's renderers
(:data:`RENDERERS_MODULE`), whose ``register_rich_displays`` registers one per type, so
``import evalkit`` stays light. A type without a renderer returns None from ``_repr_html_``,
and Jupyter shows its plain ``repr``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

#: The module whose ``register_rich_displays()`` registers the renderers.
RENDERERS_MODULE = "evalkit.report._rich"

_RENDERERS: dict[type, Callable[[Any], str]] = {}


def register_html(cls: type, render: Callable[[Any], str]) -> None:
    """Make ``render(obj)`` the HTML of every ``cls`` instance shown in a notebook.

    Args:
        cls: The result type.
        render: Returns escaped, self-contained HTML for one instance.
    """
    _RENDERERS[cls] = render


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
    if not _RENDERERS:
        importlib.import_module(RENDERERS_MODULE).register_rich_displays()
    for cls in type(obj).__mro__:
        render = _RENDERERS.get(cls)
        if render is not None:
            return render(obj)
    return None
