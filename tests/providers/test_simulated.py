"""The simulated agent: realistic condition effects and flip rates, judged by real scorers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import evalkit
from evalkit.runner import RunConfig, run
from tests.conftest import DEMO


def _within_run_flip_rate(df: pd.DataFrame) -> float:
    def pairs(passed: pd.Series) -> float:
        k, s = len(passed), int(passed.sum())
        return s * (k - s) / (k * (k - 1) / 2)

    return float(df.groupby(["case_id", "condition"])["passed"].apply(pairs).mean())


def test_demo_prompt_lane_behaves_like_a_real_agent(runs_dir: Path) -> None:
    result = run(DEMO, RunConfig(runs_dir=runs_dir, lanes=("prompt",), trials=4, progress=False))
    df = evalkit.read_run(result.run_dir)
    assert (df["status"] == "ok").all()
    per_case = df.groupby(["expected_skill", "condition", "case_id"])["passed"].mean()
    triggers = per_case.drop("none", level="expected_skill").groupby("condition").mean()
    assert triggers["preloaded"] > triggers["self-load"] > triggers["none"] > triggers["stale"]
    flips = _within_run_flip_rate(df)
    assert 0.10 <= flips <= 0.22, flips
    # self-load: the agent loads the relevant skill on most trigger cases, rarely otherwise
    self_load = df[df["condition"] == "self-load"]
    should = self_load[self_load["expected_skill"] != "none"]
    should_not = self_load[self_load["expected_skill"] == "none"]
    assert (should["inferred_skill"] == should["expected_skill"]).mean() > 0.5
    assert (should_not["inferred_skill"] != "none").mean() < 0.25
    # the simulated agent never grades itself: every pass is backed by the scorers' components
    # (and, on the cases with expectations, by the judge's verdicts too)
    scores = evalkit.results.read_scores(result.run_dir)
    total = scores[scores["component"] == "total"].set_index("item_key")["passed"].sort_index()
    rows = df.set_index("item_key").sort_index()
    backed = total & rows["judge_passed"].fillna(True).astype(bool)
    assert backed.tolist() == rows["passed"].tolist()
    assert rows["judge_passed"].notna().any()


def test_skill_text_changes_outcomes(runs_dir: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.md"
    empty.write_text("# A skill with no useful guidance\nBe careful.\n")
    config = dict(
        runs_dir=runs_dir,
        lanes=("prompt",),
        trials=4,
        progress=False,
        conditions=("preloaded",),
        tags=(),
    )
    good = evalkit.read_run(run(DEMO, RunConfig(**config)).run_dir)  # type: ignore[arg-type]
    from evalkit.runner import SkillOverride

    hollow = evalkit.read_run(
        run(
            DEMO,
            RunConfig(
                **config,  # type: ignore[arg-type]
                skills=(
                    SkillOverride(skill="safe-shell", path=empty),
                    SkillOverride(skill="flaky-test-triage", path=empty),
                ),
            ),
        ).run_dir
    )
    triggers = good["category"] == "trigger"
    assert (
        good[triggers]["passed"].mean()
        > hollow[hollow["category"] == "trigger"]["passed"].mean() + 0.1
    )


def test_execution_case_acts_on_the_workspace(runs_dir: Path) -> None:
    result = run(
        DEMO,
        RunConfig(
            runs_dir=runs_dir,
            lanes=("execution",),
            trials=2,
            progress=False,
            conditions=("preloaded",),
            concurrency=4,
            backend="threading",
        ),
    )
    df = evalkit.read_run(result.run_dir)
    scores = evalkit.results.read_scores(result.run_dir)
    verifier = scores[scores["component"] == "verifier"].set_index("item_key")
    joined = df.set_index("item_key").join(verifier["passed"].rename("verifier_passed"))
    assert joined["passed"].any() and (~joined["passed"]).any()
    # an item passes only if the verifier found the workspace in the right end state
    assert not (joined["passed"] & ~joined["verifier_passed"]).any()
