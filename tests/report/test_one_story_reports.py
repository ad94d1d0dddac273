"""The run and compare reports of an unbalanced leaderboard tell the paired analysis' story.

Six harnesses ran model-a, two of them model-b: the run report must warn that the pooled rates
compare different mixes and give the matched figure; the compare report must name who
contributed, count what its tables count, and give every case row its provider.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

import evalkit
from evalkit._percent import percent
from evalkit.report import report
from tests.analysis.shaped_boards import MODELS, unbalanced_board, write_run


def _text(page: str) -> str:
    page = re.sub(r"<script.*?</script>|<style.*?</style>", "", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


@pytest.fixture(scope="module")
def board_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run(unbalanced_board(), tmp_path_factory.mktemp("reports") / "runs", "board")


@pytest.mark.slow
def test_the_run_report_warns_that_unbalanced_pooled_rates_mislead(
    board_run: Path, tmp_path: Path
) -> None:
    out = report(board_run, kind="run", output=tmp_path / "run.html")
    text = _text(Path(out.html_path).read_text())
    paired = evalkit.compare(board_run, conditions=MODELS, n_resamples=1000).delta.estimate
    assert "Simpson's paradox" in text
    assert f"{percent(paired):+.1f} pp over the 160 cells both ran" in text
    assert "rate over the shared cells" in text


@pytest.mark.slow
def test_the_compare_report_names_the_pool_and_counts_what_it_counts(
    board_run: Path, tmp_path: Path
) -> None:
    out = report(board_run, kind="compare", output=tmp_path / "cmp.html",
                 parameters={"conditions": ",".join(MODELS), "n_resamples": 1000})
    page = Path(out.html_path).read_text()
    text = _text(page)
    assert "pooled over 2 of 6 providers" in text
    assert "harness-3, harness-4, harness-5, harness-6 (ran only model-a)" in text
    assert "320 model-a-only group(s), 1600 item(s)" in text
    # the all-cases table has a provider column, so a case's two rows are told apart
    table = page[page.index('id="all-cases"'):]
    table = table[:table.index("</table>")]
    assert ">provider<" in table and "harness-1" in table and "harness-2" in table
    # the wins table counts (case, provider) units and says how that relates to the banner
    assert "case x provider units" in text
    assert "count cases (80): each case once" in text
    # failure causes leave out the providers that ran one side
    causes = page[page.index('id="cause-changes"'):]
    causes = causes[:causes.index("</table>")]
    assert "harness-3" not in causes and "harness-1" in causes
    assert "cases whose items both pass and fail" in text
    assert "no prediction interval for a new provider from 2 providers" in text


def test_the_rich_run_overview_carries_the_rate_guard(board_run: Path) -> None:
    from evalkit.report import run_overview

    text = _text(run_overview(board_run, runs_dir=board_run.parent)._repr_html_())
    assert "Simpson's paradox" in text and "rate over the shared cells" in text
