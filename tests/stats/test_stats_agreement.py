"""Cohen's kappa, checked against statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from evalkit.errors import InputError
from evalkit.stats import cohens_kappa


def test_kappa_matches_statsmodels() -> None:
    judge = [True, True, False, False, True, False, True, True]
    human = [True, True, False, True, True, False, False, True]
    kappa = cohens_kappa(judge, human)
    # statsmodels: cohens_kappa(np.array([[2, 1], [1, 4]])) -> kappa 0.4666..., ASE 0.32270...
    assert kappa.estimate == pytest.approx(0.4666666666666667)
    assert kappa.se == pytest.approx(0.3227046197452684)
    half = stats.norm.ppf(0.975) * kappa.se
    assert kappa.ci_low == pytest.approx(max(-1.0, kappa.estimate - half))
    assert kappa.ci_high == pytest.approx(min(1.0, kappa.estimate + half))
    assert (kappa.n, kappa.observed_agreement, kappa.method) == (8, 0.75, "cohen-kappa")
    reference = sm_cohens_kappa(np.array([[2, 1], [1, 4]]))
    assert kappa.estimate == pytest.approx(reference.kappa)
    assert kappa.ci_low == pytest.approx(reference.kappa_low)


def test_weighted_kappa_matches_statsmodels() -> None:
    table = np.array([[20, 5, 0], [3, 15, 2], [1, 2, 12]])
    a, b = [], []
    for i in range(3):
        for j in range(3):
            a += [i] * int(table[i, j])
            b += [j] * int(table[i, j])
    kappa = cohens_kappa(a, b, weights="linear")
    # statsmodels: cohens_kappa(table, wt="linear") -> 0.7254901960784313, ASE 0.0724817...
    assert kappa.estimate == pytest.approx(0.7254901960784313)
    assert kappa.se == pytest.approx(0.07248177397735878)
    assert kappa.method == "cohen-kappa-linear"


def test_kappa_label_used_by_one_rater_only() -> None:
    kappa = cohens_kappa(["pass", "fail", "pass"], ["pass", "fail", "unsure"])
    assert -1.0 <= kappa.ci_low <= kappa.estimate <= kappa.ci_high <= 1.0


def test_kappa_undefined_when_one_label_everywhere() -> None:
    kappa = cohens_kappa([True, True], [True, True])
    assert math.isnan(kappa.estimate) and kappa.observed_agreement == 1.0
    assert kappa.to_dict()["estimate"] is None


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        ([1, 0], [1], "same items"),
        ([], [], "at least one"),
        ([1, None], [1, 0], "must not be missing"),
    ],
)
def test_kappa_rejects_bad_input(a: list[object], b: list[object], match: str) -> None:
    with pytest.raises(InputError, match=match):
        cohens_kappa(a, b)


def test_kappa_perfect_agreement_is_one_with_a_real_interval() -> None:
    kappa = cohens_kappa([True, False, True, False], [True, False, True, False])
    assert kappa.estimate == 1.0 and kappa.ci_high == 1.0
    # Wilson bounds of 4/4 agreement, mapped with chance agreement 0.5 (statsmodels):
    low_po = proportion_confint(4, 4, alpha=0.05, method="wilson")[0]
    assert kappa.ci_low == pytest.approx((low_po - 0.5) / 0.5)
    assert kappa.ci_low < 0.5 and "perfect agreement" in kappa.note


@pytest.mark.parametrize(
    ("a", "b", "which"),
    [([1, 1, 1, 1], [1, 0, 1, 1], "labels_a"), ([1, 0, 0, 1], [0, 0, 0, 0], "labels_b")],
)
def test_kappa_constant_rater_is_zero_and_explained(a: list[int], b: list[int], which: str) -> None:
    kappa = cohens_kappa(a, b)  # filterwarnings=error: no RuntimeWarning may escape
    assert kappa.estimate == 0.0
    assert kappa.ci_low <= 0.0 <= kappa.ci_high and kappa.ci_high > kappa.ci_low
    assert which in kappa.note


def test_kappa_undefined_says_why() -> None:
    kappa = cohens_kappa(["x"] * 4, ["x"] * 4)
    assert kappa.to_dict()["estimate"] is None and "undefined" in kappa.note
