"""Adaptive trials: more trials for cases that flip, fewer for cases that never do.

Design (two stages per case, ``K = total_trials`` per condition). Stage 1 runs
``first_trials = m1`` trials per condition of every case. Stage 2 runs the other
``m2 = K - m1`` trials with probability 1 when the stage-1 outcomes differ anywhere (a trial
disagrees with another, within or between the conditions), and with the design probability
``pi`` when they are all equal (every stage-1 trial passed in both conditions, or every one
failed). Whether such a case is drawn is a fixed function of ``(seed, case_id)``
(:func:`stage_two_draw`), so a resumed run draws the same, and it is independent of the
outcomes.

Estimator. A plain mean of all trials of a case is biased under this design (whether stage 2
runs depends on the stage-1 outcomes). Each condition's rate of a case is estimated by the
inverse-probability-weighted control variate

    p_hat = Ybar1 + (I / pi_case) * w * (Ybar2 - Ybar1),   w = m2 / (m1 + m2),

with ``Ybar1``/``Ybar2`` the stage-1/stage-2 means, ``I`` whether stage 2 ran and ``pi_case``
its probability (1 or ``pi``). Given stage 1, ``E[I / pi_case] = 1`` and ``Ybar2`` is
independent of stage 1 with mean ``p``, so ``E[p_hat | stage 1] = (1 - w) Ybar1 + w p`` and
``E[p_hat] = p``: unbiased for every case, hence for the mean over cases. With ``pi = 1`` it
is the pooled mean of the ``K`` trials; a case that truly never flips gets ``Ybar2 = Ybar1``
and so exactly ``Ybar1``, whether drawn or not (no variance is added).

The per-case difference ``d = p_hat_candidate - p_hat_baseline`` lies in ``[-B, B]`` with
``B = max(1, w / pi)`` (an undrawn-probability case has equal stage-1 means, so only the
stage-2 term is left, at most ``w / pi`` in size). The confidence sequence is run on
``d / B`` in [-1, 1], and its bounds scaled back; the threshold stays in pass-rate units.
Cases stay equally weighted: the target is the mean over cases.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit._settings import SEED
from evalkit.errors import InputError
from evalkit.stats._frame import as_frame, check_positive_int
from evalkit.stats._power import _number


@dataclass(frozen=True)
class AdaptiveTrials:
    """A two-stage trial design: ``first_trials`` for every case, up to ``total_trials``.

    Attributes:
        total_trials: Trials per condition of a case that runs stage 2 (``K``).
        first_trials: Trials per condition every case runs in stage 1 (``m1``, < ``K``).
        probability: Stage-2 probability ``pi`` of a case whose stage-1 outcomes are all
            equal (cases with any disagreement always run stage 2); None: ``w``, the smallest
            probability that keeps the per-case differences in [-1, 1] (``B = 1``).
        seed: Seed of the per-case stage-2 draw.
    """

    total_trials: int = 3
    first_trials: int = 1
    probability: float | None = None
    seed: int = SEED.default

    def __post_init__(self) -> None:
        """Check the design (an :class:`~evalkit.errors.InputError` names the bad field)."""
        total = check_positive_int(self.total_trials, "total_trials")
        first = check_positive_int(self.first_trials, "first_trials")
        if first >= total:
            raise InputError(
                f"adaptive trials: `first_trials` ({first}) must be below `total_trials` "
                f"({total}); raise the number of trials or lower first_trials"
            )
        if self.probability is not None:
            _number(self.probability, "probability", 0.0, 1.0, open_low=True)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise InputError(f"adaptive trials: `seed` must be an integer, not {self.seed!r}")

    @property
    def stage_two_weight(self) -> float:
        """``w = m2 / (m1 + m2)``: the share of a case's trials that stage 2 runs."""
        return (self.total_trials - self.first_trials) / self.total_trials

    @property
    def stage_two_probability(self) -> float:
        """``pi``: the given probability, or ``w`` when none was given."""
        return self.stage_two_weight if self.probability is None else float(self.probability)

    @property
    def bound(self) -> float:
        """``B = max(1, w / pi)``: the per-case differences lie in ``[-B, B]``."""
        return max(1.0, self.stage_two_weight / self.stage_two_probability)

    def to_dict(self) -> dict[str, Any]:
        """The design as plain JSON values (for the run manifest), ``probability`` resolved."""
        return {**asdict(self), "probability": self.stage_two_probability}


