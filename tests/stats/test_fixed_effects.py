"""Fixed-effects fits with the case absorbed equal statsmodels' dense dummy-variable fits.

References: statsmodels ``OLS`` on the dense design (``ssr``, the rank ``df_model + 1``),
``OLSResults.compare_f_test`` for nested fits, and ``anova_lm(ols("d ~ C(provider) +
C(case_id)"), typ=2)`` for the provider interaction test of :func:`heterogeneity`, each to
1e-9 (relative). The layouts: balanced leaderboards, providers with unequal trials, missing
(case, provider) cells, a single provider, all-equal differences, and providers in groups
that share no case (a rank-deficient design, where the nested test is the reference).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm
from statsmodels.tools.sm_exceptions import ValueWarning

from evalkit.stats import CompareOptions, compare_tables
from evalkit.stats._fixed_effects import (
    demean,
    nested_f_test,
    treatment_columns,
    within_fit,
)
from evalkit.stats._heterogeneity import heterogeneity
from tests.analysis.shaped_boards import LB  # scripts/make_leaderboard_fixture.py

CONDITIONS = ("no-skills", "with-skills")
TOLERANCE = 1e-9


def _dense(blocks: np.ndarray, design: np.ndarray) -> np.ndarray:
    """Intercept, treatment-coded block dummies, then ``design``: the formula's matrix."""
    return np.column_stack([np.ones(len(blocks)), treatment_columns(blocks), design])


def _unbalanced(seed: int, n_blocks: int = 40, p: int = 3) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, n_blocks, size=6 * n_blocks)
    design = rng.normal(size=(len(blocks), p))
    y = design @ rng.normal(size=p) + rng.normal(size=n_blocks)[blocks] + rng.normal(
        size=len(blocks)
    )
    return y, blocks, design


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_within_fit_is_the_dense_dummy_fit(seed: int) -> None:
    """RSS and rank of ``y ~ C(block) + X`` with unequal block sizes, as statsmodels' OLS."""
    y, blocks, design = _unbalanced(seed)
    dense = sm.OLS(y, _dense(blocks, design)).fit()  # SVD of the 240 x 43 design
    fit = within_fit(y, blocks, design)
    assert fit.rss == pytest.approx(dense.ssr, rel=TOLERANCE)
    assert (fit.rank, fit.df_resid) == (int(dense.df_model) + 1, int(dense.df_resid))
    blocks_only = sm.OLS(y, _dense(blocks, design[:, :0])).fit()
    assert within_fit(y, blocks).rss == pytest.approx(blocks_only.ssr, rel=TOLERANCE)


def test_nested_f_test_is_statsmodels_compare_f_test() -> None:
    y, blocks, design = _unbalanced(3)
    small = sm.OLS(y, _dense(blocks, design[:, :1])).fit()
    large = sm.OLS(y, _dense(blocks, design)).fit()
    f_ref, p_ref, df_ref = large.compare_f_test(small)
    test = nested_f_test(within_fit(y, blocks, design[:, :1]), within_fit(y, blocks, design))
    assert test.f_statistic == pytest.approx(f_ref, rel=TOLERANCE)
    assert test.pvalue == pytest.approx(p_ref, rel=TOLERANCE)
    assert (test.df_num, test.df_den) == (int(df_ref), int(large.df_resid))
    assert test.ms_resid == pytest.approx(large.mse_resid, rel=TOLERANCE)


def test_a_column_the_blocks_absorb_adds_no_rank() -> None:
    """A column constant within blocks (an intercept, a block-level covariate) adds nothing."""
    y, blocks, design = _unbalanced(4)
    per_block = np.random.default_rng(4).normal(size=blocks.max() + 1)[blocks]
    with_constant = np.column_stack([design, np.ones(len(y)), per_block])
    assert within_fit(y, blocks, with_constant).rank == within_fit(y, blocks, design).rank
    assert within_fit(y, blocks, with_constant).rss == pytest.approx(
        within_fit(y, blocks, design).rss, rel=TOLERANCE
    )


def test_demean_centres_every_block_of_every_column() -> None:
    y, blocks, design = _unbalanced(5)
    centred = demean(design, blocks)
    sums = pd.DataFrame(centred).groupby(blocks).sum().to_numpy()
    np.testing.assert_allclose(sums, 0.0, atol=1e-12)
    means = pd.DataFrame(design).groupby(blocks).transform("mean").to_numpy()
    np.testing.assert_allclose(centred, design - means, atol=1e-12)
    assert demean(y, blocks).shape == y.shape


