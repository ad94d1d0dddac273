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
    # the hull of the Wald interval and the Wilson interval of the observed agreement
    # (6 of 8, chance agreement 0.53125) mapped to kappa
    low_po, high_po = proportion_confint(6, 8, alpha=0.05, method="wilson")
    expected = 0.53125
    wilson = ((low_po - expected) / (1 - expected), (high_po - expected) / (1 - expected))
    assert kappa.ci_low == pytest.approx(max(-1.0, min(kappa.estimate - half, wilson[0])))
    assert kappa.ci_high == pytest.approx(min(1.0, max(kappa.estimate + half, wilson[1])))
    assert (kappa.n, kappa.observed_agreement, kappa.method) == (8, 0.75, "cohen-kappa")
    reference = sm_cohens_kappa(np.array([[2, 1], [1, 4]]))
    assert kappa.estimate == pytest.approx(reference.kappa)
    assert kappa.ci_low <= reference.kappa_low


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


def _labels(counts: np.ndarray) -> tuple[list[bool], list[bool]]:
    """Human and judge labels of a 2x2 table ``[both pass, human only, judge only, neither]``."""
    both, human_only, judge_only, neither = (int(c) for c in counts)
    human = [True] * (both + human_only) + [False] * (judge_only + neither)
    judge = [True] * both + [False] * human_only + [True] * judge_only + [False] * neither
    return human, judge


@pytest.mark.parametrize("true_kappa", [0.6, 0.8, 0.9])
@pytest.mark.parametrize("pass_share", [0.5, 0.85])
@pytest.mark.parametrize("n_labels", [30, 50, 100])
def test_kappa_lower_bound_holds_its_level(
    true_kappa: float, pass_share: float, n_labels: int
) -> None:
    """The gate's bound exceeds the true kappa in <= 3.5 % of draws at nominal 2.5 %.

    Human and judge share the pass share; the cell probabilities give exactly the true kappa.
    1,500 seeded draws: the Monte Carlo standard error at 2.5 % is 0.4 pp, so 3.5 % is 2.5
    standard errors above nominal (the Wald bound alone reached 10.5 % at kappa 0.8, 50 labels).
    """
    rng = np.random.default_rng(int(1000 * true_kappa + 100 * pass_share + n_labels))
    q = pass_share * (1 - pass_share)
    cells = np.array([
        pass_share**2 + true_kappa * q, (1 - true_kappa) * q, (1 - true_kappa) * q,
        (1 - pass_share) ** 2 + true_kappa * q,
    ])
    draws, above = 1500, 0
    tables, times = np.unique(rng.multinomial(n_labels, cells, size=draws), axis=0,
                              return_counts=True)  # each distinct table is computed once
    for counts, count in zip(tables, times, strict=True):
        kappa = cohens_kappa(*_labels(counts))
        above += int(count) * bool(kappa.ci_low > true_kappa)  # NaN is never above
    assert above / draws <= 0.035
