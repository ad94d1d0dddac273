"""Pairing two tables into per-unit trial matrices, checked against pandas' own grouping."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.errors import InputError
from evalkit.stats import _matrix
from evalkit.stats._matrix import build_pairs, unit_codes

#: Case ids whose sorted order differs between code points and a naive byte or case order.
NAMES = ["b", "a", "Z", "é", "z", "a-1", "a_1", "ß", "日本", "A"]


def _side(rng: np.random.Generator, n_units: int, drop: float) -> pd.DataFrame:
    rows = []
    for case in rng.choice(NAMES, size=n_units, replace=False):
        for condition in ("none", "preloaded", "self-load"):
            if rng.random() < drop:
                continue
            for trial in rng.choice(6, size=int(rng.integers(1, 5)), replace=False):
                rows.append(
                    {
                        "case_id": str(case),
                        "condition": condition,
                        "trial": int(trial),
                        "passed": float(rng.random() < 0.5),
                    }
                )
    frame = pd.DataFrame(rows)
    frame["case_id"] = frame["case_id"].astype("str")
    return frame.sample(frac=1.0, random_state=int(rng.integers(1000)))


def _reference(
    base: pd.DataFrame, cand: pd.DataFrame, on: list[str]
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray, pd.DataFrame]:
    """The pairs as pandas builds them: pivot each side, keep the units of both."""
    trials = np.unique(np.concatenate([base["trial"].to_numpy(), cand["trial"].to_numpy()]))
    wide = [
        df.pivot_table(index=on, columns="trial", values="passed", aggfunc="first")
        .reindex(columns=trials)
        .sort_index()
        for df in (base, cand)
    ]
    units = wide[0].index.intersection(wide[1].index).sort_values()
    keys = units.to_frame(index=False)
    counts = [df.groupby(on).size() for df in (base, cand)]
    lonely = []
    for label, index in (("baseline", 0), ("candidate", 1)):
        only = counts[index][~counts[index].index.isin(units)]
        part = only.index.to_frame(index=False)
        part["side"], part["n"] = label, only.to_numpy()
        lonely.append(part)
    unmatched = pd.concat(lonely, ignore_index=True).sort_values(on, kind="stable")
    return (
        keys,
        wide[0].loc[units].to_numpy(),
        wide[1].loc[units].to_numpy(),
        trials,
        unmatched.reset_index(drop=True),
    )


@pytest.fixture(params=["objects", "arrow"])
def factorized_as(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways a key column is factorized: as Python objects (small tables) or natively."""
    if request.param == "arrow":
        monkeypatch.setattr(_matrix, "OBJECT_FACTORIZE_ROWS", 0)
    return str(request.param)


@pytest.mark.parametrize("seed", range(6))
def test_build_pairs_matches_pandas_pivots(seed: int, factorized_as: str) -> None:
    rng = np.random.default_rng(seed)
    base, cand = _side(rng, 8, drop=0.2), _side(rng, 8, drop=0.2)
    on = ["case_id", "condition"]
    pairs = build_pairs(base, cand, on, "passed")
    keys, baseline, candidate, trials, unmatched = _reference(base, cand, on)
    assert len(pairs.keys) > 0
    pd.testing.assert_frame_equal(pairs.keys, keys, check_dtype=False)
    np.testing.assert_array_equal(pairs.baseline, baseline)
    np.testing.assert_array_equal(pairs.candidate, candidate)
    np.testing.assert_array_equal(pairs.trials, trials)
    pd.testing.assert_frame_equal(pairs.unmatched, unmatched, check_dtype=False)


def test_unit_codes_number_units_as_a_sorted_groupby_does(factorized_as: str) -> None:
    rng = np.random.default_rng(7)
    frames = [_side(rng, 9, drop=0.3) for _ in range(3)]
    on = ["condition", "case_id", "trial"]
    stacked = pd.concat(frames, ignore_index=True)
    expected = stacked.groupby(on, sort=True).ngroup().to_numpy()
    np.testing.assert_array_equal(unit_codes(frames, on), expected)


def test_a_repeated_item_names_its_side_and_row() -> None:
    base = pd.DataFrame({"case_id": ["a", "b"], "trial": 0, "passed": [1.0, 0.0]})
    cand = pd.DataFrame({"case_id": ["a", "b", "b"], "trial": 0, "passed": [1.0, 0.0, 1.0]})
    with pytest.raises(InputError, match=r"`candidate` has several rows .*'case_id': 'b'"):
        build_pairs(base, cand, ["case_id"], "passed")
