"""Sequential ablations and ``--minimal`` on real simulated runs of the known-effects suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.ablation import AblationConfig, ablate
from evalkit.results import load_manifest, read_run
from tests.conftest import evalkit_cli

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "ablation"


def _config(tmp_path: Path, **kwargs: object) -> AblationConfig:
    return AblationConfig(
        skill="shell", runs_dir=tmp_path, run_id="s", progress=False, backend="threading",
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.slow
def test_sequential_components_stop_at_their_own_verdict(tmp_path: Path) -> None:
    result = ablate(SUITE, _config(tmp_path, splits=("dev",), sequential=True, batch=8))
    table = result.components.set_index("component")
    assert set(result.necessary) <= {"section/quoting", "file/references/waiting.md"}
    assert "section/quoting" in result.necessary
    assert result.harmful in ([], ["section/legacy-tips"])
    for inert in ("description", "section/history"):
        assert table.loc[inert, "verdict"] == "no detectable effect"
    # a settled component got no trials after its verdict; the study ran fewer items
    assert table.loc["section/quoting", "n_cases"] < 60
    assert result.items < result.fixed_items
    rounds = [Path(r) for r in result.runs]
    assert len(rounds) >= 2
    quoting = table.loc["section/quoting", "condition"]
    seen = [quoting in set(read_run(r)["condition"]) for r in rounds]
    assert seen[0] and not seen[-1]
    for r in rounds:
        manifest = load_manifest(r)
        assert manifest is not None and manifest.ablation is not None
    assert result.items == sum(len(read_run(r)) for r in rounds)


@pytest.mark.slow
def test_minimal_skill_is_chosen_on_dev_and_verified_on_holdout(tmp_path: Path) -> None:
    result = ablate(SUITE, _config(tmp_path, minimal=True))
    minimal = result.minimal
    assert minimal is not None
    assert "section/legacy-tips" in minimal.removed
    assert not set(result.necessary) & set(minimal.removed)
    text = (Path(minimal.path) / "SKILL.md").read_text(encoding="utf-8")
    assert "sleep 10" not in text and "## Quoting" in text
    study = read_run(result.study_dir / "study")
    holdout = read_run(result.study_dir / "holdout")
    assert set(study["split"]) == {"dev"}
    assert set(holdout["split"]) == {"holdout"}
    assert minimal.n_cases == holdout["case_id"].nunique() == 30
    assert minimal.verified and minimal.ci_low > -result.threshold


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--split", "holdout"], "verifies it on holdout"),
        (["--case", "task-00"], "needs cases of split 'holdout'"),
    ],
)
def test_minimal_needs_dev_and_holdout(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    argv = ["ablate", str(SUITE), "--skill", "shell", "--minimal", "--runs-dir", str(tmp_path)]
    done = evalkit_cli(*argv + extra)
    assert done.returncode == 2
    assert message in done.stderr
