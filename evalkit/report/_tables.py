"""Escaped HTML for the reports: tables, key facts, verdict banners, notes.

Case ids, categories, error messages and model output are untrusted (an imported CSV can hold
any string), so every value goes through :func:`html.escape` here, once; notebooks never build
HTML themselves. Rounding happens only here, in presentation.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit._percent import percent

Formatter = Callable[[Any], str]


@dataclass(frozen=True)
class Fragment:
    """A piece of HTML that notebooks display (``_repr_html_``); its text is already escaped.

    Attributes:
        html: The markup.
    """

    html: str

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"<Fragment: {len(self.html)} characters of HTML>"

    def __add__(self, other: Fragment) -> Fragment:
        return Fragment(self.html + other.html)


def rows_of(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of a frame as ``{column: value}`` dicts with string keys.

    Examples:
        >>> rows_of(pd.DataFrame({"a": [1]}))
        [{'a': 1}]
    """
    return [{str(k): v for k, v in row.items()} for row in frame.to_dict("records")]


def esc(value: object) -> str:
    """Escape any value for HTML text or a quoted attribute (None and NaN become "").

    Examples:
        >>> esc('<img src=x onerror="a()">')
        '&lt;img src=x onerror=&quot;a()&quot;&gt;'
    """
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    return html.escape(str(value), quote=True)


def _finite(value: Any) -> bool:
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def pct(value: Any, digits: int = 1) -> str:
    """A proportion as a percentage (``"n/a"`` when undefined).

    Examples:
        >>> pct(0.625), pct(float("nan"))
        ('62.5%', 'n/a')
    """
    return f"{percent(value):.{digits}f}%" if _finite(value) else "n/a"


def pp(value: Any, digits: int = 1) -> str:
    """A difference of proportions in signed percentage points.

    Examples:
        >>> pp(-0.125)
        '-12.5 pp'
    """
    return f"{percent(value):+.{digits}f} pp" if _finite(value) else "n/a"


def num(value: Any, digits: int = 3) -> str:
    """A plain number (``"n/a"`` when undefined).

    Examples:
        >>> num(1 / 3), num(None)
        ('0.333', 'n/a')
    """
    return f"{float(value):.{digits}f}" if _finite(value) else "n/a"


def interval(estimate: Any, low: Any, high: Any, kind: str = "pct") -> str:
    """``estimate [low, high]`` formatted as ``pct``, ``pp`` or ``num``.

    Examples:
        >>> interval(0.5, 0.25, 0.75)
        '50.0% [25.0%, 75.0%]'
        >>> interval(0.1, -0.05, 0.2, "pp")
        '+10.0 pp [-5.0, +20.0]'
    """
    if kind == "pp":
        inner = (
            f"[{percent(low):+.1f}, {percent(high):+.1f}]"
            if _finite(low) and _finite(high)
            else "[n/a]"
        )
        return f"{pp(estimate)} {inner}"
    fmt = pct if kind == "pct" else num
    return f"{fmt(estimate)} [{fmt(low)}, {fmt(high)}]"


