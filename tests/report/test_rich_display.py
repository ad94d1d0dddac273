"""Rich displays of the result objects, each rendered into a page and checked in Chromium.

The fixture runs hold hostile case ids and transcripts (``<script>window.__pwned=1</script>``,
an ``<img onerror>``), so every display below carries them: the pages have no
Content-Security-Policy (as in Jupyter), and the escaping alone must keep them inert text.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

import evalkit
from evalkit._display import rich_html
from evalkit.analysis import sequential_compare
from evalkit.report import flip_pairs, run_overview, sanitize_html
from tests.report.conftest import AFTER, BEFORE, IMG_PAYLOAD, SCRIPT_PAYLOAD


def _open(browser: Browser, markup: str, path: Path) -> tuple[Page, list[str]]:
    path.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>t</title></head>"
        f"<body>{markup}</body></html>",
        encoding="utf-8",
    )
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.resolve().as_uri(), wait_until="load")
    return page, errors


#: name -> (make the object, banner text expected, least number of table rows)
OBJECTS: dict[str, tuple[Callable[[], Any], str, int]] = {
    "compare": (lambda: evalkit.compare(BEFORE, AFTER, n_resamples=1000), "INCONCLUSIVE", 10),
    "lift": (lambda: evalkit.lift(AFTER, n_resamples=300), "SKILL LIFT", 4),
    "flips-within": (lambda: evalkit.flips(AFTER), "FLIP RATE", 3),
    "flips-between": (lambda: evalkit.flips(BEFORE, AFTER), "FLIP RATE", 3),
    "power": (lambda: evalkit.power(effect=0.15, trials=3), "POWER", 0),
    "gate": (lambda: evalkit.gate(BEFORE, AFTER, n_resamples=1000), "BLOCKED", 1),
    "run": (lambda: run_overview(AFTER), "RUN AFTER", 4),
    "sequential": (
        lambda: sequential_compare(BEFORE, AFTER, round_cases=2), "INCONCLUSIVE", 3
    ),
}


@pytest.mark.parametrize("name", list(OBJECTS))
def test_rich_display_in_chromium(chromium: Browser, tmp_path: Path, name: str) -> None:
    make, banner_text, least_rows = OBJECTS[name]
    obj = make()
    markup = obj._repr_html_()
    assert isinstance(markup, str) and markup.startswith('<div class="ek-rich"><style>')
    page, errors = _open(chromium, markup, tmp_path / f"{name}.html")
    try:
        banner = page.locator(".ek-banner .ek-banner-verdict").first
        assert banner.is_visible() and banner.inner_text() == banner_text
        assert page.locator(".ek-banner-headline").first.inner_text().strip() != ""
        assert page.locator("table.ek-table tbody tr, dl.ek-facts dt").count() >= max(1, least_rows)
        image = page.locator("figure.ek-figure img").first
        assert image.is_visible()
        assert image.evaluate("img => img.complete ? img.naturalWidth : 0") > 300
        assert page.locator("script").count() == 0 and page.locator("img[onerror]").count() == 0
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert errors == []
        if name == "sequential":
            assert page.locator("#fig-sequential img").is_visible()
            looks = page.locator("table.ek-table", has_text="Every look").locator("tbody tr")
            assert looks.count() == len(obj.looks)
        if name in ("compare", "flips-within", "run", "sequential"):
            shown = page.get_by_text(SCRIPT_PAYLOAD, exact=False).first
            assert shown.is_visible(), "the hostile case id is shown as text"
    finally:
        page.close()


def test_the_banner_tells_the_verdict(chromium: Browser, tmp_path: Path) -> None:
    result = evalkit.compare(BEFORE, AFTER, n_resamples=1000)
    page, _ = _open(chromium, result._repr_html_() or "", tmp_path / "cmp.html")
    try:
        headline = page.locator(".ek-banner-headline").inner_text()
        assert f"over {result.n_cases} matched cases" in headline
        assert page.locator(".ek-banner-inconclusive").count() == 1
        rows = page.locator("table#moved-most tbody tr").all_inner_texts()
        assert len(rows) == 10 and result.cases["case_id"].nunique() >= 1
        # The rows of named cases come first.
        assert "quote-variables" in rows[0] or "sum-numbers" in rows[0]
        named = page.locator("table#named-cases tbody tr").all_inner_texts()
        assert len(named) == len(result.regressed_cases) + len(result.improved_cases) == 2
    finally:
        page.close()


def test_flip_pairs_side_by_side_in_chromium(chromium: Browser, tmp_path: Path) -> None:
    within = flip_pairs(AFTER, max_pairs=3)
    between = flip_pairs(AFTER, baseline=BEFORE, max_pairs=3)
    page, errors = _open(
        chromium, within._repr_html_() + between._repr_html_(), tmp_path / "f.html"
    )
    try:
        pairs = page.locator("section.ek-pair")
        assert pairs.count() == 6
        first = pairs.first
        assert "passed, trial" in first.locator(".ek-pair-caption").inner_text()
        sides = first.locator(".ek-excerpt")
        assert sides.count() == 2
        left, right = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
        assert left is not None and right is not None and right["x"] > left["x"] + 200
        assert "passed: yes" in sides.nth(0).inner_text()
        assert "passed: no" in sides.nth(1).inner_text()
        assert page.locator(".ek-event-tool-call").count() >= 1
        caption = pairs.nth(3).locator(".ek-pair-caption").inner_text()
        assert " in before, " in caption and caption.endswith(" in after")
        assert page.evaluate("typeof window.__pwned") == "undefined" and errors == []
    finally:
        page.close()


def test_skill_loads_are_marked(chromium: Browser, tmp_path: Path) -> None:
    rows = evalkit.read_run(AFTER)
    loaded = rows[(rows["condition"] == "self-load") & (rows["inferred_skill"] != "none")]
    assert not loaded.empty
    markup = run_overview(AFTER, max_items=500)._repr_html_()
    page, _ = _open(chromium, markup, tmp_path / "run.html")
    try:
        marked = page.locator(".ek-event-skill")
        assert marked.count() >= len(loaded)
        item = page.locator("details.ek-browser-item").filter(has=marked).first
        assert not item.locator(".ek-event-skill").first.is_visible(), "closed until clicked"
        item.locator("summary").click()
        shown = item.locator(".ek-event-skill").first
        assert shown.is_visible()
        assert shown.locator(".ek-event-kind").inner_text().lower().startswith("skill load")
    finally:
        page.close()


def test_displays_survive_the_report_sanitizer() -> None:
    markup = evalkit.flips(AFTER)._repr_html_() or ""
    cleaned = sanitize_html(markup)
    assert "<style" not in cleaned and "&lt;style" not in cleaned, "the stylesheet is dropped"
    assert 'class="ek-banner ek-banner-inconclusive"' in cleaned
    assert "data:image/png;base64," in cleaned
    assert IMG_PAYLOAD not in cleaned and SCRIPT_PAYLOAD not in cleaned


def test_an_unregistered_type_falls_back_to_the_plain_repr() -> None:
    class Other:
        pass

    assert rich_html(Other()) is None
