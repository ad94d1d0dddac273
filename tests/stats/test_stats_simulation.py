"""Seeded simulation checks under Miller's model (Beta(2, 2) case difficulty, K = 3 trials).

Each simulated experiment draws case pass rates ``p ~ Beta(2, 2)`` and, for the candidate,
``q = p + effect * (1 - p) / (1 - 0.5)`` (the same share of every case's headroom, so the
superpopulation effect is exactly ``effect``); each arm runs K Bernoulli trials per case. The
comparisons go through the public ``paired_compare`` on tidy frames with 2,000 bootstrap
replicates (instead of the default 10,000) to bound the run time. Seeds are fixed: the
outcomes are deterministic, and the thresholds leave about 1.5-2.5 binomial standard errors
of margin around the calibrated values (A/A false alarms ~5 %, power ~80 %, coverage ~95 %).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.stats import (
    CompareOptions,
    PowerDesign,
    paired_compare,
    required_cases,
    simulate_power,
    verdict,
)
from evalkit.stats._bootstrap import paired_delta_interval
from evalkit.stats._simulate import model_components, simulate_arms

SEED = 2024
RESAMPLES = 2_000


def _frames(base: np.ndarray, cand: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    cases, trials = base.shape
    ids = np.repeat([f"case-{i:03d}" for i in range(cases)], trials)
    t = np.tile(np.arange(trials), cases)
    a = pd.DataFrame({"case_id": ids, "condition": "x", "trial": t, "passed": base.ravel() > 0})
    b = pd.DataFrame({"case_id": ids, "condition": "x", "trial": t, "passed": cand.ravel() > 0})
    return a, b


def _experiments(
    n: int, cases: int, trials: int, effect: float, seed: int = SEED
) -> list[tuple[np.ndarray, np.ndarray, int]]:
    out = []
    for child in np.random.SeedSequence(seed).spawn(n):
        data_seed, boot_seed = child.generate_state(2)
        base, cand = simulate_arms(
            np.random.default_rng(int(data_seed)), cases, trials, effect, 0.5, 4.0
        )
        out.append((base, cand, int(boot_seed)))
    return out


@pytest.mark.timeout(60)
def test_a_aa_comparisons_are_inconclusive() -> None:
    """(a) 200 A/A pairs of 30 cases: overall verdict other than inconclusive <= 7 %."""
    alarms = 0
    named = 0
    for base, cand, boot_seed in _experiments(200, 30, 3, 0.0):
        result = paired_compare(*_frames(base, cand),
                                options=CompareOptions(n_resamples=RESAMPLES, seed=boot_seed))
        alarms += result.verdict != "inconclusive"
        named += bool(result.regressed_cases or result.improved_cases)
    assert alarms / 200 <= 0.07
    assert named == 0


@pytest.mark.timeout(60)
def test_b_power_function_prescription_detects_the_effect() -> None:
    """(b) +15 pp at the number of cases prescribed for 80 % power: detected >= 75 %.

    1,000 simulations instead of the issue's 200: at exactly 80 % power a 200-run estimate has
    a binomial SD of 2.8 pp and falls below 75 % about 4 % of the time; with this file's fixed
    seed the first 200 runs give 74.5 % (1,000 give ~79 %). The check is also two-sided: the
    simulated power must agree with the analytic t power within 3 binomial standard errors.
    """
    plan = required_cases(0.15, n_trials=3,
                          design=PowerDesign.from_components(model_components(0.5, 0.15)))
    assert plan.n_cases == 51  # the normal formula (Miller eq. 10 as printed) says 49
    n_sims = 1000
    simulated = simulate_power(
        plan.n_cases, 3, 0.15, n_sims=n_sims, seed=SEED, n_resamples=RESAMPLES
    )
    assert simulated.power >= 0.75
    se = (plan.power * (1 - plan.power) / n_sims) ** 0.5
    assert abs(simulated.power - plan.power) <= 3 * se
    # simulate_power runs exactly paired_compare's overall procedure: same verdicts.
    for base, cand, boot_seed in _experiments(5, plan.n_cases, 3, 0.15):
        via_frames = paired_compare(*_frames(base, cand),
                                    options=CompareOptions(n_resamples=RESAMPLES, seed=boot_seed))
        direct = paired_delta_interval(
            base, cand, n_resamples=RESAMPLES, confidence=0.95, seed=boot_seed
        )
        assert via_frames.delta == direct
        assert via_frames.verdict == verdict(direct)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_c_paired_delta_interval_covers_the_superpopulation_effect() -> None:
    """(c) the 95 % paired-delta CI covers the true +15 pp effect in >= 92 % of 300 runs."""
    covered = 0
    for base, cand, boot_seed in _experiments(300, 30, 3, 0.15, seed=SEED + 1):
        result = paired_compare(*_frames(base, cand),
                                options=CompareOptions(n_resamples=RESAMPLES, seed=boot_seed))
        covered += result.delta.ci_low <= 0.15 <= result.delta.ci_high
    assert covered / 300 >= 0.92


@pytest.mark.timeout(60)
def test_interval_is_neither_liberal_nor_conservative() -> None:
    """3,000 A/A experiments on the array core: false alarms and coverage near nominal.

    Two-sided bounds (about 2.5 standard errors) so that an over-conservative interval, such
    as the two-stage bootstrap with trial resampling, fails too.
    """
    alarms = covered = 0
    for base, cand, boot_seed in _experiments(3000, 30, 3, 0.0, seed=SEED + 2):
        delta = paired_delta_interval(
            base, cand, n_resamples=RESAMPLES, confidence=0.95, seed=boot_seed
        )
        alarms += verdict(delta) != "inconclusive"
        covered += delta.ci_low <= 0.0 <= delta.ci_high
    assert 0.035 <= alarms / 3000 <= 0.065
    assert 0.935 <= covered / 3000 <= 0.965


@pytest.mark.timeout(60)
def test_two_stage_trial_resampling_is_conservative() -> None:
    """Why it is not the default: resampling trials again inflates the interval."""
    covered = 0
    for base, cand, boot_seed in _experiments(300, 30, 3, 0.15, seed=SEED + 3):
        delta = paired_delta_interval(
            base, cand, n_resamples=RESAMPLES, confidence=0.95, seed=boot_seed, resample_trials=True
        )
        covered += delta.ci_low <= 0.15 <= delta.ci_high
    assert covered / 300 >= 0.97


@pytest.mark.timeout(60)
def test_per_case_verdicts_name_no_case_in_aa() -> None:
    """Holm + Fisher: with 10 trials per arm (cases can be named), A/A names a case <= 5 %."""
    experiments_naming = 0
    for base, cand, boot_seed in _experiments(200, 30, 10, 0.0, seed=SEED + 4):
        result = paired_compare(*_frames(base, cand),
                                options=CompareOptions(n_resamples=200, seed=boot_seed))
        experiments_naming += bool(result.regressed_cases or result.improved_cases)
    assert experiments_naming / 200 <= 0.05


def test_per_case_verdicts_name_a_broken_case() -> None:
    """A case that goes from 10/10 to 0/10 among 30 noisy cases is named regressed."""
    base, cand, _ = _experiments(1, 30, 10, 0.0, seed=SEED + 5)[0]
    base[7] = 1.0
    cand[7] = 0.0
    result = paired_compare(*_frames(base, cand), options=CompareOptions(n_resamples=500))
    assert "case-007" in result.regressed_cases
    assert result.cases.loc[7, "p_adjusted"] < 0.05