def html_table(
    frame: pd.DataFrame,
    *,
    columns: Mapping[str, str] | Sequence[str] | None = None,
    formats: Mapping[str, Formatter] | None = None,
    caption: str | None = None,
    table_id: str | None = None,
    max_rows: int | None = 200,
    numeric: Sequence[str] = (),
    empty: str = "nothing to show",
) -> Fragment:
    """An escaped HTML table.

    Args:
        frame: The rows.
        columns: Columns to show, as a list or ``{column: header}`` (default: all).
        formats: ``{column: formatter}`` turning a value into text (default ``str``).
        caption: Caption (escaped).
        table_id: ``id`` of the table (escaped).
        max_rows: Most rows shown (a note says how many were left out); None for all.
        numeric: Columns aligned right (formatted numbers are detected automatically).
        empty: Text shown instead of an empty table.

    Returns:
        The table as a :class:`Fragment`.

    Examples:
        >>> df = pd.DataFrame({"case_id": ["<b>x</b>"], "rate": [0.5]})
        >>> markup = html_table(df, formats={"rate": pct}).html
        >>> '<tr><td>&lt;b&gt;x&lt;/b&gt;</td><td class="num">50.0%</td></tr>' in markup
        True
    """
    if columns is None:
        headers = {c: str(c) for c in frame.columns}
    elif isinstance(columns, Mapping):
        headers = dict(columns)
    else:
        headers = {c: c for c in columns}
    formats = dict(formats or {})
    if frame.empty:
        note = f'<p class="ek-empty">{esc(empty)}</p>'
        title = f'<p class="ek-caption">{esc(caption)}</p>' if caption else ""
        return Fragment(title + note)
    shown = frame if max_rows is None else frame.head(max_rows)
    right = set(numeric)
    for column in headers:
        if column in shown and pd.api.types.is_numeric_dtype(shown[column].dtype):
            if not pd.api.types.is_bool_dtype(shown[column].dtype):
                right.add(column)
        if column in formats and formats[column] in (pct, pp, num):
            right.add(column)
    parts = ['<div class="ek-table-wrap"><table class="ek-table"']
    if table_id:
        parts.append(f' id="{esc(table_id)}"')
    parts.append(">")
    if caption:
        parts.append(f"<caption>{esc(caption)}</caption>")
    parts.append("<thead><tr>")
    for column, header in headers.items():
        cls = ' class="num"' if column in right else ""
        parts.append(f"<th{cls}>{esc(header)}</th>")
    parts.append("</tr></thead><tbody>")
    columns_data = {
        column: (shown[column].tolist() if column in shown else [None] * len(shown))
        for column in headers
    }
    for i in range(len(shown)):
        parts.append("<tr>")
        for column in headers:
            value = columns_data[column][i]
            text = formats[column](value) if column in formats else _plain(value)
            cls = ' class="num"' if column in right else ""
            parts.append(f"<td{cls}>{esc(text)}</td>")
        parts.append("</tr>")
    parts.append("</tbody></table>")
    if max_rows is not None and len(frame) > max_rows:
        parts.append(f'<p class="ek-note">{len(frame) - max_rows} more row(s) not shown.</p>')
    parts.append("</div>")
    return Fragment("".join(parts))


def _plain(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.4g}"
    if value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, pd.Timestamp):
        zone = " UTC" if value.tzinfo is not None else ""
        if value == value.normalize():
            return value.strftime("%Y-%m-%d")
        return value.strftime("%Y-%m-%d %H:%M:%S") + zone
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    return str(value)


def seconds(value: Any) -> str:
    """A duration in seconds.

    Examples:
        >>> seconds(12.3456)
        '12.35 s'
    """
    return f"{float(value):.2f} s" if _finite(value) else "n/a"


def usd(value: Any) -> str:
    """An amount in US dollars.

    Examples:
        >>> usd(0.0123)
        '$0.0123'
    """
    return f"${float(value):.4f}" if _finite(value) else "n/a"


def interval_table(
    table: pd.DataFrame,
    keys: Sequence[str],
    *,
    kind: str = "pct",
    header: str = "estimate",
    extra: Sequence[str] = ("n_cases", "n", "method"),
    formats: Mapping[str, Formatter] | None = None,
    caption: str | None = None,
    table_id: str | None = None,
    max_rows: int | None = 200,
    empty: str = "nothing to show",
) -> Fragment:
    """A table of estimates with intervals (``estimate [ci_low, ci_high]`` in one column).

    Args:
        table: Rows with the ``keys`` columns, ``estimate, ci_low, ci_high`` and ``confidence``.
        keys: Columns naming each row.
        kind: ``"pct"`` (proportions), ``"pp"`` (differences) or ``"num"``.
        header: Header of the estimate column (the confidence level is appended).
        extra: Further columns shown when present.
        formats: Formatters of the ``extra`` columns (rates ending in ``_rate`` default to
            percentages).
        caption: Caption.
        table_id: ``id`` of the table.
        max_rows: Most rows shown.
        empty: Text shown instead of an empty table.

    Returns:
        The table.

    Examples:
        >>> t = pd.DataFrame({"condition": ["none"], "estimate": [0.5], "ci_low": [0.25],
        ...                   "ci_high": [0.75], "confidence": [0.95]})
        >>> "50.0% [25.0%, 75.0%]" in interval_table(t, ["condition"]).html
        True
    """
    level = table["confidence"].iloc[0] if "confidence" in table and len(table) else None
    label = f"{header} [{level:.0%} CI]" if level is not None and _finite(level) else header
    shown = table.assign(
        _interval=[
            interval(e, lo, hi, kind)
            for e, lo, hi in zip(table["estimate"], table["ci_low"], table["ci_high"], strict=True)
        ]
    )
    columns = {k: k for k in keys} | {"_interval": label}
    columns |= {c: c for c in extra if c in table.columns}
    chosen = {c: pct for c in columns if c.endswith("_rate")} | dict(formats or {})
    return html_table(
        shown,
        columns=columns,
        formats=chosen,
        caption=caption,
        table_id=table_id,
        max_rows=max_rows,
        numeric=["_interval"],
        empty=empty,
    )


