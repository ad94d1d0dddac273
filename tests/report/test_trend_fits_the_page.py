"""A year of weekly runs: the trend's axis labels never overlap and its runs table fits the page.

The runs directory holds 52 copies of the committed ``w41`` run, each moved to its own Monday
of 2026 (its manifest's start and its rows' run id rewritten): what a weekly job leaves after a
year. The report is rendered by its notebook and opened in Chromium, which measures the runs
table against its container. The plots are PNG images in the page, so their labels are
measured on the same figures drawn as SVG and opened in Chromium: matplotlib lays the figure
out once for both, and the browser gives each tick label's drawn glyphs their bounding box.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalkit.analysis as analysis
import evalkit.report as rk
from tests.report.conftest import RUNS

if TYPE_CHECKING:
    from playwright.sync_api import Browser

FIRST_MONDAY = pd.Timestamp("2026-01-05 09:00", tz="UTC")

#: Each x tick label's box as Chromium draws it (the label groups matplotlib writes).
_LABEL_BOXES = """() => [...document.querySelectorAll('g[id^="xtick_"] > g[id^="text_"]')]
    .map(g => g.getBoundingClientRect())
    .filter(r => r.width > 0)
    .map(r => [r.left, r.right, r.top, r.bottom])"""


def _weekly_runs(root: Path, weeks: int) -> Path:
    for week in range(weeks):
        start = FIRST_MONDAY + pd.Timedelta(weeks=week)
        name = f"weekly-{start:%Y-%m-%d}"
        dest = root / name
        shutil.copytree(RUNS / "w41", dest)
        manifest = json.loads((dest / "manifest.json").read_text())
        manifest.update(run_id=name, created_at=start.isoformat(), started_at=start.isoformat())
        (dest / "manifest.json").write_text(json.dumps(manifest))
        table = pq.read_table(dest / "results.parquet")
        column = table.schema.get_field_index("run_id")
        ids = pa.array([name] * len(table), table.schema.field("run_id").type)
        pq.write_table(table.set_column(column, "run_id", ids), dest / "results.parquet")
    return root


@pytest.fixture(scope="module")
def year(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _weekly_runs(tmp_path_factory.mktemp("year"), 52)


@pytest.fixture(scope="module")
def history(year: Path) -> analysis.Trend:
    return analysis.trend(year, period="week", n_resamples=20)


def _first_weeks(table: pd.DataFrame, weeks: int) -> pd.DataFrame:
    last = FIRST_MONDAY.normalize() + pd.Timedelta(weeks=weeks - 1)
    return table[pd.to_datetime(table["period"], utc=True) <= last]


def _overlaps(boxes: list[list[float]]) -> list[tuple[list[float], list[float]]]:
    ordered = sorted(boxes)
    return [(a, b) for a, b in zip(ordered, ordered[1:], strict=False) if b[0] < a[1]]


@pytest.mark.slow
@pytest.mark.parametrize(("weeks", "period"), [(52, "week"), (16, "week"), (52, "run")])
def test_no_axis_label_overlaps_another_in_chromium(
    chromium: Browser, history: analysis.Trend, tmp_path: Path, weeks: int, period: str
) -> None:
    """52 and 16 weekly points, labelled by week or (longer labels) by day and time."""
    overall = _first_weeks(history.overall, weeks)
    assert overall["period"].nunique() == weeks
    figures = {
        "overall": rk.trend_plot(overall, series="provider", facet="suite",
                                 title="overall", ylabel="pass rate", period=period),
        "conditions": rk.trend_plot(_first_weeks(history.pass_rates, weeks),
                                    series="condition", facet="provider",
                                    title="by condition", ylabel="pass rate", period=period),
        "lift": rk.trend_plot(rk.lift_trend(_first_weeks(history.lift, weeks)),
                              series="metric", facet="provider", percent_points=True,
                              title="lift", ylabel="difference", period=period),
    }
    page = chromium.new_page(viewport={"width": 1300, "height": 900})
    try:
        for name, figure in figures.items():
            path = tmp_path / f"{name}.svg"
            figure.savefig(path, format="svg")
            page.goto(path.as_uri())
            boxes = page.evaluate(_LABEL_BOXES)
            width = page.evaluate("document.documentElement.getBoundingClientRect().width")
            assert len(boxes) >= 5, (name, boxes)  # the axis is labelled, not left bare
            assert _overlaps(boxes) == [], name
            assert all(0 <= left and right <= width for left, right, _, _ in boxes), name
    finally:
        page.close()


@pytest.mark.slow
def test_the_runs_table_fits_its_container_in_chromium(
    chromium: Browser, year: Path, tmp_path: Path
) -> None:
    result = rk.report(year, kind="trend", output=tmp_path / "trend.html",
                       parameters={"n_resamples": 100})
    page = chromium.new_page(viewport={"width": 1300, "height": 900})
    try:
        page.goto(result.html_path.as_uri())
        fit = page.evaluate("""() => {
            const table = document.getElementById('runs');
            const box = table.parentElement;
            return {rows: table.tBodies[0].rows.length,
                    table: table.getBoundingClientRect().width,
                    box: box.clientWidth, scroll: box.scrollWidth,
                    page: document.documentElement.scrollWidth,
                    view: document.documentElement.clientWidth};
        }""")
        assert fit["rows"] == 52
        assert fit["table"] <= fit["box"] + 0.5 and fit["scroll"] <= fit["box"], fit
        assert fit["page"] <= fit["view"], fit  # nothing makes the page scroll sideways
        page.screenshot(path=tmp_path / "trend.png", full_page=False)
    finally:
        page.close()
