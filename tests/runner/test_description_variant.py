"""A description-only variant: ``--description NAME=TEXT`` changes routing and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalkit
from evalkit.results import load_manifest
from evalkit.runner import DescriptionOverride, RunConfig, run
from tests.conftest import ROOT, evalkit_cli

DEMO = ROOT / "cases" / "demo"
VAGUE = "Helps with tasks."


def _recall(run_dir: Path) -> tuple[float, float]:
    metrics = evalkit.lift(run_dir).to_dict()["metrics"]
    row = next(
        m for m in metrics if m["metric"] == "trigger_recall" and m["lane"] == "prompt"
    )
    return row["estimate"], row["ci_high"]


@pytest.mark.slow
def test_a_vague_description_loses_recall_and_only_self_load_items_rerun(tmp_path: Path) -> None:
    common = {
        "conditions": ("none", "self-load"),
        "trials": 3,
        "provider_options": {"description_weight": 10},
        "runs_dir": tmp_path,
        "progress": False,
        "backend": "threading",
    }
    apt = run(DEMO, RunConfig(run_id="apt", **common))  # type: ignore[arg-type]
    vague = run(
        DEMO,
        RunConfig(
            run_id="vague",
            descriptions=(
                DescriptionOverride(skill="safe-shell", text=VAGUE),
                DescriptionOverride(skill="flaky-test-triage", text=VAGUE),
            ),
            **common,  # type: ignore[arg-type]
        ),
    )
    apt_recall, _ = _recall(apt.run_dir)
    vague_recall, vague_high = _recall(vague.run_dir)
    assert apt_recall > vague_high > vague_recall
    # the description is recorded where it was shown, and only there
    conditions = load_manifest(vague.run_dir).to_json()["conditions"]
    assert conditions["self-load"]["descriptions"] == {"flaky-test-triage": VAGUE,
                                                       "safe-shell": VAGUE}
    assert conditions["none"].get("descriptions") is None
    # no-skill items do not see descriptions: they come from the cache, self-load items do not
    df = evalkit.read_run(vague.run_dir)
    assert df.loc[df.condition == "none", "cache_hit"].all()
    assert not df.loc[df.condition == "self-load", "cache_hit"].any()


def test_cli_description_errors_exit_2(tmp_path: Path) -> None:
    for option, message in [
        ("safe-shel=Helps", "has no skill 'safe-shel'"),
        (f"safe-shell=@{tmp_path / 'missing.txt'}", "cannot read"),
        ("safe-shell=  ", "the description is empty"),
    ]:
        proc = evalkit_cli("run", DEMO, "--description", option, "--runs-dir", tmp_path,
                           "--trials", "1")
        assert proc.returncode == 2, (option, proc.stderr)
        assert message in proc.stderr
        assert "Traceback" not in proc.stderr