def key_values(items: Mapping[str, Any], *, title: str | None = None) -> Fragment:
    """A definition list of key facts (keys and values escaped).

    Args:
        items: ``{label: value}`` in display order; None values are left out.
        title: Optional heading line.

    Returns:
        The list as a :class:`Fragment`.

    Examples:
        >>> key_values({"run": "<x>"}).html
        '<dl class="ek-facts"><dt>run</dt><dd>&lt;x&gt;</dd></dl>'
    """
    head = f'<p class="ek-caption">{esc(title)}</p>' if title else ""
    rows = "".join(
        f"<dt>{esc(k)}</dt><dd>{esc(_plain(v))}</dd>" for k, v in items.items() if v is not None
    )
    return Fragment(f'{head}<dl class="ek-facts">{rows}</dl>')


def note(text: str, kind: str = "info") -> Fragment:
    """A short escaped paragraph styled as a note (``info``, ``warn`` or ``ok``).

    Examples:
        >>> note("2 < 3").html
        '<p class="ek-note ek-note-info">2 &lt; 3</p>'
    """
    return Fragment(f'<p class="ek-note ek-note-{esc(kind)}">{esc(text)}</p>')


def verdict_banner(
    verdict: str,
    headline: str,
    details: Sequence[str] = (),
) -> Fragment:
    """The coloured verdict banner at the top of a comparison.

    Args:
        verdict: ``improved``, ``regressed`` or ``inconclusive``.
        headline: One sentence with the effect and its interval.
        details: Further lines (wins/losses/ties, threshold, test used).

    Returns:
        The banner.

    Examples:
        >>> verdict_banner("improved", "+10 pp").html[:58]
        '<section class="ek-banner ek-banner-improved" role="status'
    """
    return _banner(verdict, verdict, headline, details, ' id="verdict"')


def banner(tone: str, label: str, headline: str, details: Sequence[str] = ()) -> Fragment:
    """A banner like :func:`verdict_banner` with any label.

    Args:
        tone: ``improved`` (green), ``regressed`` (red) or ``inconclusive`` (grey).
        label: The word in capitals at the top (escaped).
        headline: One sentence (escaped).
        details: Further lines (escaped).

    Returns:
        The banner.

    Examples:
        >>> "ek-banner-regressed" in banner("regressed", "<blocked>", "x").html
        True
    """
    return _banner(tone, label, headline, details, "")


def _banner(
    tone: str, label: str, headline: str, details: Sequence[str], attributes: str
) -> Fragment:
    kind = tone if tone in ("improved", "regressed", "inconclusive") else "inconclusive"
    items = "".join(f"<li>{esc(line)}</li>" for line in details)
    return Fragment(
        f'<section class="ek-banner ek-banner-{kind}" role="status"{attributes}>'
        f'<p class="ek-banner-verdict">{esc(label.upper())}</p>'
        f'<p class="ek-banner-headline">{esc(headline)}</p>'
        + (f"<ul>{items}</ul>" if items else "")
        + "</section>"
    )


def stat_cards(cards: Sequence[tuple[str, str, str]]) -> Fragment:
    """A row of small cards: ``(label, value, detail)`` each (all escaped).

    Examples:
        >>> 'ek-card-value">12<' in stat_cards([("items", "12", "")]).html
        True
    """
    body = "".join(
        f'<div class="ek-card"><div class="ek-card-label">{esc(label)}</div>'
        f'<div class="ek-card-value">{esc(value)}</div>'
        f'<div class="ek-card-detail">{esc(detail)}</div></div>'
        for label, value, detail in cards
    )
    return Fragment(f'<div class="ek-cards">{body}</div>')
