"""``evalkit run --plan``: nothing is run, and a design that cannot reach a verdict is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.stats import minimum_detectable_effect, required_cases
from tests.conftest import DEMO, TINY, evalkit_cli


def _plan(*argv: str) -> dict[str, object]:
    done = evalkit_cli("run", *argv, "--plan", "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, object] = json.loads(done.stdout)
    return data


def test_four_cases_cannot_reach_a_verdict_and_the_plan_says_what_would(
    tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    plan = _plan(str(TINY), "--runs-dir", str(runs))
    assert not runs.exists()  # nothing was run
    assert plan["cases"] == 4 and plan["trials"] == 2 and plan["items"] == 4 * 4 * 2
    assert plan["reachable"] is False and plan["min_cases_for_verdict"] == 6
    mde = minimum_detectable_effect(4, 2, threshold=0.05).effect  # the default model
    assert plan["mde"] == pytest.approx(mde) and mde > 0.5 == plan["max_improvement"]
    warnings = plan["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 2
    assert "no verdict is possible with 4 case(s)" in warnings[0]
    assert "no improvement can be shown" in warnings[1]
    # what would: the fewest cases at which the largest possible improvement is detectable
    fewest = plan["cases_for_any_verdict"]
    assert isinstance(fewest, int) and fewest >= 6 and f"{fewest} cases at 2 trials" in warnings[1]
    assert minimum_detectable_effect(fewest, 2, threshold=0.05).effect <= 0.5
    assert minimum_detectable_effect(fewest - 1, 2, threshold=0.05).effect > 0.5
    assert plan["cases_at_threshold"] == required_cases(0.05, 2, threshold=0.0).n_cases

    done = evalkit_cli("run", TINY, "--runs-dir", runs, "--plan")
    assert done.returncode == 0
    assert "plan (nothing run): 4 cases" in done.stdout
    assert "warning: this design cannot reach a verdict" in done.stderr and not runs.exists()


def test_a_design_that_can_reach_a_verdict_has_no_warning(
    ) -> None:
    plan = _plan(str(DEMO), "--trials", "3")
    assert plan["reachable"] is True and plan["warnings"] == []
    assert plan["cases"] == plan["compared_cases"] == 39 and plan["items"] == 39 * 4 * 3
    assert plan["mde"] == pytest.approx(minimum_detectable_effect(39, 3, threshold=0.05).effect)


def test_an_until_verdict_budget_caps_the_cases_compared(
    ) -> None:
    plan = _plan(str(DEMO), "--conditions", "none,stale", "--until-verdict",
                 "--trials", "3", "--max-items", "24", "--plan-effect", "0.2")
    assert plan["pair"] == ["none", "stale"] and plan["compared_cases"] == 4  # 24 / (2 x 3)
    assert plan["reachable"] is False
    needed = required_cases(0.2, 3, threshold=0.05).n_cases
    assert plan["cases_for_plan_effect"] == needed
    text = " ".join(plan["warnings"])  # type: ignore[arg-type]
    assert "--max-items 24 pays for 4 of the 39 cases" in text
    assert f"the planned effect of +20 pp needs {needed} cases" in text


def test_from_run_is_only_for_plans() -> None:
    done = evalkit_cli("run", str(TINY), "--from-run", "x")
    assert done.returncode == 2
    assert "--from-run: only with --plan" in done.stderr
