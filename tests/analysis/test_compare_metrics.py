"""A metric added as docs/architecture.md says reaches the compare JSON and the compare report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalkit
from tests.conftest import ROOT, evalkit_cli, evalkit_process
from tests.plugin_fixtures import install_entry_points

DEMO = ROOT / "cases" / "demo"

TOY_METRIC = '''
from evalkit.analysis import CompareMetric


def failed_items_change(sides):
    """Failed items, candidate minus baseline."""
    return int((~sides.candidate["passed"].astype(bool)).sum()
               - (~sides.baseline["passed"].astype(bool)).sum())


METRIC = CompareMetric(
    name="failed_items_change", label="Failed items (toy)", compute=failed_items_change,
    description="failed items, candidate minus baseline",
)
'''


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An installed distribution publishing the toy metric (``compare_metric.NAME``)."""
    site = tmp_path_factory.mktemp("site")
    (site / "toy_compare_metric.py").write_text(TOY_METRIC)
    install_entry_points(site, "toy-compare-metric", "evalkit.plugins",
                         "compare_metric.failed_items_change = toy_compare_metric:METRIC\n")
    return {"PYTHONPATH": f"{site}:{ROOT}"}


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("metrics") / "runs"
    done = evalkit_cli("run", DEMO, "--runs-dir", runs, "--run-id", "a", "--trials", "2",
                       "--no-progress", "--lane", "prompt", "--json")
    assert done.returncode == 0, done.stderr
    return runs


@pytest.mark.slow
def test_a_toy_metric_reaches_the_compare_json_and_the_report(
    plugin_env: dict[str, str], demo_run: Path, tmp_path: Path,
) -> None:
    done = evalkit_process("compare", "a", "--conditions", "none,preloaded", "--runs-dir",
                           demo_run, "--json", "--resamples", "100", env=plugin_env)
    assert done.returncode == 0, done.stderr
    metrics = {m["name"]: m for m in json.loads(done.stdout)["report_metrics"]}
    rows = evalkit.read_run(demo_run / "a")
    failed = (~rows["passed"].astype(bool)).groupby(rows["condition"]).sum()
    assert metrics["failed_items_change"]["value"] == int(failed["preloaded"] - failed["none"])
    assert metrics["failed_items_change"]["label"] == "Failed items (toy)"
    assert "cost_per_item_change" in metrics  # the built-in stays
    # without the installed distribution the metric is absent
    plain = evalkit_cli("compare", "a", "--conditions", "none,preloaded", "--runs-dir", demo_run,
                        "--json", "--resamples", "100")
    assert "failed_items_change" not in {m["name"] for m in json.loads(plain.stdout)[
        "report_metrics"]}
    report = tmp_path / "compare.html"
    rendered = evalkit_process("report", "a", "--kind", "compare", "--conditions",
                               "none,preloaded", "--runs-dir", demo_run, "-o", report,
                               env=plugin_env, timeout=300)
    assert rendered.returncode == 0, rendered.stderr
    page = report.read_text()
    table = page[page.index('id="report-metrics"'):]
    assert "Failed items (toy)" in table[:table.index("</table>")]
