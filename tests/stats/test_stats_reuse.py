"""Reused samples are no evidence; two runs are compared condition by condition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from evalkit.stats import compare_tables as compare, flip_rate_between, one_sample, split_reused
from evalkit.stats._frame import as_frame
from evalkit.stats._matrix import build_pairs, restrict_pairs
from evalkit.stats._options import CompareOptions
from evalkit.stats._reuse import split_reused_by, split_reused_counting_by
from evalkit.stats._stratified import compare_parts, compare_runs


def _rows(
    rates: dict[str, list[float]],
    *,
    run_id: str,
    seed: int,
    trials: int = 3,
    hashes: dict[str, str] | None = None,
) -> pd.DataFrame:
    """A result table: ``rates[condition][case]`` pass probabilities, fresh outcomes.

    ``hashes`` gives a condition's item-hash prefix (the same prefix in two runs is the same
    work item, as when its skill text did not change); by default each run has its own.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for condition, per_case in rates.items():
        prefix = (hashes or {}).get(condition, f"{run_id}-{condition}")
        for i, p in enumerate(per_case):
            for t in range(trials):
                rows.append(
                    {
                        "run_id": run_id,
                        "case_id": f"c{i:02d}",
                        "condition": condition,
                        "provider": "simulated",
                        "trial": t,
                        "item_hash": f"{prefix}-{i}-{t}",
                        "origin_run_id": run_id,
                        "cache_hit": False,
                        "provider_deterministic": False,
                        "status": "ok",
                        "passed": bool(rng.random() < p),
                    }
                )
    return pd.DataFrame(rows)


def _copy_of(run: pd.DataFrame, run_id: str, conditions: list[str]) -> pd.DataFrame:
    """The rows of ``conditions`` as a later run gets them from the cache."""
    copied = run[run["condition"].isin(conditions)].copy()
    copied["run_id"] = run_id
    copied["cache_hit"] = True
    return copied  # origin_run_id stays the producing run


def test_one_sample_rules() -> None:
    base = pd.DataFrame(
        {
            "run_id": "r1",
            "item_hash": ["h1", "h2", "h3", "h4", "h5", "h6"],
            "origin_run_id": ["r1", "r1", "r1", None, "r1", "r1"],
            "cache_hit": [False, False, False, False, False, False],
            "provider_deterministic": [False, False, True, False, False, False],
            "passed": [True, True, False, True, True, True],
        }
    )
    cand = pd.DataFrame(
        {
            "run_id": "r2",
            "item_hash": ["h1", "h2", "h3", "h4", "h9", "h6"],
            "origin_run_id": ["r1", "r2", "r2", None, "r1", "r1"],
            "cache_hit": [True, False, False, True, True, True],
            "provider_deterministic": [False, False, True, False, False, False],
            "passed": [True, True, False, True, True, False],
        }
    )
    assert one_sample(base, cand).tolist() == [
        True,  # a cache copy of the baseline's own outcome
        False,  # a fresh outcome of the same item: a second observation
        True,  # a deterministic provider, same item hash (so same seed): the same outcome again
        True,  # a cache hit of an older run, origin not recorded: counted as reused
        False,  # another item
        False,  # outcomes differ, so whatever the labels say it is not one sample
    ]
    # tables without provenance (imported results, hand-made frames) have no reused pairs
    bare = base.drop(columns="origin_run_id")
    assert not one_sample(bare, cand).any()


def test_split_reused_removes_pairs_from_both_sides() -> None:
    base = _rows({"none": [0.5] * 8, "preloaded": [0.5] * 8}, run_id="a", seed=1)
    cand = pd.concat(
        [
            _copy_of(base, "b", ["none"]),
            _rows({"preloaded": [0.5] * 8}, run_id="b", seed=2),
        ]
    )
    split = split_reused(base, cand, ["case_id", "condition", "trial"])
    assert len(split.reused) == 24 == split.n_pairs - 24
    assert set(split.reused["condition"]) == {"none"}
    assert set(split.baseline["condition"]) == {"preloaded"} == set(split.candidate["condition"])