# --- the provider interaction test of heterogeneity, on leaderboards ------------------------


def _reference_cells(board: pd.DataFrame) -> pd.DataFrame:
    """Per-(case, provider) deltas computed from the rows alone, cases with >= 2 providers."""
    rates = board.groupby(["case_id", "provider", "condition"])["passed"].mean().unstack()
    rates = rates.dropna(subset=list(CONDITIONS))  # a cell compared needs both conditions
    rates["d"] = rates["with-skills"] - rates["no-skills"]
    cells = rates.reset_index()
    providers_per_case = cells.groupby("case_id")["provider"].transform("nunique")
    return cells[providers_per_case >= 2]


def _anova_provider(cells: pd.DataFrame) -> pd.Series:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ValueWarning)
        table = anova_lm(smf.ols("d ~ C(provider) + C(case_id)", cells).fit(), typ=2)
    return table.loc["C(provider)"]


def _leaderboard(providers: int = 6, cases: int = 60, trials: int = 3, seed: int = 7,
                 **kw: float) -> pd.DataFrame:
    return LB.leaderboard(providers=providers, cases=cases, trials=trials, seed=seed,
                          **kw).drop(columns="p_true")


def _unequal_trials(board: pd.DataFrame) -> pd.DataFrame:
    """Providers with 1, 2 or 3 trials, and a fifth of the remaining trial rows dropped."""
    rng = np.random.default_rng(11)
    kept_trials = board["provider"].map(
        {p: 1 + i % 3 for i, p in enumerate(sorted(board["provider"].unique()))}
    )
    board = board[board["trial"] < kept_trials]
    keep = rng.random(len(board)) > 0.2
    first = ~board.duplicated(["case_id", "provider", "condition"])  # keep each cell alive
    return board[keep | first].reset_index(drop=True)


def _missing_cells(board: pd.DataFrame) -> pd.DataFrame:
    """A third of the (case, provider) cells never ran (under either condition)."""
    rng = np.random.default_rng(12)
    cells = board[["case_id", "provider"]].drop_duplicates()
    dropped = cells[rng.random(len(cells)) < 1 / 3]
    gone = board.set_index(["case_id", "provider"]).index.isin(
        pd.MultiIndex.from_frame(dropped)
    )
    return board[~gone].reset_index(drop=True)


