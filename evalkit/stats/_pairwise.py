"""Statistics of blind pairwise judgements: win probability, sign test, verdict, position bias.

Input is one row per judged pair (a case and a trial index, baseline against candidate), with
the candidate's ``outcome`` from the pair's two orders: 1 a win, 0 a loss, 0.5 a tie (a pair
whose judgement flipped with the order is a tie). Statistics:

- per case, the candidate's **win share** over its trials (ties as half);
- overall, the **probability that the candidate wins on a random case**: the mean of the win
  shares, with the case-cluster bootstrap interval of :func:`evalkit.stats.cluster_bootstrap`
  (cases resampled, so a case with more trials does not weigh more);
- an **exact sign test** over cases (scipy ``binomtest``): cases whose win share is above 0.5
  against cases below it, cases at exactly 0.5 left out;
- the **verdict** against 0.5: *improved* when the interval's lower bound is above 0.5, the
  estimate is at least ``0.5 + threshold`` and the sign test rejects at ``alpha``; *regressed*
  when the upper bound is below 0.5 and the sign test rejects; *inconclusive* otherwise. The
  sign test is exact whenever the per-case win shares are symmetric about 0.5 (which an A/A
  comparison guarantees), so requiring it keeps A/A false verdicts at most ``alpha`` even
  with few cases, where a percentile bootstrap alone can be too narrow;
- **per-case lists** only through exact binomial tests on a case's decisive trials (wins
  against losses), Holm-corrected across cases (the ``holm`` of the per-case verdicts, equal to
  statsmodels ``multipletests(method="holm")``); a case needs
  at least 6 decisive trials before any test can reach p < 0.05;
- the judge's **position bias**: the share of decisive single-order judgements won by the
  answer shown first, with its case-cluster bootstrap interval (0.5 is a fair judge), and the
  **position consistency**: the share of pairs whose two orders agree.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evalkit._settings import ALPHA, CONFIDENCE, N_RESAMPLES_QUICK, SEED
from evalkit.errors import InputError
from evalkit.stats._bootstrap import cluster_bootstrap
from evalkit.stats._frame import json_ready, records
from evalkit.stats._interval import Interval, json_float
from evalkit.stats._types import Verdict
from evalkit.stats._verdicts import holm

#: Default practical threshold on the win probability (0.55 is needed for "improved").
DEFAULT_PAIRWISE_THRESHOLD = 0.05
#: Columns a pairwise frame must have.
PAIR_COLUMNS = ("case_id", "outcome")


@dataclass(frozen=True)
class SignTest:
    """The exact sign test over cases.

    Attributes:
        positive: Cases where the candidate's win share is above 0.5.
        negative: Cases where it is below 0.5.
        zero: Cases at exactly 0.5 (left out of the test).
        p_value: Two-sided exact binomial p-value (1.0 with no decisive case).
    """

    positive: int
    negative: int
    zero: int
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict."""
        return dict(json_ready(self.__dict__))


