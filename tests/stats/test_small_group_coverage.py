"""``compare``'s delta at small n: never zero-width, it covers, A/A holds, and ``lift`` agrees.

The delta of ``compare`` and the lifts of ``lift`` share one rule
(:func:`evalkit.stats.case_delta_interval`): the expanded percentile bootstrap over cases,
widened to contain the t interval and, where every case moved alike, the Wilson interval of the
mean difference at the number of cases.

Simulations are seeded and run the code path of ``compare`` (``paired_delta_interval``,
``overall_summary``) at 1,000 bootstrap resamples (the default is 10,000; fewer only make the
percentile bounds noisier, and at these sizes the t and Wilson bounds decide). Cases follow
Miller's model (``simulate_arms``): case difficulty Beta(1.6, 2.4) (mean 0.4, concentration 4:
a between-case spread), each case's candidate rate moved by the same share of its headroom, so
the true mean difference is the stated effect exactly; new cases every draw. With 2,000 draws
the Monte Carlo standard error of a coverage near 95 % is ``sqrt(0.95 * 0.05 / 2000)`` = 0.49
pp, a fifth of the 2.5 pp tolerance; with 1,000 A/A draws that of a 5 % rate is 0.69 pp.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

import evalkit
from evalkit.stats import CompareOptions, paired_compare
from evalkit.stats._bootstrap import paired_delta_interval
from evalkit.stats._paired import overall_summary
from evalkit.stats._simulate import simulate_arms
from tests.conftest import evalkit_cli

CONFIDENCE = 0.95
DRAWS = 2_000
AA_DRAWS = 1_000
RESAMPLES = 1_000
MEAN, CONCENTRATION = 0.4, 4.0
#: ``"mixed"``: each case runs its own number of trials, 1 to 5 (the same in both arms).
TRIALS: tuple[int | str, ...] = (1, 3, 5, "mixed")


def _draw(
    rng: np.random.Generator, cases: int, trials: int | str, effect: float
) -> tuple[np.ndarray, np.ndarray]:
    """One paired experiment: ``(baseline, candidate)`` pass bits, NaN = trial not run."""
    if trials != "mixed":
        return simulate_arms(rng, cases, int(trials), effect, MEAN, CONCENTRATION)
    base, cand = simulate_arms(rng, cases, 5, effect, MEAN, CONCENTRATION)
    kept = np.arange(5)[None, :] < rng.integers(1, 6, size=cases)[:, None]
    return np.where(kept, base, np.nan), np.where(kept, cand, np.nan)


def _coverage(cases: int, trials: int | str, effect: float) -> tuple[float, float]:
    """Share of draws whose interval holds ``effect``, and the smallest width seen."""
    code = 6 if trials == "mixed" else int(trials)
    rng = np.random.default_rng([cases, code, round(effect * 100) + 100])
    covered, narrowest = 0, np.inf
    for draw in range(DRAWS):
        base, cand = _draw(rng, cases, trials, effect)
        ci = paired_delta_interval(
            base, cand, n_resamples=RESAMPLES, confidence=CONFIDENCE, seed=draw
        )
        covered += ci.ci_low <= effect <= ci.ci_high
        narrowest = min(narrowest, ci.ci_high - ci.ci_low)
    return covered / DRAWS, float(narrowest)


def _cases_moving(n_cases: int, before: int, after: int, trials: int) -> pd.DataFrame:
    """Every case passes ``before`` of ``trials`` under none and ``after`` under preloaded."""
    rows = [
        {
            "case_id": f"case-{case}",
            "condition": condition,
            "trial": trial,
            "passed": trial < passes,
        }
        for case in range(n_cases)
        for condition, passes in (("none", before), ("preloaded", after))
        for trial in range(trials)
    ]
    return pd.DataFrame(rows)


def test_seven_cases_moving_one_in_five_get_a_wilson_interval_not_a_point() -> None:
    frame = _cases_moving(7, 1, 2, 5)
    base = frame[frame["condition"] == "none"].assign(condition="x")
    cand = frame[frame["condition"] == "preloaded"].assign(condition="x")
    result = paired_compare(base, cand, options=CompareOptions(n_resamples=2_000))
    delta = result.delta
    assert delta.estimate == pytest.approx(0.2)
    # every case moved +0.2: no spread, so bootstrap and t are [+0.2, +0.2]; the rule maps the
    # mean onto [0, 1] ((0.2 + 1) / 2 = 0.6) and takes Wilson's interval at 7 cases
    low, high = proportion_confint(0.6 * 7, 7, alpha=0.05, method="wilson")
    assert delta.ci_low == pytest.approx(2 * low - 1, abs=1e-12)
    assert delta.ci_high == pytest.approx(2 * high - 1, abs=1e-12)
    assert delta.ci_high - delta.ci_low > 0.5
    # seven +20 pp moves of one trial in five are no evidence of +20 pp: no verdict
    assert result.verdict == "inconclusive"
    # lift prints the same interval for the same difference
    metrics = evalkit.lift(frame, n_resamples=2_000).metrics.set_index("metric")
    assert metrics.loc["oracle_lift", "ci_low"] == pytest.approx(delta.ci_low, abs=1e-12)
    assert metrics.loc["oracle_lift", "ci_high"] == pytest.approx(delta.ci_high, abs=1e-12)


@pytest.mark.parametrize("effect", [0.2, -0.15, 0.0])
@pytest.mark.parametrize("trials", TRIALS)
def test_two_cases_cover_at_least_92_percent(trials: int | str, effect: float) -> None:
    coverage, narrowest = _coverage(2, trials, effect)
    assert narrowest > 0.0
    assert coverage >= 0.92


#: Cells where the interval covers more than nominal + 2.5 pp, measured (conservative, not
#: a false certainty): 5 cases of 1 trial (differences -1, 0 or +1; 99.4 % at +20 pp, where
#: the t interval alone covers 98.7 % of the draws in which the cases do not all tie), and at
#: no effect 5 cases of mixed trials (98.6 %), where every draw with no case moving covers 0.
OVER_COVERING = {(5, 1, 0.2), (5, 1, -0.15), (5, 1, 0.0), (5, "mixed", 0.0)}


@pytest.mark.parametrize("effect", [0.2, -0.15, 0.0])
@pytest.mark.parametrize("trials", TRIALS)
@pytest.mark.parametrize("cases", [5, 10, 20])
def test_coverage_is_nominal_from_five_cases(cases: int, trials: int | str, effect: float) -> None:
    coverage, narrowest = _coverage(cases, trials, effect)
    assert narrowest > 0.0
    assert coverage >= CONFIDENCE - 0.025
    if (cases, trials, effect) not in OVER_COVERING:
        assert coverage <= CONFIDENCE + 0.025


@pytest.mark.slow
@pytest.mark.parametrize("trials", [1, 3, 5])
@pytest.mark.parametrize("cases", [2, 5, 6, 8, 12])
def test_aa_false_verdicts_stay_at_or_below_alpha(cases: int, trials: int) -> None:
    rng = np.random.default_rng([cases, trials, 7])
    false = 0
    for draw in range(AA_DRAWS):
        base, cand = simulate_arms(rng, cases, trials, 0.0, MEAN, CONCENTRATION)
        summary = overall_summary(
            base, cand, CompareOptions(confidence=CONFIDENCE, n_resamples=500, seed=draw)
        )
        false += summary["verdict"] != "inconclusive"
    assert false / AA_DRAWS <= 1 - CONFIDENCE


def _unbalanced_board(path: Path) -> Path:
    """Three providers with 6, 9 and 4 cases, 2 to 4 trials a case, different effects."""
    rng = np.random.default_rng(5)
    rows = []
    for provider, (n_cases, effect) in {
        "model-a": (6, 0.3),
        "model-b": (9, 0.1),
        "model-c": (4, 0.0),
    }.items():
        for case in range(n_cases):
            rate = rng.uniform(0.1, 0.6)
            for condition, p in (("none", rate), ("preloaded", min(1.0, rate + effect))):
                for trial in range(2 + case % 3):
                    rows.append(
                        {
                            "case_id": f"case-{case:02d}",
                            "condition": condition,
                            "trial": trial,
                            "passed": bool(rng.random() < p),
                            "provider": provider,
                        }
                    )
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_compare_and_lift_print_the_same_interval_per_provider(
    tmp_path: Path, runs_dir: Path
) -> None:
    board = _unbalanced_board(tmp_path / "board.csv")
    imported = evalkit_cli("import", board, "--format", "csv", "--run-id", "board",
                           "--runs-dir", runs_dir)
    assert imported.returncode == 0, imported.stderr
    compare_args = ["compare", "board", "--conditions", "none,preloaded", "--runs-dir", runs_dir]
    compared = json.loads(evalkit_cli(*compare_args, "--json").stdout)["by_provider"]
    lifted = json.loads(evalkit_cli("lift", "board", "--runs-dir", runs_dir, "--json").stdout)
    oracle = {m["provider"]: m for m in lifted["metrics"] if m["metric"] == "oracle_lift"}
    assert sorted(compared) == sorted(oracle) == ["model-a", "model-b", "model-c"]
    assert {p: compared[p]["n_cases"] for p in compared} == {
        "model-a": 6, "model-b": 9, "model-c": 4
    }
    compare_text = evalkit_cli(*compare_args).stdout
    lift_text = evalkit_cli("lift", "board", "--runs-dir", runs_dir).stdout
    for provider, part in compared.items():
        mine = oracle[provider]
        assert (mine["estimate"], mine["ci_low"], mine["ci_high"]) == (
            part["delta"], part["ci_low"], part["ci_high"]
        )
        printed = f"[{100 * part['ci_low']:+.1f} pp, {100 * part['ci_high']:+.1f} pp]"
        assert printed in compare_text and printed in lift_text, (provider, printed)
    # model-b's interval is a bootstrap's, not only the t or Wilson bound: the seed is shared
    assert compared["model-b"]["ci_high"] - compared["model-b"]["ci_low"] > 0.0
