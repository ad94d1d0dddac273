"""The exporter that turns an executed report notebook into its page, in one pass.

nbconvert's ``HTMLExporter`` renders the template, then parses the whole page with
BeautifulSoup to add two accessibility attributes and serialises it again: on a report of a
few hundred items that second pass costs more than the rendering itself. The page exporter
renders the same template and gives an image without an alternative text nbconvert's default
one with a regular expression. (The other attributes of that pass go to the output areas of a
``.jp-Notebook``, which the evalkit template does not write.)
"""

from __future__ import annotations

import re
from typing import Any

from nbconvert import HTMLExporter
from nbconvert.exporters.templateexporter import TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

#: nbconvert's default alternative text for an image without one.
MISSING_ALT = "No description has been provided for this image"
_IMAGE = re.compile(r"<img\b[^>]*")


def _described(match: re.Match[str]) -> str:
    tag = match.group()
    if re.search(r"\salt=", tag):
        return tag
    end = len(tag) - 1 if tag.endswith("/") else len(tag)
    return f'{tag[:end]} alt="{MISSING_ALT}"{tag[end:]}'


def described(page: str) -> str:
    """Give every image without an alternative text nbconvert's default one.

    Args:
        page: The rendered page.

    Returns:
        The page with an ``alt`` on each ``img``.

    Examples:
        >>> described('<img src="a"><img alt="b">')
        '<img src="a" alt="No description has been provided for this image"><img alt="b">'
    """
    return _IMAGE.sub(_described, page)


class PageExporter(HTMLExporter):
    """``HTMLExporter`` without its BeautifulSoup pass over the rendered page."""

    def from_notebook_node(  # type: ignore[override]
        self, nb: Any, resources: dict[str, Any] | None = None, **kw: Any
    ) -> tuple[str, dict[str, Any]]:
        """Render the notebook with the template (as ``HTMLExporter`` does, soup aside).

        Args:
            nb: The executed notebook.
            resources: nbconvert resources (``resources["evalkit"]`` for the template).
            **kw: Passed to ``TemplateExporter.from_notebook_node``.

        Returns:
            The page and the resources.
        """
        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        highlight = self.filters.get(
            "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)  # type: ignore[no-untyped-call]
        )
        resources = self._init_resources(resources)  # type: ignore[no-untyped-call]
        data_types = WidgetsDataTypeFilter(  # type: ignore[no-untyped-call]
            notebook_metadata=self._nb_metadata, parent=self, resources=resources
        )
        self.register_filter("highlight_code", highlight)  # type: ignore[no-untyped-call]
        self.register_filter("filter_data_type", data_types)  # type: ignore[no-untyped-call]
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return described(page), resources
