"""The run report's evidence bundles, opened in a real Chromium from ``file://``: images
embedded and decoded, notes shown as escaped text (hostile notes never run), the manifest with
pass/fail per artifact, nothing fetched from the network, images within the page's budget."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from evalkit import run
from evalkit.report import evidence_bundles, report
from evalkit.results import read_run
from evalkit.runner import RunConfig
from tests.report.conftest import IMG_PAYLOAD, SCRIPT_PAYLOAD
from tests.report.test_item_browser import Opened

# the module-scoped fixtures (seconds each) are built once, by one worker, for all its tests
pytestmark = pytest.mark.xdist_group("bundle-view")

ROOT = Path(__file__).resolve().parents[2]
CASES = ("evidence-flake-rate-proof", "evidence-quarantine-proof")


@pytest.fixture(scope="module")
def evidence_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("bundle-view")
    suite = tmp / "demo"
    shutil.copytree(ROOT / "cases" / "demo", suite)
    cases = suite / "cases" / "evidence.yaml"
    # the simulated agent copies the reference into its notes: hostile notes
    text = cases.read_text().replace(
        "Wrote flake_report.json and a proof bundle under proof/.",
        f"Wrote flake_report.json {SCRIPT_PAYLOAD} {IMG_PAYLOAD.replace(chr(34), chr(39))}",
    )
    cases.write_text(text)
    config = RunConfig(runs_dir=tmp / "runs", run_id="ev", conditions=("none", "preloaded"),
                       case_ids=CASES, trials=3, progress=False, use_cache=False, seed=3)
    result = run(suite, config)
    page = report(result.run_dir, kind="run", output=tmp / "run.html")
    report(result.run_dir, kind="compare", output=tmp / "compare.html",
           parameters={"conditions": "none,preloaded"})
    return result.run_dir, page.html_path


@pytest.fixture(scope="module")
def opened(chromium: Browser, evidence_report: tuple[Path, Path]) -> Iterator[Opened]:
    page = Opened(chromium, evidence_report[1])
    yield page
    page.context.close()


@pytest.mark.slow
def test_bundles_render_offline_with_images(opened: Opened, tmp_path: Path) -> None:
    page = opened.page
    bundles = page.locator("section.ek-bundle")
    assert bundles.count() == 12  # 2 cases x 2 conditions x 3 trials, within max_items
    images = page.locator(".ek-bundle-image img")
    assert images.count() >= 1
    widths = images.evaluate_all("els => els.map(e => e.complete && e.naturalWidth)")
    assert all(w and w >= 200 for w in widths), widths
    assert all(src.startswith("data:image/png;base64,") for src in
               images.evaluate_all("els => els.map(e => e.getAttribute('src'))"))
    assert opened.requests == [] and opened.errors == []
    page.locator("section.ek-bundle").first.screenshot(path=str(tmp_path / "bundle.png"))
    assert (tmp_path / "bundle.png").stat().st_size > 5_000


@pytest.mark.slow
def test_manifest_and_requirements_show_pass_fail(opened: Opened) -> None:
    page = opened.page
    statuses = page.locator(".ek-bundle-requirements td.ek-pass, "
                            ".ek-bundle-requirements td.ek-fail").all_inner_texts()
    assert set(statuses) <= {"validated", "missing", "invalid"}
    assert "validated" in statuses and ({"missing", "invalid"} & set(statuses))
    manifests = page.locator(".ek-bundle-manifest").all_inner_texts()
    assert manifests and all(re.search(r"manifest proof/manifest\.json: (passes|fails)", m)
                             for m in manifests)
    entries = page.locator(".ek-bundle-entries td.ek-pass, .ek-bundle-entries td.ek-fail")
    assert set(entries.all_inner_texts()) <= {"pass", "fail"} and entries.count() > 0


def test_hostile_notes_are_text(opened: Opened) -> None:
    page = opened.page
    notes = " ".join(page.locator(".ek-bundle-text pre").all_inner_texts())
    assert SCRIPT_PAYLOAD in notes
    assert page.evaluate("window.__pwned") is None
    stray = ".ek-bundles script, .ek-bundles img:not(.ek-bundle-image img)"
    assert page.locator(stray).count() == 0


def test_images_stay_within_the_budget(evidence_report: tuple[Path, Path]) -> None:
    run_dir, _ = evidence_report
    rows = read_run(run_dir)
    full = evidence_bundles(run_dir, rows).html
    assert full.count("<img ") >= 2
    small = evidence_bundles(run_dir, rows, max_embed_bytes=100).html
    assert "<img " not in small
    assert "not embedded to keep the page small" in small
    one = evidence_bundles(run_dir, rows, max_items=1).html
    assert one.count('class="ek-bundle"') == 1 and "1 of 12 evidence item(s) shown" in one


def test_compare_report_shows_both_sides_bundles(
    chromium: Browser, evidence_report: tuple[Path, Path]
) -> None:
    opened = Opened(chromium, evidence_report[1].with_name("compare.html"))
    try:
        page = opened.page
        assert page.locator("div.ek-bundles").count() == 2  # baseline, then candidate
        assert page.locator("section.ek-bundle").count() == 12  # 6 per side
        widths = page.locator(".ek-bundle-image img").evaluate_all(
            "els => els.map(e => e.complete && e.naturalWidth)")
        assert widths and all(w and w >= 200 for w in widths)
        assert page.evaluate("window.__pwned") is None
        assert opened.requests == [] and opened.errors == []
    finally:
        opened.context.close()
