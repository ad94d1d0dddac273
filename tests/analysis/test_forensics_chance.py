"""explain's chance check: is a case's pass/fail split more than its flip rate makes likely?

The probability is checked against scipy.stats.binom and by simulation; the split is the
one ``evalkit.explain`` reports, on a real run (replayed answers) and on frames.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

import evalkit
from evalkit.analysis._forensics_chance import (
    DEFAULT_FLIP_RATE,
    against_usual,
    split_probability,
)
from tests.analysis.planted_forensics import plant_runs


def _reference(n: int, failing: int, flip_rate: float) -> float:
    """P(split at least this even) from scipy: X ~ Binomial(n, p), p from 2p(1-p) = f."""
    p = (1 - math.sqrt(1 - 2 * flip_rate)) / 2
    smaller = min(failing, n - failing)
    return float(sum(binom.pmf(x, n, p) for x in range(smaller, n - smaller + 1)))


def _rows(case: str, passes: list[bool], condition: str = "none") -> pd.DataFrame:
    return pd.DataFrame({
        "item_key": [f"prompt:{case}:{condition}:p:{t}" for t in range(len(passes))],
        "case_id": case, "condition": condition, "provider": "p",
        "trial": range(len(passes)), "passed": passes, "status": "ok",
    })


@pytest.mark.slow
def test_a_1_of_3_split_is_what_chance_alone_gives_at_the_default_flip_rate(
    tmp_path: Path,
) -> None:
    runs = plant_runs(tmp_path, "planted")  # wait-file: trial 1 of 3 fails, a one-case run
    (cell,) = evalkit.explain("planted-wait-file", "wait-file", runs_dir=runs).cells
    chance = cell.chance
    assert (chance.n_trials, chance.n_failing) == (3, 1)
    assert (chance.flip_rate, chance.flip_rate_source) == (DEFAULT_FLIP_RATE, "default")
    expected = _reference(3, 1, 0.16)
    assert chance.probability == pytest.approx(expected, rel=1e-12)
    assert chance.probability == pytest.approx(1.5 * 0.16)  # 3p(1-p) with 2p(1-p) = 0.16
    assert chance.by_chance
    assert chance.sentence == (
        "a 1-of-3 split (1 of 3 trials fail): chance alone gives a split this even with "
        "probability 0.24 at the default flip rate of 16% (this run has no trial pairs on other "
        "cases to measure one); it may be chance"
    )


def test_the_flip_rate_comes_from_the_runs_other_cases() -> None:
    # other cases: 4 trials each; b has 1 of 4 failing (3 flips of 6 pairs), c none (0 of 6)
    rows = pd.concat([
        _rows("a", [True, False, True]),
        _rows("b", [True, True, False, True]),
        _rows("c", [True] * 4),
    ], ignore_index=True)
    (cell,) = evalkit.explain(rows, "a").cells
    assert cell.chance.flip_rate_source == "run"
    assert cell.chance.n_pairs == 12 and cell.chance.flip_rate == pytest.approx(3 / 12)
    assert cell.chance.probability == pytest.approx(_reference(3, 1, 0.25), rel=1e-12)
    assert "the flip rate of the other cases of this run, 25% of 12 trial pairs" in (
        cell.chance.sentence
    )


def test_0_of_10_against_10_of_10_is_not_chance() -> None:
    baseline = _rows("a", [True] * 10)
    candidate = _rows("a", [False] * 10)
    (cell,) = evalkit.explain(candidate, "a", baseline=baseline).cells
    chance = cell.chance
    assert (chance.n_trials, chance.n_failing) == (20, 10)
    assert chance.probability == pytest.approx(_reference(20, 10, 0.16), rel=1e-9)
    assert chance.probability < 1e-5 and not chance.by_chance
    assert chance.sentence.startswith(
        "a 10-of-20 split (10 of 20 trials fail): more than chance makes likely; chance alone "
        "gives a split this even with probability "
    )
    assert cell.to_dict()["chance"]["by_chance"] is False


def test_a_cell_without_a_split_leaves_chance_nothing_to_explain() -> None:
    (cell,) = evalkit.explain(_rows("a", [True] * 3), "a").cells
    assert math.isnan(cell.chance.probability) and not cell.chance.by_chance
    assert cell.chance.sentence.startswith("no split: every trial passes")
    assert cell.to_dict()["chance"]["probability"] is None


@pytest.mark.parametrize(("n", "failing", "flip_rate"), [(3, 1, 0.16), (5, 2, 0.3), (8, 1, 0.05)])
def test_the_probability_matches_scipy_and_a_simulation(
    n: int, failing: int, flip_rate: float
) -> None:
    assert split_probability(n, failing, flip_rate) == pytest.approx(
        _reference(n, failing, flip_rate), rel=1e-12
    )
    # a case that flips at this rate: its trials disagree pairwise at the rate ...
    p = against_usual(flip_rate)
    assert 2 * p * (1 - p) == pytest.approx(flip_rate)
    rng = np.random.default_rng(7)
    draws = 200_000
    usual_pass = rng.random(draws) < 0.5  # a usually passing or usually failing case
    against = rng.random((draws, n)) < p
    passes = np.where(usual_pass[:, None], ~against, against).sum(axis=1)
    smaller = np.minimum(passes, n - passes)
    # ... and gives a split at least this even as often as the probability says
    simulated = float((smaller >= min(failing, n - failing)).mean())
    se = math.sqrt(simulated * (1 - simulated) / draws)
    assert abs(simulated - split_probability(n, failing, flip_rate)) < 4 * se + 1e-4
