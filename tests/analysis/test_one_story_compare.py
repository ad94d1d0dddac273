"""compare on the shapes real users import: unbalanced providers and one trial per case.

Each surface is read as a researcher would: who contributed, why the others did not, what
every unmatched count is, units in pp, and where the data cannot support a figure (a
prediction interval from two providers, a case verdict from one trial) it says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from evalkit._percent import percent
from evalkit.analysis import compare
from evalkit.stats._case_floor import smallest_case_pvalue, trials_for_a_case_verdict
from evalkit.stats._signflip import sign_flip_test
from tests.analysis.shaped_boards import (
    HARNESSES,
    MODELS,
    one_trial_board,
    unbalanced_board,
    write_run,
)
from tests.conftest import evalkit_cli


@pytest.fixture(scope="module")
def unbalanced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("boards") / "runs"
    return write_run(unbalanced_board(), runs, "board")


@pytest.fixture(scope="module")
def one_trial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("boards") / "runs"
    return write_run(one_trial_board(), runs, "once")


def _compare(run: Path, *extra: str) -> str:
    done = evalkit_cli("compare", run, "--conditions", ",".join(MODELS), *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_providers_that_contributed_are_named_and_the_others_with_why(
    unbalanced: Path,
) -> None:
    data = json.loads(_compare(unbalanced, "--json"))
    assert data["pooled_providers"] == list(HARNESSES[:2])
    assert data["heterogeneity"]["n_providers"] == len(data["pooled_providers"])
    assert data["left_out_providers"] == [
        {"provider": name, "reason": "ran only model-a"} for name in HARNESSES[2:]
    ]
    assert data["pooled"]["providers"] == list(HARNESSES[:2])
    for name in HARNESSES[2:]:
        assert data["by_provider"][name]["n_cases"] == 0
        assert data["by_provider"][name]["verdict_note"] == "ran only model-a"
    # every unmatched group is explained, and the explanation adds up to the list
    summary = data["unmatched_summary"]
    assert sum(entry["groups"] for entry in summary) == len(data["unmatched"]) == 4 * 80
    assert summary == [{
        "side": "baseline", "groups": 320, "items": 320 * 5, "providers": list(HARNESSES[2:]),
        "reason": "their providers ran only model-a", "examples": ["task-000", "task-001",
                                                                    "task-002"],
    }]

    text = _compare(unbalanced)
    assert "pooled over 2 of 6 providers" in text
    assert "not compared: harness-3, harness-4, harness-5, harness-6 (ran only model-a)" in text
    assert "by provider (2;" in text and "n/a [n/a" not in text
    assert "two runs" not in text
    assert "320 model-a-only group(s), 1600 item(s) of harness-3" in text


def test_units_are_pp_and_a_two_provider_prediction_interval_is_withheld(
    unbalanced: Path,
) -> None:
    data = json.loads(_compare(unbalanced, "--json"))
    spread = data["heterogeneity"]
    assert spread["prediction_interval"]["shown"] is False
    assert "needs at least 5" in spread["prediction_interval"]["note"]
    text = _compare(unbalanced)
    line = next(x for x in text.splitlines() if x.startswith("providers:"))
    tau_pp = np.sqrt(spread["tau2"]) * 100
    assert f"tau = {tau_pp:.1f} pp" in line
    assert "a new provider:" not in line and "from 2 providers" in line


def test_a_prediction_interval_from_enough_providers_is_shown_in_pp(tmp_path: Path) -> None:
    from tests.analysis.shaped_boards import LB

    board = LB.leaderboard(providers=8, cases=60, trials=3, seed=4).drop(columns="p_true")
    result = compare(board, conditions=LB.CONDITIONS, n_resamples=2000)
    spread = result.heterogeneity
    assert spread is not None and spread.prediction_shown
    assert (f"a new provider: {percent(spread.pi_low):+.1f} to {percent(spread.pi_high):+.1f} pp"
            in spread.line())


def test_one_trial_uses_the_exact_mcnemar_test_and_says_no_case_can_be_judged(
    one_trial: Path,
) -> None:
    done = evalkit_cli("compare", one_trial, "--conditions", "no-skills,with-skills", "--json")
    data = json.loads(done.stdout)
    wins, losses = data["wins"], data["losses"]
    assert wins + losses > 100
    board = one_trial_board()
    wide = board.pivot_table(index="case_id", columns="condition", values="passed")
    table = [[((wide["no-skills"] == a) & (wide["with-skills"] == b)).sum() for b in (1, 0)]
             for a in (1, 0)]
    exact = mcnemar(table, exact=True).pvalue  # statsmodels' exact McNemar
    assert data["sign_flip"]["method"] == "binomial" and data["sign_flip"]["exact"]
    assert data["sign_flip"]["pvalue"] == pytest.approx(exact, rel=1e-9)
    assert data["sign_flip"]["at_floor"] is False
    assert data["regressed_cases"] == [] and losses > 0
    assert "one trial per side" in data["case_verdict_note"]

    text = _compare_conditions(one_trial)
    assert f"p = {exact:.3g} (exact: McNemar's test on the cases that moved)" in text
    assert "regressed cases: none\n" in text
    assert "no single case can be named regressed or improved" in text
    assert "run at least 4 trials per side" in text


def _compare_conditions(run: Path) -> str:
    done = evalkit_cli("compare", run, "--conditions", "no-skills,with-skills")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_p_value_at_the_resampling_floor_prints_as_a_bound() -> None:
    rng = np.random.default_rng(0)
    diffs = rng.uniform(0.2, 0.6, 60)  # every case improved, sizes differ: resampled
    result = sign_flip_test(diffs, n_resamples=10_000)
    assert result.method == "resampled" and result.at_floor
    assert result.pvalue == pytest.approx(1 / 10_001)
    assert result.text() == "p < 0.0001"
    mixed = np.concatenate([diffs[:30], -diffs[30:]])
    assert not sign_flip_test(mixed).at_floor and sign_flip_test(mixed).text().startswith("p =")


def test_equal_sized_differences_take_the_binomial_form_of_the_sign_flip_test() -> None:
    diffs = np.array([1.0] * 40 + [-1.0] * 22 + [0.0] * 100)
    result = sign_flip_test(diffs)
    assert result.method == "binomial"
    assert result.pvalue == pytest.approx(stats.binomtest(40, 62, 0.5).pvalue, rel=1e-12)
    # below the enumeration limit both forms are the same number
    small = np.array([1.0] * 9 + [-1.0] * 2)
    assert sign_flip_test(small).pvalue == pytest.approx(stats.binomtest(9, 11).pvalue)


def test_the_case_verdict_floor_matches_fisher() -> None:
    for n in range(1, 7):
        best = stats.fisher_exact([[n, 0], [0, n]]).pvalue
        assert smallest_case_pvalue(n, n) == pytest.approx(best)
    assert trials_for_a_case_verdict(0.05) == 4  # 0/4 vs 4/4: p = 0.029; 0/3 vs 3/3: 0.1
    assert smallest_case_pvalue(3, 3) > 0.05 >= smallest_case_pvalue(4, 4)


def test_power_from_an_unbalanced_pilot_says_whose_variances_it_planned_with(
    unbalanced: Path,
) -> None:
    done = evalkit_cli("power", "--from-run", unbalanced, "--conditions", ",".join(MODELS),
                       "--effect", "0.1")
    assert done.returncode == 0, done.stderr
    note = next(line for line in done.stdout.splitlines() if line.startswith("note: "))
    assert "planned at the pilot's 5 trials per case" in note
    assert ("variances from the 2 provider(s) that ran both conditions (harness-1, harness-2)"
            in note)
    assert "harness-3, harness-4, harness-5, harness-6 ran only model-a" in note
