"""The next step plans what can settle: naming a case through the screen, cases over trials.

- A naming plan is made at the per-row level at which the case screen's correction names a
  row whatever the other rows show (checked against statsmodels' ``multipletests``).
- Where the spread between cases keeps the interval wide, no trials option is printed and
  the step says why in words, with the cases that would do and the confirm follow-up.
- Where every pair tied on a provider deterministic given its seed, it says what a fresh
  ``--seed`` does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from evalkit.analysis import NextStep, next_step
from evalkit.analysis._step_cases import naming_level
from evalkit.stats import CompareOptions, fisher_power, paired_compare


def _frames(base: np.ndarray, cand: np.ndarray, **extra: object) -> tuple[pd.DataFrame, ...]:
    cases, trials = base.shape
    keys = {"case_id": np.repeat([f"c{c:03d}" for c in range(cases)], trials),
            "condition": "x", "trial": np.tile(np.arange(trials), cases), **extra}
    return (pd.DataFrame({**keys, "passed": base.ravel() > 0.5}),
            pd.DataFrame({**keys, "passed": cand.ravel() > 0.5}))


@pytest.mark.parametrize(
    "correction", ["fdr_bh", "fdr_by", pytest.param("holm", marks=pytest.mark.slow)]
)  # statsmodels' holm takes about 0.1 s a call
def test_a_row_at_the_naming_level_is_named_whatever_the_other_rows_show(correction: str) -> None:
    rng = np.random.default_rng(3)
    for rows in (2, 12, 40, 52):
        level = naming_level(0.05, rows, correction)
        for _ in range(40 if correction != "holm" else 10):
            pvalues = rng.random(rows) ** rng.uniform(0.2, 3.0)  # any mix of signals and nulls
            pvalues[0] = level * rng.uniform(0.5, 1.0)
            assert multipletests(pvalues, alpha=0.05, method=correction)[0][0]
        # and the level is the largest that always works: just above it, all-null others
        pvalues = np.ones(rows)
        pvalues[0] = level * 1.01
        if correction != "fdr_by":  # BY at one signal is alpha / (m c_m), the same bound
            assert not multipletests(pvalues, alpha=0.05, method=correction)[0][0]


def _split_spread() -> tuple[pd.DataFrame, pd.DataFrame]:
    """12 cases at 6 trials: half gain 67 pp, half lose 67 pp (one case a little less)."""
    base, cand = np.zeros((12, 6)), np.zeros((12, 6))
    for case in range(12):
        gains = case % 2 == 1
        base[case, : 2 if gains else 6] = 1
        cand[case, : 6 if gains else 2] = 1
    base[0, 5] = 0
    return _frames(base, cand)


def test_where_the_spread_between_cases_dominates_the_step_plans_cases_and_names_cases() -> None:
    before, after = _split_spread()
    result = paired_compare(before, after, options=CompareOptions(n_resamples=1000, seed=0))
    step = next_step(result, before, after)
    assert step is not None and step.goal == "equivalence"
    assert step.trials is None  # no trials option: none would do at 12 cases
    text = step.text()
    assert "trials at these 12 cases" not in text
    assert "more trials cannot narrow the interval enough at these 12 cases" in text
    assert f"more cases do ({step.equivalence_cases} at 6 trials)" in text
    # the cases that moved get their own plan through the screen, and confirm is offered
    assert step.name_cases and step.name_trials is not None and step.name_rows == 12
    assert step.name_level == pytest.approx(0.05 / 12)
    assert "evalkit confirm reruns only these cases" in text
    assert step.name_items == 2 * step.name_trials * 12  # both sides, one condition, 12 cases
    again = NextStep(**step.to_dict())
    assert again == step and again.text() == text  # the JSON round trip prints the same


def test_the_naming_plan_power_is_the_exact_power_at_the_screens_level() -> None:
    before, after = _split_spread()
    result = paired_compare(before, after, options=CompareOptions(n_resamples=1000, seed=0))
    step = next_step(result, before, after)
    assert step is not None and step.name_trials is not None and step.name_power is not None
    assert step.name_power >= 0.8
    # c001 went 2/6 -> 6/6: planned from (2.5/7, 6.5/7) moved one standard error to zero
    base = 2.5 / 7
    cand = 6.5 / 7
    se = np.sqrt(base * (1 - base) / 7 + cand * (1 - cand) / 7)
    at_level = fisher_power(base, cand - se, step.name_trials, step.name_level, 0.05)
    assert at_level >= step.name_power - 1e-9
    assert fisher_power(base, cand - se, step.name_trials, 0.05, 0.05) > at_level  # uncorrected


def test_a_tied_comparison_on_a_deterministic_provider_says_what_a_fresh_seed_does() -> None:
    rng = np.random.default_rng(5)
    base = (rng.random((10, 2)) < 0.6).astype(float)
    seeded = next_step(paired_compare(*_frames(base, base.copy(), provider_deterministic=True),
                                      options=CompareOptions(n_resamples=500)),
                       *_frames(base, base.copy(), provider_deterministic=True))
    assert seeded is not None and seeded.tied_pairs == 20
    assert "give it a fresh --seed to draw every trial anew" in seeded.text()
    assert "a real agent samples afresh on every call" in seeded.text()
    plain = next_step(paired_compare(*_frames(base, base.copy()),
                                     options=CompareOptions(n_resamples=500)),
                      *_frames(base, base.copy()))
    assert plain is not None and "--seed" not in plain.text()


def test_a_change_near_the_threshold_without_spread_blames_the_trials_not_the_spread() -> None:
    """At no measured spread, more trials do narrow the interval: only too many are needed."""
    rng = np.random.default_rng(11)
    base = (rng.random((26, 3)) < 0.5).astype(float)
    cand = base.copy()
    for case in (0, 1, 2):  # three cases lose one pass: -3.8 pp on average
        passing = np.flatnonzero(cand[case] > 0.5)
        if len(passing):
            cand[case, passing[0]] = 0.0
        else:
            base[case, 0], cand[case, 0] = 1.0, 0.0
    before, after = _frames(base, cand)
    result = paired_compare(before, after, options=CompareOptions(n_resamples=1000, seed=0))
    step = next_step(result, before, after)
    assert step is not None and step.goal == "equivalence" and step.trials is None
    text = step.text()
    assert "more trials cannot narrow the interval" not in text
    assert "more than 200 trials per case would be needed at these 26 cases" in text
