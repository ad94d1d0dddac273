"""``evalkit report STUDY --kind ablation``: forest plot, cost table, minimal skill."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalkit.ablation import AblationConfig, ablate
from tests.conftest import evalkit_cli

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "ablation"


@pytest.mark.slow
def test_ablation_report_renders(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    ablate(SUITE, AblationConfig(
        skill="shell", runs_dir=runs, run_id="abl", progress=False, backend="threading",
        minimal=True, trials=2,
    ))
    out = tmp_path / "abl.html"
    done = evalkit_cli("report", "abl", "--kind", "ablation", "--runs-dir", str(runs),
                       "-o", str(out))
    assert done.returncode == 0
    page = out.read_text(encoding="utf-8")
    assert 'id="fig-ablation"' in page
    assert 'id="ablation-verdicts"' in page and 'id="ablation-cost"' in page
    assert "section/legacy-tips" in page and "harmful" in page
    assert "verified on holdout" in page or "not verified on holdout" in page
    assert not re.search(r"<script\b", page)
    done = evalkit_cli("report", str(runs), "--kind", "ablation")
    assert done.returncode == 2
    assert "ablation.json" in done.stderr
