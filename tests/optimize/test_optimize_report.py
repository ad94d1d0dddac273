"""evalkit report --kind optimize: trajectory, gate, cost, escaped skill diff, test delta."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalkit.optimize import OptimizeConfig, optimize
from tests.conftest import evalkit_cli
from tests.optimize.probes import write_monotone_suite

HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'


@pytest.mark.slow
def test_optimize_report_renders(tmp_path: Path) -> None:
    suite = write_monotone_suite(tmp_path / "suite")
    seed = tmp_path / "seed.md"
    seed.write_text(f"# Probe skill\n{HOSTILE}\n")
    optimize(suite, OptimizeConfig(
        skill="probe", optimizer="python:tests.optimize.probes:append_marker", trials=1,
        max_iterations=3, stall=None, runs_dir=tmp_path / "runs", run_id="o", seed_skill=seed,
        backend="threading", n_resamples=500,
    ))
    out = tmp_path / "o.html"
    done = evalkit_cli("report", "o", "--kind", "optimize", "--runs-dir", str(tmp_path / "runs"),
                       "-o", str(out))
    assert done.returncode == 0
    page = out.read_text()
    for figure in ("fig-trajectory", "fig-gate", "fig-cost"):
        assert f'id="{figure}"' in page
    assert 'id="skill-diff"' in page and "+[X]" in page
    assert "IMPROVED" in page and "sealed test split" in page
    assert "<script>window.__pwned" not in page and "&lt;script&gt;window.__pwned" in page
    assert not re.search(r"<script\b", page)
    assert (tmp_path / "o.ipynb").exists()
    done = evalkit_cli("report", str(tmp_path / "runs"), "--kind", "optimize")
    assert done.returncode == 2
    assert "optimize.json" in done.stderr
