"""A confirmation's trials spread by Neyman allocation over its pilot: still valid, and cheaper.

The shares come from the screen's pairs only, the confirmation's trials are fresh: each case's
Fisher test on them alone keeps its level and its Newcombe interval its coverage. Checked by
simulating pilots and confirmations at known rates through the real planning and verdict code
(``plan_confirmation``, ``allocate_confirmation``, ``confirm_case_table``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from evalkit.analysis import FlaggedCase, allocate_confirmation, pilot_pairs, plan_confirmation
from evalkit.analysis._confirm_allocation import apportion
from evalkit.stats import NeymanAllocation, allocation_probabilities, confirm_case_table

ALPHA = 0.05
RUNS = 200


def _pilot(rates: list[tuple[float, float]], trials: int, rng: np.random.Generator):
    sides = []
    for side in (0, 1):
        sides.append(pd.DataFrame(
            [{"case_id": f"c{i}", "trial": k, "passed": bool(rng.random() < pair[side])}
             for i, pair in enumerate(rates) for k in range(trials)]
        ))  # fmt: skip
    base, cand = sides
    named = []
    for i in range(len(rates)):
        b = int(base.loc[base["case_id"] == f"c{i}", "passed"].sum())
        c = int(cand.loc[cand["case_id"] == f"c{i}", "passed"].sum())
        named.append(FlaggedCase(f"c{i}", b, trials, c, trials, (c - b) / trials, 1.0, 1.0,
                                 "inconclusive", named=True))  # fmt: skip
    return base, cand, named


def _confirmed(rates, trials_per_case, rng) -> pd.DataFrame:
    rows = []
    for (case, k) in trials_per_case.items():
        b, c = rates[int(case[1:])]
        rows += [{"case_id": case, "condition": "A", "passed": bool(x)}
                 for x in rng.random(k) < b]  # fmt: skip
        rows += [{"case_id": case, "condition": "B", "passed": bool(x)}
                 for x in rng.random(k) < c]  # fmt: skip
    return confirm_case_table(pd.DataFrame(rows), baseline="A", candidate="B", alpha=ALPHA)


def _allocated_plan(rates, pilot_trials, rng):
    base, cand, named = _pilot(rates, pilot_trials, rng)
    plan = plan_confirmation(named, base, alpha=ALPHA)
    pairs, differed = pilot_pairs(base, cand, [c.case_id for c in plan.cases])
    return plan, allocate_confirmation(plan, pairs, differed, threshold=0.05)


def test_a_case_whose_pilot_never_differed_gets_the_floor_and_the_varying_ones_more() -> None:
    base = pd.DataFrame({"case_id": ["same"] * 5 + ["flips"] * 5, "trial": [*range(5)] * 2,
                         "passed": [True] * 10})  # fmt: skip
    cand = base.assign(passed=[True] * 5 + [False] * 5)
    pairs, differed = pilot_pairs(base, cand, ["same", "flips"])
    assert pairs.tolist() == [5, 5] and differed.tolist() == [0, 5]
    named = [FlaggedCase("same", 5, 5, 5, 5, 0.0, 1.0, 1.0, "inconclusive", named=True),
             FlaggedCase("flips", 5, 5, 0, 5, -1.0, 0.01, 1.0, "inconclusive", named=True)]
    plan = plan_confirmation(named, base, alpha=ALPHA)
    allocated = allocate_confirmation(plan, pairs, differed, threshold=0.05)
    trials = {c.case_id: c.trials for c in allocated.cases}
    planned = {c.case_id: c.trials for c in plan.cases}
    assert planned["same"] == 40  # the power plan: an effect at the threshold, at the cap
    assert allocated.items == plan.items  # the same items, spread differently
    assert trials["flips"] > trials["same"] >= 2
    share = {c.case_id: c.share for c in allocated.cases}
    design = NeymanAllocation()
    assert share["same"] == pytest.approx(
        allocation_probabilities(pairs, differed, design)[0]
    )
    assert share["same"] >= design.floor / 2  # the floor keeps it in
    assert share["same"] < 0.5 * (design.floor / 2 + 0.5)  # close to the floor's share
    # its trials follow its share of the plan's total, within one for rounding
    total = plan.items // 2
    assert abs(trials["same"] - share["same"] * total) <= 1


def test_apportion_keeps_the_total_and_the_bounds() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        m = int(rng.integers(1, 9))
        shares = rng.dirichlet(np.ones(m))
        total = int(rng.integers(2 * m, 40 * m + 1))
        trials = apportion(total, shares, 2, 40)
        assert trials.sum() == total and trials.min() >= 2 and trials.max() <= 40


@pytest.mark.slow
def test_false_naming_stays_at_most_alpha_under_the_allocation() -> None:
    """Every case null (some always passing, some flipping): the family names none falsely.

    Holm at 0.05 over the cases. ``RUNS`` = 200 simulated pilots and confirmations; the
    family-wise false naming rate passes when a one-sided exact binomial test does not put
    it above 5 % at the 1 % level (at most 18 of 200).
    """
    rates = [(0.5, 0.5), (0.3, 0.3), (0.7, 0.7), (1.0, 1.0), (0.0, 0.0), (0.4, 0.4)]
    rng = np.random.default_rng(11)
    false = 0
    for _ in range(RUNS):
        _, allocated = _allocated_plan(rates, 5, rng)
        table = _confirmed(rates, {c.case_id: c.trials for c in allocated.cases}, rng)
        false += int((table["verdict"] != "inconclusive").any())
    limit = int(binom.ppf(0.99, RUNS, ALPHA))
    assert limit == 18
    assert false <= limit, f"{false} of {RUNS} families named a null case"


@pytest.mark.slow
def test_the_intervals_cover_under_the_allocation() -> None:
    """Newcombe 95 % intervals of moved and null cases cover their true difference.

    200 pilots and confirmations of 5 cases (1,000 intervals); passes when the coverage is at
    least 95 % less the binomial margin at the one-sided 1 % level: at least 933 of 1,000
    (the 1 % quantile of Binomial(1000, 0.95)).
    """
    rates = [(0.2, 0.8), (0.5, 0.9), (0.5, 0.5), (1.0, 1.0), (0.3, 0.6)]
    rng = np.random.default_rng(12)
    covered = total = 0
    for _ in range(RUNS):
        _, allocated = _allocated_plan(rates, 5, rng)
        table = _confirmed(rates, {c.case_id: c.trials for c in allocated.cases}, rng)
        for row in table.to_dict("records"):
            b, c = rates[int(row["case_id"][1:])]
            covered += int(row["ci_low"] - 1e-12 <= c - b <= row["ci_high"] + 1e-12)
            total += 1
    assert total == 1000
    assert int(binom.ppf(0.01, total, 0.95)) == 933
    assert covered >= 933, f"{covered} of {total} intervals covered"


@pytest.mark.slow
def test_the_allocation_names_more_moved_cases_than_the_power_plan_at_its_items() -> None:
    """Named cases that never differed waste the power plan's trials; the allocation moves them.

    Two moved cases and four deterministic ones (the scenario of benchmarks'
    ``bench_confirm_allocation.py``), 100 simulated confirmations each way at the same items:
    the allocation names more of the two moved cases (the power plan gives each
    never-differing case the trials of an effect at the threshold, up to the cap).
    """
    rates = [(0.2, 0.8), (0.4, 0.9), (1.0, 1.0), (1.0, 1.0), (0.0, 0.0), (1.0, 1.0)]
    rng = np.random.default_rng(13)
    named = {"plan": 0, "allocated": 0}
    for _ in range(100):
        plan, allocated = _allocated_plan(rates, 3, rng)
        assert allocated.items == plan.items
        for label, chosen in (("plan", plan), ("allocated", allocated)):
            table = _confirmed(rates, {c.case_id: c.trials for c in chosen.cases}, rng)
            named[label] += int(table.loc[table["case_id"].isin(["c0", "c1"]), "verdict"]
                                .isin(["improved"]).sum())  # fmt: skip
    assert named["allocated"] > named["plan"] + 15, named
