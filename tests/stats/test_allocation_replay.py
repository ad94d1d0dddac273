"""A run under allocation replayed from its tidy results: rounds, increments, next trials."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.errors import InputError
from evalkit.stats import NeymanAllocation, allocation_plan

CONDITIONS = ("none", "skill")


def _run(
    rates: dict[str, tuple[float, float]], design: NeymanAllocation, rounds: int, seed: int
) -> pd.DataFrame:
    """A run of ``rounds`` rounds, each planned from the results so far, as the loop would.

    Each round runs the trials its plan asks for that are not there yet (seeded outcomes).
    """
    rng = np.random.default_rng(seed)
    rows: list[tuple[str, str, int, bool]] = []
    have = dict.fromkeys(rates, 0)
    frame = pd.DataFrame(columns=["case_id", "condition", "trial", "passed"])
    for _ in range(rounds):
        plan = allocation_plan(frame, list(rates), CONDITIONS, design)
        for case, wanted in plan.trials.items():
            for trial in range(have[case], wanted):
                for condition, rate in zip(CONDITIONS, rates[case], strict=True):
                    rows.append((case, condition, trial, bool(rng.random() < rate)))
            have[case] = max(have[case], wanted)
        frame = pd.DataFrame(rows, columns=["case_id", "condition", "trial", "passed"])
    return frame


def _rates(n_cases: int = 30, seed: int = 0) -> dict[str, tuple[float, float]]:
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(n_cases):
        if i % 2:  # half the suite never changes outcome
            fixed = float(i % 4 == 1)
            out[f"c{i:02d}"] = (fixed, fixed)
        else:
            p = float(rng.uniform(0.1, 0.7))
            out[f"c{i:02d}"] = (p, p + 0.3)
    return out


def test_a_run_replays_its_rounds_from_its_results_alone() -> None:
    rates = _rates()
    design = NeymanAllocation(round_pairs=10, seed=4)
    frame = _run(rates, design, rounds=6, seed=1)
    plan = allocation_plan(frame, list(rates), CONDITIONS, design)
    assert plan.rounds == 6
    assert plan.looks == [10, 20, 30, 40, 50, 60]
    assert len(plan.increments) == 60
    assert np.all(np.abs(plan.increments) <= design.bound + 1e-12)
    # the same results in any row order replay the same draws
    shuffled = frame.sample(frac=1.0, random_state=3)
    again = allocation_plan(shuffled, list(reversed(rates)), CONDITIONS, design)
    np.testing.assert_array_equal(again.increments, plan.increments)
    assert again.trials == plan.trials
    # the next round asks for more trials of some cases, and never fewer than there are
    per_case = frame[frame["condition"] == "none"].groupby("case_id").size()
    assert sum(plan.trials.values()) == int(per_case.sum()) + 10
    assert all(plan.trials.get(case, 0) >= int(k) for case, k in per_case.items())


def test_a_missing_trial_ends_the_replay_at_its_round() -> None:
    rates = _rates()
    design = NeymanAllocation(round_pairs=10, seed=4)
    frame = _run(rates, design, rounds=3, seed=1)
    last = frame[frame["condition"] == "skill"].sort_values("trial").iloc[-1]
    cut = frame.drop(index=last.name)
    plan = allocation_plan(cut, list(rates), CONDITIONS, design)
    assert plan.rounds < 3
    assert plan.trials[str(last["case_id"])] > int(last["trial"])


def test_max_rounds_stops_the_replay() -> None:
    rates = _rates()
    design = NeymanAllocation(round_pairs=10)
    frame = _run(rates, design, rounds=4, seed=2)
    assert allocation_plan(frame, list(rates), CONDITIONS, design, max_rounds=2).rounds == 2


def test_results_of_another_case_are_refused() -> None:
    frame = pd.DataFrame({"case_id": ["zz"], "condition": ["none"], "trial": [0],
                          "passed": [True]})  # fmt: skip
    with pytest.raises(InputError, match="'zz'"):
        allocation_plan(frame, ["a", "b"], CONDITIONS, NeymanAllocation())


@pytest.mark.slow
def test_replayed_increments_are_unbiased_for_the_suite_mean() -> None:
    """Runs grown round by round from their own plans: the weighted mean centres on delta."""
    rates = _rates()
    truth = float(np.mean([c - b for b, c in rates.values()]))
    design = NeymanAllocation(floor=0.4, round_pairs=10)
    means = []
    for seed in range(25):
        frame = _run(rates, design, rounds=3, seed=seed)
        plan = allocation_plan(frame, list(rates), CONDITIONS, design)
        means.append(plan.increments.mean())
    error = np.std(means, ddof=1) / np.sqrt(len(means))
    assert abs(np.mean(means) - truth) < 4 * error
