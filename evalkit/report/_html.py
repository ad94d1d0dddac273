"""HTML safety and navigation for rendered reports: an allowlist sanitizer and the contents.

Values from transcripts and case files are escaped where the notebooks build their HTML
(:mod:`evalkit.report._tables`); the sanitizer applied by the template to every HTML output is
a second line of defence: only an allowlist of tags and attributes survives, images must be
PNG or JPEG data URIs, and anything else (scripts, event handlers, styles, external URLs) is
dropped. Bidi control characters are replaced by visible markers on the final page.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from evalkit._bidi import (
    BIDI_CONTROLS as BIDI_CONTROLS,
    TERMINAL_CONTROLS,
    neutralize_bidi as neutralize_bidi,
)

TOC_MARKER = "<!--evalkit:toc-->"


ALLOWED_TAGS = frozenset(
    {
        "a", "abbr", "article", "b", "blockquote", "br", "caption", "code", "col", "colgroup",
        "dd", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5",
        "h6", "hr", "i", "img", "li", "mark", "ol", "p", "pre", "section", "small", "span",
        "strong", "sub", "summary", "details", "sup", "table", "tbody", "td", "tfoot", "th",
        "thead", "tr", "ul",
    }
)  # fmt: skip
_GLOBAL_ATTRIBUTES = frozenset({"class", "id", "title", "role", "aria-label", "lang"})
_TAG_ATTRIBUTES = {
    "img": frozenset({"src", "alt", "width", "height"}),
    "a": frozenset({"href"}),
    "td": frozenset({"colspan", "rowspan"}),
    "th": frozenset({"colspan", "rowspan", "scope"}),
    "details": frozenset({"open"}),
    "col": frozenset({"span"}),
    "ol": frozenset({"start"}),
}
#: The allowlist in nh3's form: ``"*"`` for the attributes every allowed tag may carry.
_NH3_ATTRIBUTES = {
    "*": set(_GLOBAL_ATTRIBUTES),
    **{tag: set(names) for tag, names in _TAG_ATTRIBUTES.items()},
}
_IMAGE_PREFIXES = ("data:image/png;base64,", "data:image/jpeg;base64,")


def _allowed_attribute(tag: str, name: str, value: str) -> bool:
    if name in _GLOBAL_ATTRIBUTES:
        return True
    if name not in _TAG_ATTRIBUTES.get(tag, frozenset()):
        return False
    if tag == "img" and name == "src":
        return value.startswith(_IMAGE_PREFIXES)
    if tag == "a" and name == "href":
        return value.startswith(("#", "https://"))
    return True


def _keep_attribute(tag: str, name: str, value: str) -> str | None:
    return value if _allowed_attribute(tag, name, value) else None


def sanitize_html(markup: str) -> str:
    """Keep only allowlisted tags and attributes of an HTML fragment (nh3).

    Disallowed tags are dropped, their text kept; ``<script>`` and ``<style>`` blocks (the
    notebook stylesheet of a rich display) are dropped with their content, and so are
    comments; ``img`` sources must be PNG/JPEG data URIs and links must be in-page anchors or
    ``https``.

    Args:
        markup: An HTML fragment (a notebook's ``text/html`` output).

    Returns:
        The cleaned fragment.

    Examples:
        >>> sanitize_html('<p onclick="x()">hi<script>alert(1)</script></p>')
        '<p>hi</p>'
        >>> sanitize_html('<img src="https://example.com/t.png" alt="t">')
        '<img alt="t">'
        >>> sanitize_html('<div class="ek-rich"><style>p{}</style><p>x</p></div>')
        '<div class="ek-rich"><p>x</p></div>'
    """
    import nh3

    cleaned: str = nh3.clean(
        markup,
        tags=set(ALLOWED_TAGS),
        clean_content_tags={"script", "style"},
        attributes=_NH3_ATTRIBUTES,
        attribute_filter=_keep_attribute,
        url_schemes={"data", "https"},
        strip_comments=True,
        link_rel=None,
    )
    return cleaned


class _Headings(HTMLParser):
    """Collect ``h2``/``h3`` headings that carry an ``id`` (nbconvert gives Markdown ones ids)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str, str]] = []
        self._current: tuple[int, str] | None = None
        self._text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h2", "h3"):
            anchor = dict(attrs).get("id")
            if anchor:
                self._current = (int(tag[1]), anchor)
                self._text = []
        elif tag == "a" and self._current is not None:
            if "anchor-link" in (dict(attrs).get("class") or ""):
                self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._skip:
            self._skip -= 1
        elif tag in ("h2", "h3") and self._current is not None:
            level, anchor = self._current
            text = " ".join("".join(self._text).split())
            if text:
                self.found.append((level, anchor, text))
            self._current = None

    def handle_data(self, data: str) -> None:
        if self._current is not None and not self._skip:
            self._text.append(data)


