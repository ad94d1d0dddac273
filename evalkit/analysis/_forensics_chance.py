"""Whether chance alone explains a case's pass/fail split (the forensics' chance check).

An agent is not deterministic: two trials of the same case disagree at some rate, the flip
rate (the share of disagreeing trial pairs, :func:`evalkit.stats.flip_rate_within`). A case
whose trials pass with probability ``q`` gives disagreeing pairs at ``f = 2 q (1 - q)``, so a
flip rate ``f`` makes each trial come out against the case's usual result with probability
``p = (1 - sqrt(1 - 2 f)) / 2``. Chance alone then gives ``n`` trials a split at least as even
as ``m`` of ``n`` (``m`` the smaller side) with probability
``P(m <= X <= n - m)``, ``X ~ Binomial(n, p)``.

The flip rate a case is held to is the one its run measured on its other cases (the case's own
trials are what is being judged, so they cannot also set the yardstick); a run with no trial
pairs on other cases takes :data:`DEFAULT_FLIP_RATE`, and the check says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evalkit._settings import ALPHA
from evalkit.stats import flip_rate_within

#: The flip rate of a typical agent suite: two identical runs disagree on about 16 % of cases.
DEFAULT_FLIP_RATE = 0.16


@dataclass(frozen=True)
class ChanceCheck:
    """Whether a cell's pass/fail split is more than its flip rate makes likely.

    Attributes:
        n_trials: Trials of the cell (both runs' between two runs).
        n_failing: Failing trials among them.
        flip_rate: The flip rate the split is held to.
        flip_rate_source: Where it comes from (``"run"`` or ``"default"``).
        n_pairs: Trial pairs the run's flip rate was measured on (0 for the default).
        probability: Chance alone gives a split at least this even with this probability
            (NaN without a split).
        by_chance: Whether chance alone explains the split (``probability >= alpha``).
        sentence: The check in words.
    """

    n_trials: int
    n_failing: int
    flip_rate: float
    flip_rate_source: str
    n_pairs: int
    probability: float
    by_chance: bool
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        """The check as JSON values (NaN as None)."""
        probability = None if math.isnan(self.probability) else self.probability
        return {
            "n_trials": self.n_trials,
            "n_failing": self.n_failing,
            "flip_rate": self.flip_rate,
            "flip_rate_source": self.flip_rate_source,
            "n_pairs": self.n_pairs,
            "probability": probability,
            "by_chance": self.by_chance,
            "sentence": self.sentence,
        }


def against_usual(flip_rate: float) -> float:
    """Chance of one trial coming out against the case's usual result, at a flip rate.

    Args:
        flip_rate: The share of disagreeing trial pairs (above 0.5 is taken as 0.5).

    Returns:
        ``p`` with ``2 p (1 - p) = flip_rate``, ``p <= 0.5``.

    Examples:
        >>> round(against_usual(0.16), 4)
        0.0877
    """
    rate = min(max(float(flip_rate), 0.0), 0.5)
    return (1.0 - math.sqrt(1.0 - 2.0 * rate)) / 2.0


def split_probability(n_trials: int, n_failing: int, flip_rate: float) -> float:
    """Chance alone gives ``n_trials`` a split at least as even as ``n_failing`` of them.

    Args:
        n_trials: Trials.
        n_failing: Failing trials.
        flip_rate: The flip rate.

    Returns:
        ``P(m <= X <= n - m)`` for ``X ~ Binomial(n, p)``, ``m`` the smaller side, ``p`` from
        :func:`against_usual`; NaN when every trial agrees.

    Examples:
        >>> round(split_probability(3, 1, 0.16), 3)
        0.24
    """
    from scipy.stats import binom  # scipy.stats takes a while to import: only when needed

    smaller = min(n_failing, n_trials - n_failing)
    if smaller <= 0:
        return float("nan")
    p = against_usual(flip_rate)
    return float(binom.cdf(n_trials - smaller, n_trials, p) - binom.cdf(smaller - 1, n_trials, p))


def run_flip_rate(rows: list[pd.DataFrame], case: str) -> tuple[float, int]:
    """The flip rate of each run's other cases, pairs pooled over the runs.

    Args:
        rows: Each run's rows (the trials pair within one run only).
        case: The case being judged (left out).

    Returns:
        ``(flip rate, trial pairs)``; ``(nan, 0)`` when no other case has two trials.
    """
    flips = pairs = 0
    for frame in rows:
        if "trial" not in frame or "passed" not in frame:
            continue
        others = frame[frame["case_id"].astype(str) != case]
        if "status" in others:
            others = others[others["status"].astype(str) != "skipped"]
        if others.empty:
            continue
        others = others.assign(passed=others["passed"].astype("boolean").fillna(False))
        result = flip_rate_within(others)
        flips += result.n_flips
        pairs += result.n_pairs
    return (flips / pairs, pairs) if pairs else (float("nan"), 0)


def chance_check(
    trials: pd.DataFrame, flip_rate: float, n_pairs: int, *, two_runs: bool = False
) -> ChanceCheck:
    """Whether a cell's split is more than the flip rate makes likely.

    Args:
        trials: The cell's trials (``passed``).
        flip_rate: The run's flip rate on its other cases, or NaN (the default is taken).
        n_pairs: Trial pairs it was measured on.
        two_runs: Whether the trials (and the flip rate) come from two runs.

    Returns:
        The :class:`ChanceCheck`.
    """
    passed = trials["passed"].astype("boolean").fillna(False).astype(bool)
    n, failing = len(passed), int((~passed).sum())
    measured = n_pairs > 0 and not math.isnan(flip_rate)
    rate = flip_rate if measured else DEFAULT_FLIP_RATE
    runs = "the two runs" if two_runs else "this run"
    where = (
        f"the flip rate of the other cases of {runs}, {rate:.0%} of {n_pairs:,} trial pairs"
        if measured else
        f"the default flip rate of {rate:.0%} ({runs} "
        f"{'have' if two_runs else 'has'} no trial pairs on other cases to measure one)"
    )
    probability = split_probability(n, failing, rate)
    split = f"a {min(failing, n - failing)}-of-{n} split ({failing} of {n} trials fail)"
    if math.isnan(probability):
        sentence = (f"no split: {'every' if n != 1 else 'the'} trial "
                    f"{'fails' if failing else 'passes'}, so there is nothing for chance to "
                    "explain")
        by_chance = False
    elif probability >= ALPHA.default:
        sentence = (f"{split}: chance alone gives a split this even with probability "
                    f"{probability:.2g} at {where}; it may be chance")
        by_chance = True
    else:
        sentence = (f"{split}: more than chance makes likely; chance alone gives a split this "
                    f"even with probability {probability:.2g} at {where}")
        by_chance = False
    return ChanceCheck(
        n_trials=n,
        n_failing=failing,
        flip_rate=float(rate),
        flip_rate_source="run" if measured else "default",
        n_pairs=int(n_pairs) if measured else 0,
        probability=probability,
        by_chance=by_chance,
        sentence=sentence,
    )
