"""Reports rendered once per session from the committed fixture runs, shared by the tests.

Each render starts a kernel (a few seconds), so every kind is rendered exactly once here and
both the render tests and the browser tests look at the same pages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalkit.report import report
from tests.conftest import ROOT, evalkit_cli

RUNS = ROOT / "tests" / "fixtures" / "runs"
BEFORE = RUNS / "before"
AFTER = RUNS / "after"
ARTIFACTS = ROOT / "test-artifacts"

SCRIPT_PAYLOAD = "<script>window.__pwned=1</script>"
IMG_PAYLOAD = '<img src=x onerror="window.__pwned=1">'


@dataclass(frozen=True)
class Rendered:
    """One rendered report."""

    name: str
    kind: str
    html_path: Path
    notebook_path: Path
    stdout: str = ""

    @property
    def html(self) -> str:
        return self.html_path.read_text(encoding="utf-8")


#: Figures each rendered report must show (``<figure id="fig-...">``).
EXPECTED_FIGURES = {
    "run": ["pass-rate-condition", "pass-rate-provider", "pass-rate-lane", "lift"],
    "compare": ["forest"],
    "compare-conditions": ["forest"],
    "lift": ["success", "lift"],
    "flips": ["flips-scope", "flip-heatmap", "flip-heatmap-between"],
    "trend": ["trend-overall", "trend-pass-rate-1", "trend-lift-1"],
}
#: Titles (``<title>``) of each rendered report.
EXPECTED_TITLES = {
    "run": "Run report — after",
    "compare": "Comparison — before → after",
    "compare-conditions": "Comparison — after",
    "lift": "Skill lift — after",
    "flips": "Flip rates — after",
    "trend": "Trend — runs",
}
#: Reports that show case ids (and so must show the hostile ones as text).
SHOWS_CASE_IDS = ("run", "compare", "compare-conditions", "flips")
#: Reports with an item browser (and so with its one embedded script).
BROWSER_PAGES = ("run", "compare", "compare-conditions")


@pytest.fixture(scope="session")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Rendered]:
    out = tmp_path_factory.mktemp("reports")
    pages: dict[str, Rendered] = {}
    calls = {
        "run": dict(run=AFTER, kind="run"),
        "compare": dict(run=AFTER, baseline=BEFORE, kind="compare"),
        "compare-conditions": dict(
            run="after", runs_dir=RUNS, kind="compare", parameters={"conditions": "none,preloaded"}
        ),
        "flips": dict(run=AFTER, baseline=BEFORE, kind="flips"),
        "trend": dict(run=RUNS, kind="trend"),
    }
    for name, kwargs in calls.items():
        result = report(output=out / f"{name}.html", **kwargs)  # type: ignore[arg-type]
        pages[name] = Rendered(name, result.kind, result.html_path, result.notebook_path)
    # One kind goes through the command line, to check what it prints.
    done = evalkit_cli("report", AFTER, "--kind", "lift", "-o", out / "lift.html", "--json")
    assert done.returncode == 0, f"evalkit report --kind lift failed: {done.stderr}"
    data = json.loads(done.stdout)
    pages["lift"] = Rendered(
        "lift", "lift", Path(data["html_path"]), Path(data["notebook_path"]), done.stdout
    )
    return pages