def stage_two_uniform(seed: int, case_id: str) -> float:
    """A uniform number in [0, 1) fixed by ``(seed, case_id)`` (BLAKE2b of both).

    Args:
        seed: The design's seed.
        case_id: The case.

    Returns:
        The case's uniform draw; the case runs stage 2 when it is below the probability.

    Examples:
        >>> stage_two_uniform(0, "a") == stage_two_uniform(0, "a")
        True
    """
    digest = hashlib.blake2b(f"{seed}\x00{case_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def stage_two_draw(design: AdaptiveTrials, case_id: str) -> bool:
    """Whether a case whose stage-1 outcomes are all equal runs stage 2."""
    return stage_two_uniform(design.seed, case_id) < design.stage_two_probability


def stage_two_decisions(
    data: pd.DataFrame, design: AdaptiveTrials, conditions: tuple[str, str]
) -> pd.DataFrame:
    """Which cases run stage 2, for every case whose stage 1 is complete in both conditions.

    Args:
        data: Tidy frame with ``case_id, condition, trial, passed`` (errors count as fails).
        design: The design.
        conditions: ``(baseline, candidate)``.

    Returns:
        One row per such case (sorted): ``case_id, probability`` (1 when the stage-1 outcomes
        differ anywhere, else the design's), ``drawn`` (the case's draw) and ``stage_two``.
    """
    frame = as_frame(data, required=("case_id", "condition", "trial"))
    first = frame[frame["condition"].isin(conditions) & (frame["trial"] < design.first_trials)]
    counts = first.groupby(["case_id", "condition"]).size().unstack("condition")
    complete = counts.reindex(columns=list(conditions)).fillna(0).ge(design.first_trials)
    cases = sorted(complete.index[complete.all(axis=1)])
    bits = first[first["case_id"].isin(cases)].groupby("case_id")["passed"]
    mixed = (bits.any() != bits.all()).reindex(cases).to_numpy(dtype=bool)
    drawn = np.array([stage_two_draw(design, case) for case in cases], dtype=bool)
    return pd.DataFrame(
        {
            "case_id": cases,
            "probability": np.where(mixed, 1.0, design.stage_two_probability),
            "drawn": drawn,
            "stage_two": mixed | drawn,
        }
    )


def corrected_difference(
    stage_one: tuple[np.ndarray, np.ndarray],
    stage_two: tuple[np.ndarray, np.ndarray],
    ran_stage_two: np.ndarray,
    design: AdaptiveTrials,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The corrected per-case rates and differences (vectorised over cases).

    Args:
        stage_one: ``(baseline, candidate)`` stage-1 means per case.
        stage_two: ``(baseline, candidate)`` stage-2 means per case (any value where stage 2
            did not run).
        ran_stage_two: Whether stage 2 ran, per case.
        design: The design.

    Returns:
        ``(baseline_rate, candidate_rate, probability)`` of each case: the corrected rate of
        each condition and the case's stage-2 probability.
    """
    base1, cand1 = (np.asarray(a, dtype=float) for a in stage_one)
    base2, cand2 = (np.asarray(a, dtype=float) for a in stage_two)
    all_equal = (base1 == cand1) & ((base1 == 0.0) | (base1 == 1.0))
    probability = np.where(all_equal, design.stage_two_probability, 1.0)
    ran = np.asarray(ran_stage_two, dtype=bool)
    factor = np.where(ran, design.stage_two_weight / probability, 0.0)
    base = base1 + factor * (np.where(ran, base2, base1) - base1)
    cand = cand1 + factor * (np.where(ran, cand2, cand1) - cand1)
    return base, cand, probability


def adaptive_case_estimates(
    data: pd.DataFrame, design: AdaptiveTrials, conditions: tuple[str, str]
) -> pd.DataFrame:
    """Corrected per-case rates of two conditions from a tidy frame of a two-stage run.

    Trials ``0..first_trials-1`` are stage 1, the rest stage 2. A case that did not need
    stage 2 and was not drawn contributes its stage-1 means (its stage-2 trials, if any were
    run anyway, are ignored: using them would bias the estimate).

    Args:
        data: Tidy frame with ``case_id, condition, trial, passed``.
        design: The design the run followed.
        conditions: ``(baseline, candidate)`` condition names.

    Returns:
        One row per case (sorted by ``case_id``): ``case_id, baseline, candidate, difference,
        probability, stage_two, trials``; ``difference`` lies in
        ``[-design.bound, design.bound]``.

    Raises:
        InputError: A missing condition, a case without stage-1 trials in a condition, or a
            case that needs stage 2 without stage-2 trials.
    """
    frame = as_frame(data, required=("case_id", "condition", "trial"))
    frame = frame[frame["condition"].isin(conditions)]
    frame = frame.assign(stage=np.where(frame["trial"] < design.first_trials, 1, 2))
    cases = sorted(frame["case_id"].unique())
    means = frame.groupby(["condition", "stage", "case_id"])["passed"].mean().unstack("case_id")
    decided = stage_two_decisions(frame, design, conditions).set_index("case_id")
    ran = decided["stage_two"].reindex(cases, fill_value=False).to_numpy(dtype=bool)
    rates: dict[tuple[str, int], np.ndarray] = {}
    for name in conditions:
        for stage in (1, 2):
            key = (name, stage)
            found = means.loc[key] if key in means.index else pd.Series(dtype=float)
            rates[key] = pd.Series(found).reindex(cases).to_numpy(dtype=float)
        _require(cases, np.ones(len(cases), dtype=bool), rates[(name, 1)], name, "no stage-1 "
                 f"trial (trial < {design.first_trials})", "run stage 1 of every case")
    for name in conditions:
        _require(cases, ran, rates[(name, 2)], name, f"stage 2 to run but no trial >= "
                 f"{design.first_trials}", "run its stage 2 (evalkit run ... --resume)")
    base, cand, probability = corrected_difference(
        (rates[(conditions[0], 1)], rates[(conditions[1], 1)]),
        (np.nan_to_num(rates[(conditions[0], 2)]), np.nan_to_num(rates[(conditions[1], 2)])),
        ran,
        design,
    )
    return pd.DataFrame(
        {
            "case_id": cases,
            "baseline": base,
            "candidate": cand,
            "difference": cand - base,
            "probability": probability,
            "stage_two": ran,
            "trials": np.where(ran, design.total_trials, design.first_trials),
        }
    )


def _require(
    cases: list[str], needed: np.ndarray, rates: np.ndarray, condition: str, lack: str, fix: str
) -> None:
    """Raise an InputError naming the first case that needs trials it does not have."""
    for case, need, rate in zip(cases, needed, rates, strict=True):
        if need and np.isnan(rate):
            raise InputError(
                f"adaptive trials: case {case!r} has {lack} in condition {condition!r}; {fix}"
            )
