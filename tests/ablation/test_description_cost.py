"""What ablating the description costs on the simulated provider, per mode (real studies).

Preloading injects a skill without its frontmatter, so the description never reaches the
agent's context under ``preloaded``: its measured cost is 0 tokens, call by call. Under
``self-load`` the agent reads the whole ``SKILL.md`` when it loads the skill, frontmatter
included, so the description costs tokens on the calls that load it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalkit.ablation import AblationConfig, AblationResult, ablate, estimate_tokens
from evalkit.results import read_run

pytestmark = pytest.mark.xdist_group("study")

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "ablation"


def _description_study(runs: Path, mode: str) -> AblationResult:
    config = AblationConfig(
        skill="shell", components=("description",), mode=mode, trials=1, splits=("dev",),
        runs_dir=runs, run_id=f"description-{mode}", progress=False, backend="threading",
    )
    return ablate(SUITE, config)


def _tokens_by_case(result: AblationResult) -> pd.DataFrame:
    frame = read_run(result.study_dir / "study")
    return frame.pivot_table(index="case_id", columns="condition", values="input_tokens")


def _description_line_tokens(result: AblationResult) -> int:
    full = (result.study_dir / "skills" / "full" / "SKILL.md").read_text()
    copy = (result.study_dir / "skills" / "ablate-description" / "SKILL.md").read_text()
    return estimate_tokens(full[: len(full) - len(copy)])


def test_description_costs_nothing_under_preloaded(tmp_path: Path) -> None:
    result = _description_study(tmp_path, "preloaded")
    row = result.components.set_index("component").loc["description"]
    assert row["tokens_source"] == "provider"
    assert row["tokens"] == 0
    tokens = _tokens_by_case(result)
    # every call of the copy costs what the full skill's costs: the frontmatter is not injected
    assert (tokens["ablate-description"] == tokens["preloaded"]).all()
    # while the skill body does reach the context
    assert (tokens["preloaded"] > tokens["none"]).all()


def test_description_is_counted_when_the_agent_reads_the_file(tmp_path: Path) -> None:
    result = _description_study(tmp_path, "self-load")
    row = result.components.set_index("component").loc["description"]
    assert row["tokens_source"] == "provider"
    # paid on the calls that load the skill (about two in three here), never more than its size
    line = _description_line_tokens(result)
    assert 0.4 * line < row["tokens"] <= line + 1