@dataclass(frozen=True)
class PairwiseStats:
    """The statistics of one baseline-candidate pairwise comparison.

    Attributes:
        verdict: ``improved``, ``regressed`` or ``inconclusive``.
        win_probability: P(candidate wins on a random case), ties as half, with its interval.
        sign_test: The exact sign test over cases.
        position_bias: Share of decisive single-order judgements won by the first-shown answer.
        position_consistency: Share of pairs whose two orders agree (NaN without pairs).
        n_cases: Cases compared.
        n_pairs: Pairs judged.
        wins: Pairs the candidate won (both orders agree).
        losses: Pairs the candidate lost.
        ties: Pairs judged a tie, flipped pairs included.
        flipped: Pairs whose two orders disagree (counted as ties).
        threshold: Practical threshold on the win probability above 0.5.
        alpha: Level of the sign test and of the per-case tests.
        cases: One row per case: ``case_id, n_trials, wins, losses, ties, win_share,
            ci_low, ci_high, p_value, p_adjusted, verdict``.
        improved_cases: Cases named improved by the Holm-corrected exact tests.
        regressed_cases: Cases named regressed by them.
        notes: What limits the numbers (e.g. too few trials to name a case).
    """

    verdict: Verdict
    win_probability: Interval
    sign_test: SignTest
    position_bias: Interval
    position_consistency: float
    n_cases: int
    n_pairs: int
    wins: int
    losses: int
    ties: int
    flipped: int
    threshold: float
    alpha: float
    cases: pd.DataFrame
    improved_cases: list[str]
    regressed_cases: list[str]
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``stats`` part of ``compare --pairwise --json``)."""
        return {
            "verdict": self.verdict,
            "win_probability": self.win_probability.to_dict(),
            "sign_test": self.sign_test.to_dict(),
            "position_bias": self.position_bias.to_dict(),
            "position_consistency": json_float(self.position_consistency),
            "n_cases": self.n_cases,
            "n_pairs": self.n_pairs,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
            "flipped": self.flipped,
            "threshold": self.threshold,
            "alpha": self.alpha,
            "cases": records(self.cases),
            "improved_cases": list(self.improved_cases),
            "regressed_cases": list(self.regressed_cases),
            "notes": list(self.notes),
        }


def _check_frame(pairs: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(pairs, pd.DataFrame):
        raise InputError(f"`pairs` must be a DataFrame, but {type(pairs).__name__} was passed.")
    missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise InputError(
            f"the pairwise frame lacks column(s) {missing}: it needs one row per judged pair "
            "with 'case_id' and 'outcome' (1 candidate wins, 0.5 tie, 0 baseline wins)"
        )
    outcome = pd.to_numeric(pairs["outcome"], errors="coerce")
    if outcome.isna().any() or not outcome.isin([0.0, 0.5, 1.0]).all():
        raise InputError("column 'outcome' must hold only 0, 0.5 or 1 (loss, tie, win)")
    out = pairs.copy()
    out["outcome"] = outcome.astype(float)
    out["case_id"] = out["case_id"].astype(str)
    return out


@functools.lru_cache(maxsize=4096)
def _binomial_test_pvalue(successes: int, trials: int) -> float:
    """Two-sided exact p-value of ``successes`` in ``trials`` against 1/2 (scipy ``binomtest``).

    Cached: the sign test and the per-case tests of a simulation ask again and again for the
    same few small counts, and each ``binomtest`` costs about half a millisecond.
    """
    return float(stats.binomtest(successes, trials, 0.5).pvalue)


def sign_test(case_shares: np.ndarray) -> SignTest:
    """Exact two-sided sign test of per-case win shares against 0.5 (scipy ``binomtest``).

    Examples:
        >>> sign_test(np.array([1.0, 1.0, 0.75, 0.5, 0.0])).positive
        3
    """
    positive = int(np.sum(case_shares > 0.5))
    negative = int(np.sum(case_shares < 0.5))
    zero = int(case_shares.size - positive - negative)
    n = positive + negative
    p_value = _binomial_test_pvalue(positive, n) if n else 1.0
    return SignTest(positive, negative, zero, p_value)


def case_table(pairs: pd.DataFrame, alpha: float = ALPHA.default) -> pd.DataFrame:
    """Per-case win shares with Holm-corrected exact binomial tests on decisive trials.

    Args:
        pairs: One row per judged pair (``case_id``, ``outcome``).
        alpha: Family-wise level of the per-case verdicts.

    Returns:
        ``case_id, n_trials, wins, losses, ties, win_share, ci_low, ci_high, p_value,
        p_adjusted, verdict``; ``ci_low``/``ci_high`` are the Wilson interval of the win share
        (ties as half a win; descriptive, for the forest plot: the verdicts use the exact
        tests).
    """
    return _case_table(_check_frame(pairs), alpha)


def _case_table(checked: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """:func:`case_table` of a frame :func:`_check_frame` has checked already.

    The counts come from one sorted factorisation of the case ids (the order of a sorted
    ``groupby``); the win share is the sum of a case's outcomes over its trials, exact in
    floating point since every outcome is 0, 0.5 or 1.
    """
    case_codes, case_ids = pd.factorize(checked["case_id"], sort=True)
    n_cases = len(case_ids)
    outcome = checked["outcome"].to_numpy(dtype=float)
    n_trials = np.bincount(case_codes, minlength=n_cases).astype("int64")
    wins, losses, ties = (
        np.bincount(case_codes[outcome == value], minlength=n_cases).astype("int64")
        for value in (1.0, 0.0, 0.5)
    )
    win_share = np.bincount(case_codes, weights=outcome, minlength=n_cases) / n_trials
    p_values = [
        _binomial_test_pvalue(int(w), int(w + lo)) if w + lo else 1.0
        for w, lo in zip(wins, losses, strict=True)
    ]
    low, high = proportion_confint(
        win_share * n_trials.astype(float), n_trials.astype(float), alpha=alpha,
        method="wilson",
    )
    adjusted = holm(np.asarray(p_values, dtype=float))  # = statsmodels multipletests holm
    reject = adjusted < alpha
    verdicts = [
        ("improved" if w > lo else "regressed") if r else "inconclusive"
        for r, w, lo in zip(reject, wins, losses, strict=True)
    ]
    return pd.DataFrame({
        "case_id": case_ids,
        "n_trials": n_trials,
        "wins": wins,
        "losses": losses,
        "ties": ties,
        "win_share": win_share,
        "ci_low": np.asarray(low),
        "ci_high": np.asarray(high),
        "p_value": p_values,
        "p_adjusted": adjusted,
        "verdict": verdicts,
    })


def position_bias(
    first_wins: np.ndarray,
    decisive: np.ndarray,
    units: np.ndarray,
    *,
    confidence: float = CONFIDENCE.default,
    n_resamples: int = N_RESAMPLES_QUICK.default,
    seed: int | None = SEED.default,
) -> Interval:
    """Share of decisive single-order judgements won by the first-shown answer.

    Args:
        first_wins: Per pair, how many of its decisive orders the first-shown answer won.
        decisive: Per pair, how many of its two orders named a winner (0, 1 or 2).
        units: Per pair, its case (the bootstrap resamples cases).
        confidence: Confidence level.
        n_resamples: Bootstrap replicates.
        seed: Bootstrap seed.

    Returns:
        The case-weighted share with its case-cluster bootstrap interval (NaN without any
        decisive judgement; NaN bounds with fewer than two cases).
    """
    wins = np.asarray(first_wins).astype(int)
    judged = np.asarray(decisive).astype(int)
    # per pair, its first-shown wins as 1.0s and then its other decisive orders as 0.0s
    counts = np.maximum(np.column_stack([wins, judged - wins]), 0).ravel()
    values = np.repeat(np.tile([1.0, 0.0], len(wins)), counts)
    labels = np.repeat(np.asarray(units, dtype=object), np.maximum(judged, 0))
    if not values.size:
        nan = float("nan")
        return Interval(nan, nan, nan, confidence, "cluster-bootstrap")
    return cluster_bootstrap(
        values, labels, n_resamples=n_resamples, confidence=confidence, seed=seed,
    )


def pairwise_verdict(
    win: Interval, sign: SignTest, threshold: float, alpha: float
) -> Verdict:
    """The verdict of a win probability (see the module docstring).

    Examples:
        >>> from evalkit.stats import Interval
        >>> pairwise_verdict(Interval(0.7, 0.6, 0.8, 0.95, "b"), SignTest(9, 1, 0, 0.02),
        ...                  0.05, 0.05)
        'improved'
    """
    if not (math.isfinite(win.ci_low) and math.isfinite(win.ci_high)):
        return "inconclusive"
    if sign.p_value >= alpha:
        return "inconclusive"
    if win.ci_low > 0.5 and win.estimate - 0.5 >= threshold - 1e-12:
        return "improved"
    if win.ci_high < 0.5:
        return "regressed"
    return "inconclusive"


def pairwise_stats(
    pairs: pd.DataFrame,
    *,
    threshold: float = DEFAULT_PAIRWISE_THRESHOLD,
    alpha: float = ALPHA.default,
    confidence: float = CONFIDENCE.default,
    n_resamples: int = N_RESAMPLES_QUICK.default,
    seed: int | None = SEED.default,
) -> PairwiseStats:
    """Statistics of a baseline-candidate pairwise comparison (see the module docstring).

    Args:
        pairs: One row per judged pair: ``case_id``, ``outcome`` (1 / 0.5 / 0 for the
            candidate); optional ``flipped`` (bool), ``first_wins`` and ``decisive`` (ints,
            the position counts of the pair's two orders).
        threshold: Practical threshold: "improved" needs a win probability of at least
            ``0.5 + threshold``.
        alpha: Level of the sign test and of the per-case tests.
        confidence: Level of the intervals.
        n_resamples: Bootstrap replicates.
        seed: Bootstrap seed.

    Returns:
        :class:`PairwiseStats`.

    Raises:
        InputError: Missing columns, outcomes other than 0 / 0.5 / 1, bad arguments.
    """
    confidence = CONFIDENCE.check(confidence)
    alpha = ALPHA.check(alpha)
    if not (math.isfinite(threshold) and threshold >= 0):
        raise InputError(f"`threshold` must be a number >= 0, but {threshold!r} was passed.")
    df = _check_frame(pairs)
    notes: list[str] = []
    if df.empty:
        nan = float("nan")
        empty = Interval(nan, nan, nan, confidence, "cluster-bootstrap")
        return PairwiseStats(
            "inconclusive", empty, SignTest(0, 0, 0, 1.0), empty, nan, 0, 0, 0, 0, 0, 0,
            threshold, alpha, _case_table(df, alpha), [], [], ["no judged pair"],
        )
    win = cluster_bootstrap(
        df, units="case_id", value="outcome",
        n_resamples=n_resamples, confidence=confidence, seed=seed,
    )
    table = _case_table(df, alpha)
    sign = sign_test(table["win_share"].to_numpy(dtype=float))
    outcome = df["outcome"].to_numpy(dtype=float)
    flipped = (
        df["flipped"].astype(bool).to_numpy(dtype=bool)
        if "flipped" in df
        else np.zeros(len(df), dtype=bool)
    )
    if {"first_wins", "decisive"} <= set(df.columns):
        bias = position_bias(
            df["first_wins"].to_numpy(dtype=int), df["decisive"].to_numpy(dtype=int),
            df["case_id"].to_numpy(dtype=object),
            confidence=confidence, n_resamples=n_resamples, seed=seed,
        )
    else:
        nan = float("nan")
        bias = Interval(nan, nan, nan, confidence, "cluster-bootstrap")
    n_cases = len(table)
    case_ids = table["case_id"].to_numpy()
    verdicts = table["verdict"].to_numpy()
    if n_cases < 2:
        notes.append("fewer than two cases: no interval, no verdict")
    if int(table["n_trials"].to_numpy().max()) < 6:
        notes.append(
            "no case can be named improved or regressed: an exact test on fewer than 6 "
            "decisive trials cannot reach p < 0.05 (run more trials to name cases)"
        )
    if math.isfinite(bias.ci_low) and (bias.ci_low > 0.5 or bias.ci_high < 0.5):
        side = "first" if bias.estimate > 0.5 else "second"
        notes.append(
            f"the judge favours the {side}-shown answer ({bias.estimate:.0%} of decisive "
            "judgements go to the first): each pair is judged in both orders and flips count "
            "as ties, but calibrate or replace this judge"
        )
    return PairwiseStats(
        verdict=pairwise_verdict(win, sign, threshold, alpha),
        win_probability=win,
        sign_test=sign,
        position_bias=bias,
        position_consistency=float(1.0 - flipped.mean()),
        n_cases=n_cases,
        n_pairs=len(df),
        wins=int((outcome == 1.0).sum()),
        losses=int((outcome == 0.0).sum()),
        ties=int((outcome == 0.5).sum()),
        flipped=int(flipped.sum()),
        threshold=float(threshold),
        alpha=float(alpha),
        cases=table,
        improved_cases=case_ids[verdicts == "improved"].tolist(),
        regressed_cases=case_ids[verdicts == "regressed"].tolist(),
        notes=notes,
    )