@pytest.mark.parametrize("provenance", [True, False])
def test_split_reused_by_condition_is_split_reused_of_each_condition(provenance: bool) -> None:
    """Matching the pairs once gives each condition exactly what splitting it alone gives."""
    rates = {"none": [0.5] * 8, "preloaded": [0.5] * 8, "stale": [0.5] * 8}
    base = _rows(rates, run_id="a", seed=21)
    fresh = _rows({"preloaded": [0.5] * 8, "stale": [0.5] * 8}, run_id="b", seed=22)
    copies = _copy_of(base, "b", ["none", "preloaded"])
    # none: every pair a copy; preloaded: half copies, half fresh; stale: fresh, 2 cases gone
    first_half = ["c00", "c01", "c02", "c03"]
    cand = pd.concat(
        [
            copies[copies["condition"].eq("none")],
            copies[copies["condition"].eq("preloaded") & copies["case_id"].isin(first_half)],
            fresh[fresh["condition"].eq("preloaded") & ~fresh["case_id"].isin(first_half)],
            fresh[fresh["condition"].eq("stale") & ~fresh["case_id"].isin(["c06", "c07"])],
        ]
    )
    cand = cand.sample(frac=1.0, random_state=3)  # row order must not matter
    if not provenance:
        base, cand = base.drop(columns="origin_run_id"), cand.drop(columns="origin_run_id")
    keys = ["case_id", "condition", "trial"]
    names = ("none", "preloaded", "stale", "absent")
    whole, parts = split_reused_by(base, cand, keys, "condition", names)
    alone = split_reused(base, cand, keys)
    pd.testing.assert_frame_equal(whole.baseline, alone.baseline)
    pd.testing.assert_frame_equal(whole.candidate, alone.candidate)
    assert (len(whole.reused), whole.n_pairs) == (len(alone.reused), alone.n_pairs)
    reused = {}
    for name in names:
        expected = split_reused(
            base[base["condition"] == name], cand[cand["condition"] == name], keys
        )
        got = parts[name]
        pd.testing.assert_frame_equal(got.baseline, expected.baseline)
        pd.testing.assert_frame_equal(got.candidate, expected.candidate)
        pd.testing.assert_frame_equal(
            got.reused.sort_values(keys).reset_index(drop=True),
            expected.reused.sort_values(keys).reset_index(drop=True),
            check_dtype=False,
        )
        assert got.n_pairs == expected.n_pairs
        reused[name] = (len(got.reused), got.n_pairs)
    if provenance:
        assert reused == {
            "none": (24, 24),
            "preloaded": (12, 24),
            "stale": (0, 18),
            "absent": (0, 0),
        }
    else:
        assert all(count == 0 for count, _ in reused.values())
    with pytest.raises(ValueError, match="must be one of the keys"):
        split_reused_by(base, cand, ["case_id", "trial"], "condition", names)


