"""Neyman allocation of paired trials: the increments stay unbiased and the verdicts valid.

The error rates are checked by simulation on a suite with a share of cases deterministic in
both arms, under the default allocation and under an adversarial rule that chases the cases
whose pairs favoured the candidate. A rate is accepted when a one-sided exact binomial test
(scipy) does not put it above its nominal value at the 1 % level.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalkit.errors import InputError
from evalkit.stats import (
    NeymanAllocation,
    allocation_probabilities,
    draw_round,
    simulate_allocation,
    weighted_increments,
)

ALPHA = 0.05


def _suite(n_cases: int = 60, deterministic: float = 0.5, seed: int = 3) -> np.ndarray:
    """Baseline pass rates: a share of cases always pass or always fail, the rest uniform."""
    rng = np.random.default_rng(seed)
    rates = rng.uniform(0.05, 0.95, n_cases)
    fixed = rng.random(n_cases) < deterministic
    rates[fixed] = (rng.random(int(fixed.sum())) < 0.5).astype(float)
    return rates


def _with_effect(rates: np.ndarray, effect: float) -> np.ndarray:
    """Candidate rates: each varying case gains the same share of its headroom."""
    varying = (rates > 0) & (rates < 1)
    share = effect * len(rates) / float(np.sum(1 - rates[varying]))
    out = rates.copy()
    out[varying] += share * (1 - rates[varying])
    return out


def _balanced_null(rates: np.ndarray, share: float = 0.5) -> np.ndarray:
    """Candidate rates with suite mean difference 0 that move cases both ways.

    Alternate varying cases gain ``share`` of their headroom; the others lose what balances
    it, so the null holds for the suite's mean while single cases differ.
    """
    varying = np.flatnonzero((rates > 0) & (rates < 1))
    up, down = varying[::2], varying[1::2]
    out = rates.copy()
    out[up] += share * (1 - rates[up])
    gained = float(np.sum(out[up] - rates[up]))
    out[down] -= gained / float(np.sum(rates[down])) * rates[down]
    assert np.all((out >= 0) & (out <= 1)) and abs(np.mean(out - rates)) < 1e-12
    return out


def _not_above(count: int, n: int, rate: float) -> bool:
    """Whether ``count / n`` is consistent with a true rate of at most ``rate`` (1 % level)."""
    return bool(stats.binomtest(count, n, rate, alternative="greater").pvalue > 0.01)


def test_probabilities_keep_the_floor_and_shift_to_cases_that_flip() -> None:
    design = NeymanAllocation(floor=0.4, prior_pairs=0.3)
    pairs = np.array([0, 3, 6, 6])
    differed = np.array([0, 0, 0, 3])
    q = allocation_probabilities(pairs, differed, design)
    assert q.sum() == pytest.approx(1.0)
    assert q.min() >= 0.4 / 4 - 1e-12
    # the case that flipped gets the most; an unseen case more than those that never differed;
    # more agreeing pairs, less probability
    assert q[3] > q[0] > q[1] > q[2]


def test_a_round_is_reproducible_from_its_seed_and_index() -> None:
    design = NeymanAllocation(seed=7)
    q = np.full(5, 0.2)
    assert draw_round(q, design, 2).tolist() == draw_round(q, design, 2).tolist()
    assert draw_round(q, design, 2).tolist() != draw_round(q, design, 3).tolist()


def test_bad_designs_name_the_field() -> None:
    with pytest.raises(InputError, match="`floor`"):
        NeymanAllocation(floor=0.0)
    with pytest.raises(InputError, match="`prior_pairs`"):
        NeymanAllocation(prior_pairs=-1)
    with pytest.raises(InputError, match="round_pairs"):
        NeymanAllocation(round_pairs=0)


@pytest.mark.slow
def test_weighted_increments_are_unbiased_where_the_plain_mean_is_not() -> None:
    """Allocation shifts pairs to the cases that flip; only the weighted mean stays at delta."""
    base = _suite()
    cand = _with_effect(base, 0.10)
    design = NeymanAllocation(floor=0.3, round_pairs=20)
    truth = float(np.mean(cand - base))
    settings = dict(max_pairs=200, n_sims=150, stop=False, seed=1)
    weighted = simulate_allocation(base, cand, design, **settings)  # type: ignore[arg-type]
    plain = simulate_allocation(base, cand, design, weighted=False, **settings)  # type: ignore[arg-type]

    def error(means: np.ndarray) -> float:
        return float(means.std(ddof=1) / np.sqrt(len(means)))

    assert abs(weighted.means.mean() - truth) < 4 * error(weighted.means)
    # the plain mean of the pairs over-weights the flipping cases, which carry the effect
    assert plain.means.mean() - truth > 4 * error(plain.means)


def test_weighted_increments_match_their_definition() -> None:
    x = weighted_increments(np.array([1.0, 0.0, -1.0]), np.array([0.5, 0.1, 0.2]), 10)
    np.testing.assert_allclose(x, [0.2, 0.0, -0.5])


@pytest.mark.slow
@pytest.mark.parametrize("null", ["identical", "balanced"])
def test_aa_false_verdicts_at_most_alpha_under_allocation(null: str) -> None:
    """No difference on a suite half deterministic: false verdicts over 10 looks.

    ``identical``: both arms have every case's rate; ``balanced``: cases move both ways and
    the suite's mean difference is 0 (the allocation draws more of the cases that move).
    """
    base = _suite()
    cand = base if null == "identical" else _balanced_null(base)
    sims = 250
    result = simulate_allocation(base, cand, NeymanAllocation(round_pairs=20), max_pairs=200,
                                 n_sims=sims, seed=11)  # fmt: skip
    false = sum(reason in ("improved", "regressed") for reason in result.reasons)
    # nominal 0.05; at 250 runs, 22 or more false verdicts (8.8 %) reject a rate of 0.05 at 1 %
    assert _not_above(false, sims, ALPHA), false / sims
    assert _not_above(int(np.sum(~result.covered)), sims, ALPHA)


@pytest.mark.slow
def test_adversarial_predictable_rule_keeps_aa_valid_only_when_weighted() -> None:
    """A rule chasing the cases whose pairs favoured the candidate, under no mean difference.

    The suite's cases move both ways (mean 0). Weighted, the rule cannot push the verdict
    (the increments keep mean 0 given the past); the plain mean under the same rule is
    pushed towards *improved*, because the chased cases are those that truly gained.
    """
    base = _suite()
    cand = _balanced_null(base)
    floor = 0.3

    def chase(pairs: np.ndarray, differed: np.ndarray, net: np.ndarray) -> np.ndarray:
        favour = np.exp(3.0 * np.clip(net, 0, None))
        return floor / len(pairs) + (1 - floor) * favour / favour.sum()

    design = NeymanAllocation(floor=floor, round_pairs=20)
    sims = 150
    kwargs = dict(max_pairs=200, n_sims=sims, seed=5, rule=chase, threshold=0.02)
    weighted = simulate_allocation(base, cand, design, **kwargs)  # type: ignore[arg-type]
    plain = simulate_allocation(base, cand, design, weighted=False, **kwargs)  # type: ignore[arg-type]
    false_weighted = sum(r in ("improved", "regressed") for r in weighted.reasons)
    false_plain = sum(r == "improved" for r in plain.reasons)
    assert _not_above(false_weighted, sims, ALPHA), false_weighted / sims
    assert false_plain / sims > 3 * ALPHA, false_plain / sims


@pytest.mark.slow
def test_intervals_cover_under_the_effect_at_every_look() -> None:
    base = _suite(deterministic=0.4, seed=8)
    cand = _with_effect(base, 0.15)
    sims = 250
    result = simulate_allocation(base, cand, NeymanAllocation(round_pairs=20), max_pairs=160,
                                 n_sims=sims, seed=2, stop=False)  # fmt: skip
    misses = int(np.sum(~result.covered))
    assert _not_above(misses, sims, ALPHA), misses / sims


def test_a_rule_below_the_floor_is_refused() -> None:
    base = _suite(n_cases=10)

    def greedy(pairs: np.ndarray, differed: np.ndarray, net: np.ndarray) -> np.ndarray:
        q = np.zeros(len(pairs))
        q[0] = 1.0
        return q

    with pytest.raises(InputError, match="floor / N"):
        simulate_allocation(base, base, NeymanAllocation(), max_pairs=20, n_sims=2, rule=greedy)