def headings(page: str) -> list[tuple[int, str, str]]:
    """The ``(level, id, text)`` of every ``h2``/``h3`` with an id, in page order.

    Examples:
        >>> headings('<h2 id="a">Pass rates<a class="anchor-link" href="#a">¶</a></h2>')
        [(2, 'a', 'Pass rates')]
    """
    parser = _Headings()
    for match in _HEADING.finditer(page):
        if match.group(1):
            parser.feed(match.group())
    parser.close()
    return parser.found


#: A script (skipped: its text is not markup) or an ``h2``/``h3`` element: the parser reads
#: only the headings, not the whole page.
_HEADING = re.compile(r"<script\b.*?</script\s*>|<(h[23])\b[^>]*>.*?</\1\s*>", re.S | re.I)


def add_toc(page: str) -> str:
    """Fill the contents placeholder of a rendered page with links to its sections.

    Args:
        page: The HTML page (holding :data:`TOC_MARKER` once, in the navigation).

    Returns:
        The page with a nested ``<ol>`` of ``h2``/``h3`` links in place of the marker.

    Examples:
        >>> page = '<nav><!--evalkit:toc--></nav><h2 id="x">A &lt;b&gt;</h2>'
        >>> print(add_toc(page))
        <nav><ol><li><a href="#x">A &lt;b&gt;</a></li></ol></nav><h2 id="x">A &lt;b&gt;</h2>
    """
    if TOC_MARKER not in page:
        return page
    items: list[str] = []
    open_sub = False
    for level, anchor, text in headings(page):
        link = f'<a href="#{html.escape(anchor, quote=True)}">{html.escape(text)}</a>'
        if level == 3 and items:
            if not open_sub:
                items[-1] = items[-1].removesuffix("</li>") + "<ol>"
                open_sub = True
            items.append(f"<li>{link}</li>")
            continue
        if open_sub:
            items.append("</ol></li>")
            open_sub = False
        items.append(f"<li>{link}</li>")
    if open_sub:
        items.append("</ol></li>")
    toc = "<ol>" + "".join(items) + "</ol>" if items else ""
    return page.replace(TOC_MARKER, toc, 1)


#: What a page shows as a visible marker: the bidi controls and the controls a terminal acts on
#: (an ``ESC`` starting an escape sequence, C1 controls), but not the whitespace of markup.
_PAGE_TABLE = {
    ord(char): f"\u27e8U+{ord(char):04X}\u27e9"
    for char in BIDI_CONTROLS | TERMINAL_CONTROLS
    if char not in "\r\f\v"
}
#: Any character of :data:`_PAGE_TABLE`: a page is scanned once and only the matches rewritten
#: (``str.translate`` with a table looks every character of a page of embedded figures up).
_PAGE_CONTROLS = re.compile(
    "[" + "".join(re.escape(chr(code)) for code in sorted(_PAGE_TABLE)) + "]"
)


def neutralize_page(page: str) -> str:
    r"""Replace every bidi control and terminal control of a page by a visible marker.

    A page read with ``cat`` or ``less -R`` must not recolour or retitle the terminal, and no
    id or model text can reorder what the reader sees.

    Args:
        page: The rendered page.

    Returns:
        The page with each such character shown as ``⟨U+XXXX⟩``.

    Examples:
        >>> neutralize_page("a\x1b[31mb\u202ec\r\n")
        'a⟨U+001B⟩[31mb⟨U+202E⟩c\r\n'
    """
    return _PAGE_CONTROLS.sub(lambda match: _PAGE_TABLE[ord(match.group())], page)
