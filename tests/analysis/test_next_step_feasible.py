"""A next step a researcher can run as printed: feasible on the suite, priced, in proportion.

Three shapes from the demo suite, as a new user meets them: a small edit whose effect is inside
the threshold (two runs), a five-case suite, and the per-condition plan between two runs where
only some conditions carried evidence.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from evalkit.cli import build_parser
from tests.conftest import ROOT, evalkit_cli

DEMO = ROOT / "cases" / "demo"
FIVE = ("anti-curl-pipe-sudo-sh", "anti-delete-flaky-test", "anti-rm-rf-workdir",
        "anti-sleep-before-migrate", "anti-tmux-dev-server")


def _run(runs: Path, run_id: str, *extra: str) -> None:
    done = evalkit_cli("run", DEMO, "--runs-dir", runs, "--run-id", run_id, "--no-progress",
                       "--lane", "prompt", "--json", *extra)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("feasible") / "runs"
    _run(runs, "before")
    edited = runs.parent / "SKILL.md"
    edited.write_text((DEMO / "skills" / "safe-shell" / "SKILL.md").read_text()
                      + "\nPrefer a dry run first.\n")
    _run(runs, "candidate", "--skill", f"safe-shell={edited}")
    _run(runs, "small", "--conditions", "none,self-load", *[w for c in FIVE
                                                           for w in ("--case", c)])
    return runs


def _compare(runs: Path, *argv: str) -> tuple[dict[str, object], str]:
    data = json.loads(evalkit_cli("compare", *argv, "--runs-dir", runs, "--json").stdout)
    text = evalkit_cli("compare", *argv, "--runs-dir", runs).stdout
    return data, text


@pytest.mark.slow
def test_a_small_edit_is_planned_as_no_practical_difference_over_the_changed_conditions(
    runs: Path,
) -> None:
    # Every pair of the edited conditions ties (the edit changed no outcome), so at the
    # default threshold the tied-pairs bound settles it: 20 cases x 2 conditions x 3 trials
    # = 120 tied pairs, statsmodels proportion_confint(0, 120, method="beta")[1] = 0.030273
    settled, settled_text = _compare(runs, "before", "candidate")
    assert settled["next_step"] is None and settled["equivalence"]["equivalent"]  # type: ignore[index]
    assert settled["delta"]["ci_high"] == pytest.approx(0.030273, abs=1e-6)  # type: ignore[index]
    assert "no practical difference (within ±5 pp)" in settled_text
    # At a 1 pp threshold it is not settled yet: the plan is in tied pairs
    data, text = _compare(runs, "before", "candidate", "--threshold", "0.01")
    step = data["next_step"]
    assert data["verdict"] == "inconclusive" and isinstance(step, dict)
    assert step["tied_pairs"] == 120 and "every pair of trials tied" in text
    # none and stale did not change (their pairs are reused): the plan leaves them out
    pooled = data["pooled"]
    assert isinstance(pooled, dict)
    assert step["conditions"] == pooled["contributing"]
    assert "none" not in step["conditions"] and "stale" not in step["conditions"]
    if abs(data["delta"]["estimate"]) < 0.05:  # type: ignore[index]
        assert step["goal"] == "equivalence" and step["equivalence_cases"] > 0
        assert "to show no practical difference (within ±1 pp) if the pairs keep tying" in text
        # Three tied pairs a case cannot vouch for a case at 1 pp: the average's note says so
        # instead of "would not matter", and names no case as moved (none did).
        assert "inside the practical threshold of 1 pp on average, but the intervals" in text
        assert "would not matter" not in text and "moved by more than" not in text
        assert "--until-verdict" not in text
    if step["command"] is not None:
        args = build_parser().parse_args(shlex.split(step["command"])[1:])
        assert args.conditions == ",".join(step["conditions"]) and "--skill" not in step[
            "command"]  # each side sets its own skill text
        assert "run the command once with the baseline's skill text" in text
    assert step["items"] > 0 and step["cost_simulated"] is True
    assert f"about {step['items']:,} items" in text


def test_a_five_case_suite_is_never_asked_for_more_cases_than_it_has(runs: Path) -> None:
    data, text = _compare(runs, "small", "--conditions", "none,self-load")
    step = data["next_step"]
    if data["verdict"] != "inconclusive":
        pytest.skip("this draw settled the five cases")
    assert isinstance(step, dict) and step["suite_cases"] == 5
    planned = step["equivalence_cases"] if step["goal"] == "equivalence" else (
        step["cases"] or step["cases_at_threshold"])
    assert planned > 5 and step["cases_to_add"] == planned - 5
    assert f"the suite has 5 cases and the plan needs {planned}" in text
    assert f"add {planned - 5} cases" in text
    assert "--until-verdict" not in text  # it would stop after one round, cases exhausted
    if step["command"] is not None:  # more trials over the same five cases, filters kept
        words = shlex.split(step["command"])
        assert [words[i + 1] for i, w in enumerate(words) if w == "--case"] == list(FIVE)
        args = build_parser().parse_args(words[1:])
        assert step["items"] == 2 * 5 * args.trials


def test_a_plan_out_of_proportion_says_so_and_what_to_do_instead() -> None:
    import pandas as pd

    from evalkit.analysis._step_price import price
    from evalkit.analysis._step_types import NextStep

    rows = pd.DataFrame({"cost_usd": [0.02] * 100, "latency_s": [30.0] * 100,
                         "provider": ["claude_code"] * 100})
    cost = price(1_200, rows)
    assert cost.out_of_proportion and cost.ratio == 12.0 and not cost.simulated
    assert cost.cost_usd == pytest.approx(24.0) and cost.wall_s == pytest.approx(18_000.0)
    assert cost.text() == ("about 1,200 items, $24.00, 5.0 h at concurrency 2; 12.0x the "
                           "items compared so far")
    step = NextStep(None, None, 0.01, None, 0.05, 50, 3, 0.8, None, goal="equivalence")
    from evalkit.analysis._step_plan import _instead

    said = _instead(step, 12.0, 100)
    assert "out of proportion (more than 10x)" in said and "add cases" in said
    assert "raise the threshold" in said


def test_the_wall_time_is_at_the_runs_own_concurrency() -> None:
    import pandas as pd

    from evalkit.analysis._step_plan import _concurrency
    from evalkit.analysis._step_price import price

    assert _concurrency("evalkit run cases/demo --concurrency 8 --run-id a") == 8
    assert _concurrency("evalkit run cases/demo --concurrency=6") == 6
    assert _concurrency("evalkit run cases/demo") == 2  # evalkit run's default
    rows = pd.DataFrame({"cost_usd": [0.0] * 10, "latency_s": [8.0] * 10})
    assert price(100, rows, 8).wall_s == price(100, rows, 2).wall_s / 4 == 100.0
    assert "at concurrency 8" in price(100, rows, 8).text()
