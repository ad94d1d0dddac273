"""Sequential ablations: each component stops at its own verdict, anytime-valid over the family.

Each component's per-case contributions (full minus ablated pass rate, in the drawing order of
cases) feed the betting confidence sequence of :func:`evalkit.stats.confidence_sequence` at
confidence ``1 - alpha / m`` (a Bonferroni split of ``alpha`` over the ``m`` components). Each
sequence covers its component's true contribution at every look at once with probability
``1 - alpha / m``, so the chance that any component of the family is ever given a false
verdict, however often one looks and whenever each one stops, is at most ``alpha``.

After every look a component is settled when its sequence excludes 0 (*necessary* above,
*harmful* below) or lies inside ``(-threshold, threshold)`` (*no effect beyond the threshold*:
no number of further cases can show a contribution of the threshold's size); settled
components get no more trials, the undecided ones get the next cases.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from evalkit._settings import SEED
from evalkit.stats import ConfidenceSequence, RunningConfidenceSequence, confidence_sequence

#: Verdict of a component whose sequence lies inside (-threshold, threshold).
NEGLIGIBLE = "negligible"


class SequentialLook(NamedTuple):
    """A component's state after one look.

    Attributes:
        component: Component id.
        n_cases: Cases of its comparison so far.
        estimate: Mean contribution (full - ablated), clipped into the sequence.
        ci_low: Lower bound of the confidence sequence.
        ci_high: Upper bound.
        verdict: ``necessary``, ``harmful``, ``negligible`` or ``undecided``.
    """

    component: str
    n_cases: int
    estimate: float
    ci_low: float
    ci_high: float
    verdict: str


def per_case_contributions(
    frame: pd.DataFrame, full: str, ablated: str, order: list[str]
) -> np.ndarray:
    """Per-case ``full - ablated`` pass rates (trials averaged), in ``order``, paired cases only.

    Skipped rows are left out; errors and timeouts count as failures.
    """
    rows = frame[frame["condition"].isin((full, ablated))]
    if "status" in rows.columns:
        rows = rows[rows["status"] != "skipped"]
    rates = rows.groupby(["case_id", "condition"])["passed"].mean().unstack("condition")
    if full not in rates.columns or ablated not in rates.columns:
        return np.zeros(0)
    rates = rates.dropna(subset=[full, ablated])
    ordered = [c for c in order if c in rates.index]
    diff = rates.loc[ordered, full] - rates.loc[ordered, ablated]
    return diff.to_numpy(dtype=float)


def sequential_look(
    component: str, contributions: np.ndarray, *, alpha: float, m: int, threshold: float
) -> SequentialLook:
    """The component's verdict at this look (``undecided`` until its sequence settles it).

    Args:
        component: Component id.
        contributions: Its per-case contributions so far, in drawing order.
        alpha: Family-wise error over the components.
        m: Number of components in the family.
        threshold: Smallest contribution worth keeping a component for.

    Examples:
        >>> sequential_look("x", np.full(80, 0.5), alpha=0.05, m=3, threshold=0.05).verdict
        'necessary'
        >>> sequential_look("x", np.zeros(3), alpha=0.05, m=3, threshold=0.05).verdict
        'undecided'
    """
    if contributions.size == 0:
        return SequentialLook(component, 0, float("nan"), -1.0, 1.0, "undecided")
    return _look(component, confidence_sequence(contributions, confidence=1 - alpha / m), threshold)


def _look(component: str, cs: ConfidenceSequence, threshold: float) -> SequentialLook:
    """The component's verdict from its sequence's latest bounds."""
    low, high, est = float(cs.ci_low[-1]), float(cs.ci_high[-1]), float(cs.estimate[-1])
    if low > 0:
        verdict = "necessary"
    elif high < 0:
        verdict = "harmful"
    elif -threshold < low and high < threshold:
        verdict = NEGLIGIBLE
    else:
        verdict = "undecided"
    return SequentialLook(component, int(cs.n[-1]), est, low, high, verdict)


def simulate_allocation(
    effects: dict[str, float],
    *,
    n_cases: int,
    trials: int,
    batch: int,
    alpha: float,
    threshold: float,
    base_rate: float = 0.6,
    spread: float = 1.0,
    seed: int = SEED.default,
) -> tuple[list[SequentialLook], int]:
    """Simulate one sequential ablation study on synthetic pass bits (for tests and benchmarks).

    Each case has a latent logit ``N(logit(base_rate), spread)``; the full skill passes with
    that probability, each ablated copy with the probability shifted by ``-effect`` on the
    pass-rate scale (clipped into [0.01, 0.99]). Cases arrive in batches; after each batch the
    undecided components are looked at, and settled ones stop.

    Args:
        effects: Component id to its true contribution on the pass-rate scale.
        n_cases: Cases available at most.
        trials: Trials per case and condition.
        batch: Cases per round.
        alpha: Family-wise error.
        threshold: Negligibility threshold.
        base_rate: Mean pass rate of the full skill.
        spread: Standard deviation of case difficulty on the logit scale.
        seed: Seed.

    Returns:
        The final look of every component and the work items the study ran (the full skill
        runs on every case drawn while some component is undecided).
    """
    rng = np.random.default_rng(seed)
    logits = rng.normal(np.log(base_rate / (1 - base_rate)), spread, n_cases)
    p_full = 1 / (1 + np.exp(-logits))
    full = rng.binomial(trials, p_full) / trials
    m = len(effects)
    looks = {c: SequentialLook(c, 0, float("nan"), -1.0, 1.0, "undecided") for c in effects}
    # each look pays for its new cases only (the same bounds as sequential_look's)
    sequences = {c: RunningConfidenceSequence(confidence=1 - alpha / m) for c in effects}
    items, done = 0, 0
    undecided = list(effects)
    while done < n_cases and undecided:
        stop = min(done + batch, n_cases)
        items += (stop - done) * trials * (1 + len(undecided))
        p_new, full_new = p_full[done:stop], full[done:stop]
        for component in undecided:
            p_abl = np.clip(p_new - effects[component], 0.01, 0.99)
            ablated = rng.binomial(trials, p_abl) / trials
            cs = sequences[component].extend(full_new - ablated)
            looks[component] = _look(component, cs, threshold)
        undecided = [c for c, look in looks.items() if look.verdict == "undecided"]
        done = stop
    return list(looks.values()), items
