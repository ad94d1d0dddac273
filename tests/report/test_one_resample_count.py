"""The lift and run-report notebooks and ``evalkit lift`` print one interval for one run and seed.

Their bootstrap replicates come from the one settings table: the notebooks' ``n_resamples``
defaults to ``evalkit.stats.DEFAULT_RESAMPLES``, the command's ``--resamples`` to the same
entry. On a demo run where 2,000 and 10,000 replicates give different routing-efficiency
intervals, the rendered reports show exactly what the command prints.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

import evalkit
from evalkit._settings import N_RESAMPLES, N_RESAMPLES_QUICK
from evalkit.report import declared_parameters, report
from evalkit.stats import DEFAULT_RESAMPLES, QUICK_RESAMPLES
from tests.conftest import ROOT, evalkit_cli

RUN = ROOT / "tests" / "fixtures" / "golden" / "runs" / "demo-a"
NOTEBOOKS = ROOT / "notebooks"


class _Table(HTMLParser):
    """The rows of the table ``lift-metrics``: the text of each cell."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._inside = self._cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("id", "lift-metrics") in attrs:
            self._inside = True
        elif self._inside and tag == "tr":
            self.rows.append([])
        elif self._inside and tag == "td":
            self._cell = True
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._inside = False
        elif tag == "td":
            self._cell = False

    def handle_data(self, data: str) -> None:
        if self._inside and self._cell:
            self.rows[-1][-1] += data


def _lift_rows(html: Path) -> dict[tuple[str, str], str]:
    table = _Table()
    table.feed(html.read_text(encoding="utf-8"))
    return {(r[1], r[2]): r[3] for r in table.rows if len(r) >= 4}


def _cli_routing_efficiency() -> dict[str, str]:
    """``evalkit lift RUN``'s routing-efficiency line of each lane, as it prints it."""
    done = evalkit_cli("lift", RUN)
    assert done.returncode == 0, done.stderr
    found = re.findall(r"routing_efficiency\s*│\s*([\d.]+)\s*│\s*(\[[^\]]*\])", done.stdout)
    data = json.loads(evalkit_cli("lift", RUN, "--json").stdout)
    lanes = [m["lane"] for m in data["metrics"] if m["metric"] == "routing_efficiency"]
    assert len(found) == len(lanes) == 3
    return {lane: f"{estimate} {interval}" for lane, (estimate, interval) in zip(
        lanes, found, strict=True)}


def test_every_default_comes_from_the_settings_table() -> None:
    assert (DEFAULT_RESAMPLES, QUICK_RESAMPLES) == (N_RESAMPLES.default, N_RESAMPLES_QUICK.default)
    for name, default in (("lift.py", "DEFAULT_RESAMPLES"), ("run_report.py", "DEFAULT_RESAMPLES"),
                          ("compare.py", "DEFAULT_RESAMPLES"), ("trend.py", "QUICK_RESAMPLES")):
        declared = declared_parameters(NOTEBOOKS / name)["n_resamples"]
        assert (declared["inferred_type_name"], declared["default"]) == ("int", default), name


@pytest.mark.slow
def test_the_notebooks_print_the_interval_the_command_prints(tmp_path: Path) -> None:
    printed = _cli_routing_efficiency()
    # the run tells the two replicate counts apart: a 2,000-draw notebook would not match
    quick = evalkit.lift(RUN, n_resamples=QUICK_RESAMPLES).metrics.set_index(["lane", "metric"])
    assert printed["execution"] == "0.833 [0.308, 1.825]"
    assert round(quick.loc[("execution", "routing_efficiency"), "ci_low"], 3) == 0.333
    for kind in ("lift", "run"):
        rendered = report(RUN, kind=kind, output=tmp_path / f"{kind}.html")
        assert rendered.parameters == {"run": str(RUN.resolve())}  # the defaults, untouched
        rows = _lift_rows(rendered.html_path)
        shown = {lane: rows[(lane, "routing_efficiency")] for lane in printed}
        assert shown == printed, kind