LAYOUTS = {
    "balanced 15 providers x 80 cases": lambda: _leaderboard(15, 80),
    "balanced 2 providers x 300 cases": lambda: _leaderboard(2, 300, seed=3),
    "unequal trials per provider": lambda: _unequal_trials(_leaderboard(6, 60)),
    "missing (case, provider) cells": lambda: _missing_cells(_leaderboard(8, 70, seed=9)),
    "unequal trials and missing cells": lambda: _missing_cells(
        _unequal_trials(_leaderboard(5, 90, seed=4))
    ),
    "no provider-specific lift (A/A-like)": lambda: _leaderboard(
        4, 50, seed=5, mean_lift=0.0, lift_sd=0.0, case_lift_sd=0.0
    ),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_interaction_f_is_statsmodels_type_ii_anova(layout: str) -> None:
    """compare's heterogeneity F and p equal ``anova_lm(..., typ=2)`` on the cell deltas."""
    board = LAYOUTS[layout]()
    spread = compare_tables(board, conditions=CONDITIONS,
                            options=CompareOptions(n_resamples=200, seed=1)).heterogeneity
    cells = _reference_cells(board)
    reference = _anova_provider(cells)
    assert spread is not None
    assert spread.n_cases == cells["case_id"].nunique()
    assert spread.n_providers == cells["provider"].nunique()
    assert spread.f_statistic == pytest.approx(reference["F"], rel=TOLERANCE)
    assert spread.pvalue == pytest.approx(reference["PR(>F)"], rel=TOLERANCE)
    fit = smf.ols("d ~ C(provider) + C(case_id)", cells).fit()
    assert (spread.df_num, spread.df_den) == (int(reference["df"]), int(fit.df_resid))
    ms_provider = reference["sum_sq"] / reference["df"]
    tau2 = max(0.0, (ms_provider - fit.mse_resid) / (len(cells) / spread.n_providers))
    assert spread.tau2 == pytest.approx(tau2, rel=TOLERANCE, abs=1e-15)


def _cells(case: np.ndarray, provider: np.ndarray, d: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {"case_id": case, "provider": provider, "baseline_rate": 0.0, "candidate_rate": d}
    )


def test_a_single_provider_has_no_interaction_test() -> None:
    """One provider: compare has no heterogeneity; asked anyway, no case is shared, no test."""
    board = _leaderboard(1, 40)
    assert compare_tables(board, conditions=CONDITIONS,
                          options=CompareOptions(n_resamples=200)).heterogeneity is None
    rng = np.random.default_rng(0)
    cells = _cells(np.arange(50), np.full(50, "only"), rng.normal(size=50))
    spread = heterogeneity(cells, estimate=0.0, se=0.1)
    assert spread.n_cases == 0 and spread.df_num == 0
    assert np.isnan(spread.f_statistic) and np.isnan(spread.pvalue) and np.isnan(spread.tau2)
    assert not spread.differs and "no test" in spread.line()


def test_all_equal_differences_have_no_test_and_no_spread() -> None:
    """Every delta equal: statsmodels' residual is 0 (F undefined); no test, tau2 = 0."""
    case = np.repeat(np.arange(30), 3)
    provider = np.tile(["a", "b", "c"], 30)
    cells = _cells(case, provider, np.full(90, 0.25))
    fit = smf.ols("d ~ C(provider) + C(case_id)", cells.assign(d=0.25)).fit()
    assert fit.ssr < 1e-20  # the reference explains everything too
    spread = heterogeneity(cells, estimate=0.25, se=0.0)
    assert np.isnan(spread.f_statistic) and np.isnan(spread.pvalue)
    assert spread.tau2 == 0.0 and spread.i2 == 0.0
    assert (spread.df_num, spread.df_den) == (2, int(fit.df_resid))


def test_providers_that_share_no_case_are_tested_on_their_estimable_contrasts() -> None:
    """Providers a, b on cases 0-9 and c, d on cases 10-19: only a-b and c-d are estimable.

    The design is rank-deficient; the F test is the nested one on the rank the providers add
    (statsmodels ``compare_f_test`` against the case-only fit), 2 and not 3 numerator df.
    """
    rng = np.random.default_rng(0)
    case = np.repeat(np.arange(20), 2)
    provider = np.where(case < 10, np.tile(["a", "b"], 20), np.tile(["c", "d"], 20))
    d = rng.normal(size=40)
    frame = pd.DataFrame({"case_id": case, "provider": provider, "d": d})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels warns of the singular design
        full = smf.ols("d ~ C(provider) + C(case_id)", frame).fit()
        f_ref, p_ref, df_ref = full.compare_f_test(smf.ols("d ~ C(case_id)", frame).fit())
    spread = heterogeneity(_cells(case, provider, d), estimate=0.0, se=0.1)
    assert spread.f_statistic == pytest.approx(f_ref, rel=TOLERANCE)
    assert spread.pvalue == pytest.approx(p_ref, rel=TOLERANCE)
    assert (spread.df_num, spread.df_den) == (int(df_ref), int(full.df_resid))


def test_the_interaction_test_needs_no_case_dummies() -> None:
    """20,000 cases x 2 providers: a dense dummy design would be 40,000 x 20,001 (6.4 GB)."""
    rng = np.random.default_rng(1)
    n = 20_000
    case = np.repeat(np.arange(n), 2)
    provider = np.tile(["a", "b"], n)
    d = rng.normal(size=n)[case] + np.where(provider == "b", 0.02, 0.0) + rng.normal(size=2 * n)
    spread = heterogeneity(_cells(case, provider, d), estimate=0.0, se=0.01)
    # two providers: the F test is the squared paired t test of the provider difference
    gap = d[provider == "b"] - d[provider == "a"]
    t = gap.mean() / (gap.std(ddof=1) / np.sqrt(n))
    assert spread.f_statistic == pytest.approx(t**2, rel=TOLERANCE)
    assert (spread.df_num, spread.df_den) == (1, n - 1)
