"""The stylesheet of evalkit's HTML in a notebook (Jupyter has no evalkit.css).

A rich display carries it in a ``<style>`` block scoped to ``.ek-rich``; the report pages have
``templates/evalkit/static/evalkit.css`` instead, and their sanitizer drops ``<style>`` blocks.
"""

from __future__ import annotations

RICH_CSS = """
.ek-rich{--ek-muted:#59636e;--ek-border:#d0d7de;--ek-soft:#f6f8fa;--ek-good:#1a7f37;
--ek-bad:#c0262d;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
line-height:1.45;max-width:72rem}
.ek-rich .ek-banner{border:1px solid var(--ek-border);border-radius:8px;padding:.6rem .9rem;
margin:.4rem 0 .8rem;background:#f1f3f5}
.ek-rich .ek-banner-improved{background:#e9f7ec;border-color:#a6dbb2}
.ek-rich .ek-banner-regressed{background:#fdeceb;border-color:#f2b8b5}
.ek-rich .ek-banner-verdict{margin:0;font-weight:700;letter-spacing:.06em}
.ek-rich .ek-banner-improved .ek-banner-verdict{color:var(--ek-good)}
.ek-rich .ek-banner-regressed .ek-banner-verdict{color:var(--ek-bad)}
.ek-rich .ek-banner-headline{margin:.2rem 0 .3rem;font-size:1.02rem}
.ek-rich .ek-banner ul{margin:0;padding-left:1.2rem;color:var(--ek-muted);font-size:.9rem}
.ek-rich table.ek-table{border-collapse:collapse;font-size:.85rem;margin:.3rem 0}
.ek-rich table.ek-table th,.ek-rich table.ek-table td{border-bottom:1px solid #e5e7eb;
padding:.25rem .6rem;text-align:left;vertical-align:top}
.ek-rich table.ek-table th{background:var(--ek-soft)}
.ek-rich table.ek-table .num{text-align:right;white-space:nowrap}
.ek-rich table.ek-table caption{text-align:left;font-weight:600;padding:.2rem 0}
.ek-rich figure.ek-figure{margin:.5rem 0}
.ek-rich figure.ek-figure img{max-width:100%;height:auto}
.ek-rich figcaption,.ek-rich .ek-note,.ek-rich .ek-excerpt-facts,.ek-rich .ek-skipped{
color:var(--ek-muted);font-size:.85rem}
.ek-rich .ek-reason{margin:.1rem 0 .4rem;padding:.2rem .5rem;border-left:3px solid #b45309;
background:#fff7ed;font-size:.85rem;overflow-wrap:anywhere}
.ek-rich .ek-sbs{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:.75rem}
.ek-rich .ek-pair-caption,.ek-rich .ek-excerpt-title{font-weight:600;margin:.3rem 0}
.ek-rich .ek-excerpt,.ek-rich .ek-browser-item{border:1px solid var(--ek-border);
border-radius:8px;padding:.4rem .7rem;margin:.3rem 0;min-width:0}
.ek-rich .ek-event{margin:.3rem 0;border-left:3px solid var(--ek-border);padding-left:.5rem}
.ek-rich .ek-event-kind{font-size:.72rem;text-transform:uppercase;color:var(--ek-muted)}
.ek-rich .ek-event pre{margin:.1rem 0 0;white-space:pre-wrap;overflow-wrap:anywhere;
font-size:.8rem;background:transparent}
.ek-rich .ek-event-tool-call{border-left-color:#dd8452}
.ek-rich .ek-event-tool-call .ek-event-kind{color:#a4501b}
.ek-rich .ek-event-tool-result{border-left-color:#55a868}
.ek-rich .ek-event-assistant{border-left-color:#1f77b4}
.ek-rich .ek-event-skill{border-left-color:#9467bd;background:#f5f0fb}
.ek-rich .ek-event-skill .ek-event-kind{color:#6a3d9a;font-weight:600}
.ek-rich .ek-browser-wrap{max-height:22rem;overflow:auto}
.ek-rich .ek-browser-item>summary{cursor:pointer;font-weight:600}
""".strip()


def styled(markup: str) -> str:
    """Wrap markup in ``<div class="ek-rich">`` with the notebook stylesheet.

    Args:
        markup: Escaped HTML using evalkit's classes.

    Returns:
        The self-styled markup.
    """
    return f'<div class="ek-rich"><style>{RICH_CSS}</style>{markup}</div>'
