"""The evidence bundles of a run, for reviewers: requirements, manifest, images and notes.

For each evidence item shown (failing items first, one per case and condition before any
second one), the bundle view lists every required artifact with its status and reason, the
manifest's entries with pass/fail, embeds the images that validated (PNG, JPEG, GIF or WebP
recognised by their signature, as ``data:`` URIs the page's CSP allows; never SVG) and shows
text artifacts escaped in ``<pre>``. Budgets keep the page small: at most ``max_items``
bundles, ``max_image_bytes`` per image and ``max_embed_bytes`` of images in all, and
``max_note_chars`` per note; whatever is left out is said so on the page.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._settings import RUNS_DIR
from evalkit.report._tables import Fragment, esc, rows_of
from evalkit.results import read_evidence, resolve_run_dir

_IMAGE_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_TEXT_KINDS = ("text", "markdown", "json", "cast", "file")


def _image_type(data: bytes) -> str | None:
    for signature, mime in _IMAGE_SIGNATURES:
        if data.startswith(signature):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _read(files_dir: Path, rel: str, limit: int) -> bytes | None:
    path = files_dir / rel
    try:
        if not path.resolve().is_relative_to(files_dir.resolve()) or path.is_symlink():
            return None
        with path.open("rb") as handle:
            return handle.read(limit + 1)
    except OSError:
        return None


def _status_cell(status: str) -> str:
    good = status in ("validated", "ok", "pass")
    return f'<td class="ek-{"pass" if good else "fail"}">{esc(status)}</td>'


class _Budget:
    def __init__(self, total: int) -> None:
        self.left = total
        self.skipped = 0


def _bundle_html(
    row: dict[str, Any],
    record: dict[str, Any],
    budget: _Budget,
    max_image_bytes: int,
    max_note_chars: int,
) -> str:
    files_dir = Path(record["files_dir"])
    verdict = "passed" if bool(row.get("passed")) else "failed"
    title = (f"{row.get('case_id', '')} · {row.get('condition', '')} · trial "
             f"{row.get('trial', '')} · {verdict}")
    parts = [f'<section class="ek-bundle" data-item="{esc(row["item_key"])}">',
             f"<h4>{esc(title)}</h4>"]
    requirements = record.get("requirements") or []
    parts.append('<table class="ek-table ek-bundle-requirements"><thead><tr><th>artifact</th>'
                 "<th>kind</th><th>status</th><th>reason</th></tr></thead><tbody>")
    for req in requirements:
        parts.append(f"<tr><td>{esc(req.get('path'))}</td><td>{esc(req.get('kind'))}</td>"
                     f"{_status_cell(str(req.get('status')))}<td>{esc(req.get('reason'))}</td></tr>")
    parts.append("</tbody></table>")
    bundle = record.get("bundle")
    if isinstance(bundle, dict):
        parts.append(f'<p class="ek-bundle-manifest">manifest <code>{esc(bundle.get("manifest"))}'
                     f'</code>: {"passes" if bundle.get("passed") else "fails"}: '
                     f"{esc(bundle.get('reason'))}</p>")
        entries = bundle.get("entries") or []
        if entries:
            parts.append('<table class="ek-table ek-bundle-entries"><thead><tr><th>listed file'
                         "</th><th>check</th><th>reason</th></tr></thead><tbody>")
            for entry in entries:
                status = "pass" if entry.get("passed") else "fail"
                parts.append(f"<tr><td>{esc(entry.get('path'))}</td>{_status_cell(status)}"
                             f"<td>{esc(entry.get('reason'))}</td></tr>")
            parts.append("</tbody></table>")
    valid = {f["path"]: r for r in requirements for f in r.get("files", []) if f.get("passed")}
    kinds = {f["path"]: r.get("kind") for r in requirements for f in r.get("files", [])}
    for item in record.get("collected") or []:
        rel = str(item.get("path"))
        if not item.get("copied"):
            continue
        kind = kinds.get(rel, "file")
        if kind == "image":
            if rel not in valid:
                continue  # an image that does not decode is listed above, not shown
            data = _read(files_dir, rel, max_image_bytes)
            mime = _image_type(data or b"")
            if data is None or mime is None or len(data) > max_image_bytes or \
                    len(data) > budget.left:
                budget.skipped += 1
                parts.append(f'<p class="ek-note">image <code>{esc(rel)}</code> not embedded '
                             "(over the page's image budget); it is in the run's artifacts/</p>")
                continue
            budget.left -= len(data)
            uri = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
            parts.append(f'<figure class="ek-bundle-image"><img src="{uri}" alt="{esc(rel)}">'
                         f"<figcaption>{esc(rel)}</figcaption></figure>")
        elif kind in _TEXT_KINDS or rel == (bundle or {}).get("manifest"):
            data = _read(files_dir, rel, max_note_chars * 4)
            if data is None or b"\x00" in data:
                continue
            text = data.decode("utf-8", errors="replace")
            clipped = text[:max_note_chars]
            more = f"\n[... {len(text) - len(clipped)} more characters]" if len(text) > len(
                clipped) else ""
            parts.append(f'<details class="ek-bundle-text" open><summary>{esc(rel)}</summary>'
                         f'<pre class="ek-note-text">{esc(clipped + more)}</pre></details>')
    parts.append("</section>")
    return "".join(parts)


def evidence_bundles(
    run: str | os.PathLike[str],
    rows: pd.DataFrame,
    *,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    max_items: int = 12,
    max_image_bytes: int = 300_000,
    max_embed_bytes: int = 2_000_000,
    max_note_chars: int = 3000,
) -> Fragment:
    """The bundle view of a run's evidence items.

    Args:
        run: The run (directory or id).
        rows: Its result rows.
        runs_dir: Where run ids are looked up.
        max_items: Most bundles shown.
        max_image_bytes: Largest image embedded.
        max_embed_bytes: Most bytes of images embedded on the page in all.
        max_note_chars: Characters shown per text artifact.

    Returns:
        The bundles, or a line saying there is no evidence item (or no collected bundle).
    """
    if "lane" not in rows.columns or not (rows["lane"] == "evidence").any():
        return Fragment('<p class="ek-empty">no evidence-lane item in this run</p>')
    run_dir = resolve_run_dir(run, runs_dir)
    items = rows[rows["lane"] == "evidence"].copy()
    items["_failed"] = ~items["passed"].fillna(False).astype(bool)
    items = items.sort_values(["_failed", "case_id", "condition", "trial"],
                              ascending=[False, True, True, True])
    items["_nth"] = items.groupby(["case_id", "condition"]).cumcount()
    items = items.sort_values(["_nth", "_failed", "case_id", "condition"],
                              ascending=[True, False, True, True], kind="stable")
    budget = _Budget(max_embed_bytes)
    parts, missing, shown = [], 0, 0
    for row in rows_of(items):
        if shown >= max_items:
            break
        record = read_evidence(run_dir, str(row["item_key"]))
        if record is None:
            missing += 1
            continue
        parts.append(_bundle_html(row, record, budget, max_image_bytes, max_note_chars))
        shown += 1
    total = len(items)
    said = [f"{shown} of {total} evidence item(s) shown (failing first, one per case and "
            "condition before a second)"]
    if missing:
        said.append(f"{missing} item(s) have no collected bundle (an errored item, or a cached "
                    "item whose origin run is gone)")
    if budget.skipped:
        said.append(f"{budget.skipped} image(s) not embedded to keep the page small")
    note = f'<p class="ek-note">{esc("; ".join(said))}.</p>'
    return Fragment(f'<div class="ek-bundles">{note}{"".join(parts)}</div>')
