"""Reports of a run with several providers show the provider dimension."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import evalkit
from evalkit.interop import import_results
from evalkit.report import comparison_html, provider_comparisons, report

ROOT = Path(__file__).resolve().parents[2]


def _leaderboard(providers: int, cases: int):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "make_leaderboard_fixture", ROOT / "scripts" / "make_leaderboard_fixture.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.leaderboard(providers=providers, cases=cases, seed=4).drop(columns="p_true")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    csv = runs.parent / "board.csv"
    _leaderboard(6, 30).to_csv(csv, index=False)
    import_results(csv, "csv", "board", runs_dir=runs)
    return runs / "board"


def test_rich_display_has_the_provider_table_and_heterogeneity(run_dir: Path) -> None:
    result = evalkit.compare(run_dir, conditions=("no-skills", "with-skills"), n_resamples=1000)
    page = comparison_html(result)
    assert 'id="by-provider"' in page and "provider-forest" in page
    assert "providers: " in page and "(interaction F(" in page
    table = provider_comparisons(result)
    assert list(table["provider"]) == [f"model-{i}" for i in range(6)]
    one = evalkit.compare(run_dir, conditions=("no-skills", "with-skills"), n_resamples=1000,
                          providers="model-2")
    assert 'id="by-provider"' not in comparison_html(one)


@pytest.mark.slow
def test_compare_report_shows_providers(run_dir: Path, tmp_path: Path) -> None:
    out = report(run_dir, kind="compare", output=tmp_path / "cmp.html",
                 parameters={"conditions": "no-skills,with-skills", "n_resamples": 1000})
    page = Path(out.html_path).read_text()
    assert "By provider" in page and 'id="by-provider"' in page
    assert "providers: " in page and "(interaction F(" in page
    for i in range(6):
        assert f"model-{i}" in page
    two = report(run_dir, kind="compare", output=tmp_path / "two.html",
                 parameters={"conditions": "no-skills,with-skills", "n_resamples": 1000,
                             "providers": "model-0,model-1"})
    page = Path(two.html_path).read_text()
    assert "model-0" in page and "model-5" not in page
