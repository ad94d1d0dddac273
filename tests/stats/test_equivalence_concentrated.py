"""No practical difference under a concentrated effect, by simulation through ``compare``.

2 of 40 cases drop 40 pp (from 0.8 to 0.4), the other 38 do not move (their rates drawn once
per draw in 0.6-0.95, as in ``test_case_screen_simulation``); one provider, 200 seeded draws at
each of 3, 10 and 20 trials a side. Each draw is compared end to end by
:func:`evalkit.stats.compare_tables`, and the claim counted is its
``equivalence["equivalent"]`` ("no practical difference (within ±5 pp)"): the average's interval
inside ±5 pp, no case named (Benjamini-Hochberg at 5 %) and the case x condition interaction
test not rejecting.

Measured (seeds as below): claimed in 0 of 200 draws at 3 trials, 1 of 200 (0.5 %) at 10 and
7 of 200 (3.5 %) at 20. Pooled over 18 providers x 3 trials (the leaderboard shape) it was 1 of
200 in a separate run of the same law.

Where the other cases sit near the ceiling (rates 0.9-1.0) the average is narrow enough to lie
inside ±5 pp far more often, and at 10 trials neither the screen nor the interaction test finds
two cases of 40: the claim is made in 28 of 200 draws (14.0 %), a known limitation of a claim
about the average (measured with ``_claimed(10, seed=1010, low=0.9, high=1.0)``; it is said in
docs/statistics.md). A further guard that withholds the claim when any
case's own interval lies wholly beyond ±5 pp cut that only from 16.5 % to 13.5 % (another
seeded run of the same law) and, with no correction across cases, withholds the claim from
every A/A comparison at the cases an equivalence plan asks for (0 of 300 in
``test_equivalence``), so it is not part of the rule. Instead the claim says when it speaks for
the average only: when some case's own interval still reaches past the threshold (the last two
tests).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalkit.stats import CompareOptions, compare_tables

CASES = 40
PLANTED = [0, 1]
DROP = 0.40
DRAWS = 200
LEVEL = 0.05


def _margin(level: float, draws: int) -> float:
    """Three Monte-Carlo standard errors of a share near ``level`` over ``draws``."""
    return 3 * math.sqrt(level * (1 - level) / draws)


def _tidy(case_ids: list[str], values: np.ndarray) -> pd.DataFrame:
    cases, trials = values.shape
    return pd.DataFrame({
        "case_id": np.repeat(case_ids, trials),
        "condition": "none",
        "trial": np.tile(np.arange(trials), cases),
        "status": "ok",
        "passed": values.reshape(-1).astype(bool),
    })


def _claimed(trials: int, seed: int, low: float = 0.6, high: float = 0.95) -> float:
    """Share of draws in which compare claims no practical difference."""
    rng = np.random.default_rng(seed)
    rates = rng.uniform(low, high, (DRAWS, CASES))
    rates[:, PLANTED] = 0.8
    moved = rates.copy()
    moved[:, PLANTED] -= DROP
    baseline = rng.random((DRAWS, CASES, trials)) < rates[..., None]
    candidate = rng.random((DRAWS, CASES, trials)) < moved[..., None]
    case_ids = [f"c{i:02d}" for i in range(CASES)]
    claims = 0
    for base, cand in zip(baseline, candidate, strict=True):
        result = compare_tables(_tidy(case_ids, base), _tidy(case_ids, cand),
                                options=CompareOptions(n_resamples=500, seed=0))
        claims += bool(result.equivalence["equivalent"])
    return claims / DRAWS


@pytest.mark.slow
@pytest.mark.parametrize("trials", [10, 20])  # at 3 trials the interval is too wide: 0 of 200
def test_no_practical_difference_is_rarely_claimed_when_two_cases_drop(trials: int) -> None:
    share = _claimed(trials, seed=1000 + trials)
    print(f"equivalence claimed at {trials} trials: {share:.3f}")
    assert share <= LEVEL + _margin(LEVEL, DRAWS)


def _side(rates: np.ndarray, trials: int, rng: np.random.Generator) -> pd.DataFrame:
    passed = rng.random((len(rates), trials)) < rates[:, None]
    return _tidy([f"c{i:03d}" for i in range(len(rates))], passed)


def test_the_claim_says_it_speaks_for_the_average_when_cases_are_not_settled() -> None:
    rng = np.random.default_rng(0)
    rates = rng.uniform(0.9, 1.0, 300)
    result = compare_tables(_side(rates, 3, rng), _side(rates, 3, rng),
                            options=CompareOptions(n_resamples=1000))
    said = result.equivalence
    assert said["equivalent"], said  # 300 cases: the average's interval is inside +-5 pp
    # at 3 trials a side no case's own interval is inside +-5 pp
    rows = result.case_rows
    assert ((rows["ci_low"] <= -0.05) | (rows["ci_high"] >= 0.05)).all()
    assert said["note"].startswith("no practical difference (within ±5 pp)")
    assert "this speaks for the average only: the own intervals of 300 of 300 cases reach " \
           "past ±5 pp" in said["note"]
    assert "would not matter" not in said["note"]


def test_settled_cases_leave_the_claim_whole() -> None:
    ones = np.ones(12)  # every trial passes on both sides: 400 tied pairs a case
    result = compare_tables(_side(ones, 400, np.random.default_rng(1)),
                            _side(ones, 400, np.random.default_rng(2)),
                            options=CompareOptions(n_resamples=1000))
    rows = result.case_rows
    assert ((rows["ci_low"] > -0.05) & (rows["ci_high"] < 0.05)).all(), rows
    assert result.equivalence["equivalent"]
    assert "speaks for the average" not in result.equivalence["note"]