def _ragged_runs(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two runs whose conditions differ in every way pairing cares about.

    none: every pair a cache copy; preloaded: four cases copies, a trial label that only an
    unmatched case has, and a case on one side only; stale: fresh, cases on either side
    only and fewer trials; self-load: in the candidate only (compared in no condition).
    """
    rng = np.random.default_rng(seed)
    rates = {c: list(rng.uniform(0.1, 0.9, 9)) for c in ("none", "preloaded", "stale")}
    base = _rows(rates, run_id="a", seed=seed)
    fresh = _rows(rates | {"self-load": [0.5] * 9}, run_id="b", seed=seed + 1)
    copies = _copy_of(base, "b", ["none", "preloaded"])
    half = [f"c{i:02d}" for i in range(4)]
    cand = pd.concat(
        [
            copies[copies["condition"].eq("none")],
            copies[copies["condition"].eq("preloaded") & copies["case_id"].isin(half)],
            fresh[fresh["condition"].eq("preloaded") & ~fresh["case_id"].isin(half)],
            fresh[fresh["condition"].eq("stale") & fresh["trial"].lt(2)],
            fresh[fresh["condition"].eq("self-load")],
        ]
    )
    extra = base[base["condition"].eq("preloaded") & base["case_id"].eq("c08")].copy()
    extra["case_id"], extra["trial"] = "c99", extra["trial"] + 7  # unmatched, trials 7-9
    base = pd.concat([base, extra])
    base = base[~(base["condition"].eq("stale") & base["case_id"].eq("c00"))]
    cand = cand[~(cand["condition"].eq("stale") & cand["case_id"].eq("c01"))]
    return base, cand.sample(frac=1.0, random_state=seed)


@pytest.mark.parametrize("seed", [31, 32, 33])
def test_each_condition_cut_out_of_the_pairs_is_the_condition_paired_alone(seed: int) -> None:
    """Pairing once and cutting each condition out gives what pairing each one alone gives."""
    raw_base, raw_cand = _ragged_runs(seed)
    base, cand = as_frame(raw_base, what="baseline"), as_frame(raw_cand, what="candidate")
    on, keys = ["case_id", "condition"], ["case_id", "condition", "trial"]
    names = ("none", "preloaded", "self-load", "stale")
    whole, parts = split_reused_by(base, cand, keys, "condition", names)
    counted, counts = split_reused_counting_by(base, cand, keys, "condition", names)
    pd.testing.assert_frame_equal(counted.baseline, whole.baseline)
    pd.testing.assert_frame_equal(counted.candidate, whole.candidate)
    assert counts == {name: (len(parts[name].reused), parts[name].n_pairs) for name in names}
    assert counts["none"] == (27, 27) and counts["preloaded"] == (12, 27)
    pairs = build_pairs(whole.baseline, whole.candidate, on, "passed")
    for name in ("preloaded", "stale"):
        alone = build_pairs(parts[name].baseline, parts[name].candidate, on, "passed")
        labels = pd.concat([parts[name].baseline["trial"], parts[name].candidate["trial"]])
        cut = restrict_pairs(pairs, "condition", name, np.unique(labels.to_numpy()))
        pd.testing.assert_frame_equal(cut.keys, alone.keys)
        pd.testing.assert_frame_equal(cut.unmatched, alone.unmatched, check_dtype=False)
        np.testing.assert_array_equal(cut.baseline, alone.baseline)
        np.testing.assert_array_equal(cut.candidate, alone.candidate)
        np.testing.assert_array_equal(cut.trials, alone.trials)
        # preloaded's columns include the trials 7-9 of its unmatched case; stale has 3 trials
        assert list(cut.trials) == {"preloaded": [0, 1, 2, 7, 8, 9], "stale": [0, 1, 2]}[name]
    options = CompareOptions(n_resamples=400)
    result = compare_runs(base, cand, on, options)
    paired_alone = dict(compare_parts(parts, names, on, options))  # each condition's own rows
    for name, part in result.by_condition:
        expected = paired_alone[name]
        assert part.to_dict() == expected.to_dict(), name
        pd.testing.assert_frame_equal(part.cases, expected.cases)
    by_name = dict(result.by_condition)
    assert list(by_name) == ["none", "preloaded", "stale"]  # self-load: the candidate's only
    assert by_name["none"].n_cases == 0 and by_name["none"].reused_items == 27
    assert by_name["stale"].n_cases == 7 and by_name["preloaded"].n_cases == 5


def test_compare_of_cache_copies_is_inconclusive_with_every_pair_reused() -> None:
    base = _rows({"none": [0.2] * 12, "preloaded": [0.9] * 12}, run_id="a", seed=3)
    cand = _copy_of(base, "b", ["none", "preloaded"])
    result = compare(base, cand, options=CompareOptions(n_resamples=500))
    out = result.to_dict()
    assert out["verdict"] == "inconclusive"
    assert out["n_cases"] == 0 and out["delta"]["estimate"] is None
    assert out["reused_items"] == len(base) == 72
    assert "--no-cache" in out["verdict_note"] and "--seed" in out["verdict_note"]
    assert [p["reused_items"] for p in out["by_condition"]] == [36, 36]
    flips = flip_rate_between(base, cand)
    assert flips.to_dict()["flip_rate"] is None
    assert flips.reused_items == 72 and "--no-cache" in flips.message


def test_copies_no_longer_count_as_ties() -> None:
    """Before: the copies were ties that narrowed the interval; now only evidence counts."""
    base = _rows({"none": [0.5] * 30, "preloaded": [0.5] * 30}, run_id="a", seed=4)
    fresh = _rows({"preloaded": [0.5] * 30}, run_id="b", seed=5)
    cand = pd.concat([_copy_of(base, "b", ["none"]), fresh])
    pooled = compare(base, cand, options=CompareOptions(n_resamples=2000))
    naive = compare(base.drop(columns="origin_run_id"), cand.drop(columns="origin_run_id"),
        options=CompareOptions(n_resamples=2000))
    assert pooled.reused_items == 90 and naive.reused_items == 0
    part = dict(pooled.by_condition)
    assert part["none"].n_cases == 0 and part["none"].reused_items == 90
    assert part["preloaded"].n_cases == 30 and part["preloaded"].reused_items == 0
    # the naive pool halves every difference with a zero from the copied condition
    width = pooled.delta.ci_high - pooled.delta.ci_low
    naive_width = naive.delta.ci_high - naive.delta.ci_low
    assert naive_width < 0.6 * width
    assert pooled.delta.estimate == pytest.approx(part["preloaded"].delta.estimate)


def test_two_runs_with_four_conditions_report_each_condition() -> None:
    n = 30
    unchanged = {"none": [0.3] * n, "stale": [0.4] * n}
    base = _rows(
        unchanged | {"self-load": [0.35] * n, "preloaded": [0.4] * n},
        run_id="before",
        seed=6,
        hashes={"none": "same-none", "stale": "same-stale"},
    )
    edited = _rows({"self-load": [0.9] * n, "preloaded": [0.95] * n}, run_id="after", seed=7)
    cand = pd.concat([_copy_of(base, "after", ["none", "stale"]), edited])
    result = compare(base, cand, options=CompareOptions(n_resamples=2000))
    out = result.to_dict()
    parts = {p["condition"]: p for p in out["by_condition"]}
    assert list(parts) == ["none", "preloaded", "self-load", "stale"]
    for name in ("self-load", "preloaded"):
        assert parts[name]["verdict"] == "improved"
        assert parts[name]["n_cases"] == n and parts[name]["reused_items"] == 0
        assert parts[name]["delta"]["ci_low"] > 0
    for name in ("none", "stale"):
        assert parts[name]["verdict"] == "inconclusive"
        assert parts[name]["n_cases"] == 0 and parts[name]["reused_items"] == 3 * n
    assert out["pooled"] == {
        "method": "stratified-by-case",
        "conditions": ["none", "preloaded", "self-load", "stale"],
        "contributing": ["preloaded", "self-load"],
        "left_out_reused": ["none", "stale"],
    }
    assert out["n_cases"] == n  # each case once, not once per condition
    assert out["reused_items"] == 6 * n
    assert "stratified by case" in out["scope"]


def test_stratified_pool_agrees_with_pandas_and_scipy() -> None:
    rng = np.random.default_rng(11)
    n = 25
    base = _rows(
        {c: list(rng.uniform(0.2, 0.8, n)) for c in ("none", "preloaded", "stale")},
        run_id="a",
        seed=8,
    )
    cand = _rows(
        {c: list(rng.uniform(0.2, 0.8, n)) for c in ("none", "preloaded", "stale")},
        run_id="b",
        seed=9,
    )
    result = compare(base, cand, options=CompareOptions(n_resamples=4000))
    rates = pd.concat([base.assign(arm=0), cand.assign(arm=1)]).pivot_table(
        index=["case_id", "condition"], columns="arm", values="passed", aggfunc="mean"
    )
    per_case = (rates[1] - rates[0]).groupby(level="case_id").mean()
    assert result.n_cases == n == len(per_case)
    assert result.delta.estimate == pytest.approx(per_case.mean())
    assert result.se == pytest.approx(scipy_stats.sem(per_case.to_numpy()))
    low, high = scipy_stats.t.interval(
        0.95, n - 1, loc=per_case.mean(), scale=scipy_stats.sem(per_case.to_numpy())
    )
    assert result.delta.ci_low <= low + 1e-12 and result.delta.ci_high >= high - 1e-12


def test_stratified_pool_keeps_the_a_a_false_verdict_rate() -> None:
    """A/A with conditions correlated within a case: false verdicts at most about alpha.

    Counting (case, condition) units as cases would treat correlated conditions as
    independent evidence; the pool over cases does not.
    """
    rng = np.random.default_rng(12)
    false_verdicts = 0
    sims = 60
    for sim in range(sims):
        difficulty = rng.beta(2, 2, 20)
        rates = {c: list(np.clip(difficulty + rng.normal(0, 0.05, 20), 0, 1)) for c in "abcd"}
        base = _rows(rates, run_id="a", seed=1000 + sim)
        cand = _rows(rates, run_id="b", seed=5000 + sim)
        if compare(base, cand, options=CompareOptions(n_resamples=300)).verdict != "inconclusive":
            false_verdicts += 1
    # alpha = 0.05 over 60 simulations: 9 or more false verdicts would be p < 0.005
    assert false_verdicts <= 8


def test_a_condition_without_common_cases_is_reported_not_fatal() -> None:
    base = _rows({"none": [0.5] * 10, "preloaded": [0.3] * 10}, run_id="a", seed=13)
    cand = _rows({"none": [0.5] * 10, "preloaded": [0.9] * 10}, run_id="b", seed=14)
    cand.loc[cand["condition"] == "none", "case_id"] += "-renamed"
    result = compare(base, cand, options=CompareOptions(n_resamples=500))
    parts = dict(result.by_condition)
    assert parts["none"].n_cases == 0 and parts["none"].verdict == "inconclusive"
    assert "share no case" in parts["none"].verdict_note
    assert parts["preloaded"].n_cases == 10
    assert len(result.unmatched) == 20  # the renamed cases, on both sides, listed not dropped
