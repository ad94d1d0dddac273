"""Several providers sharing cases: the pooled figure counts each case once, by simulation too.

The data come from ``scripts/make_leaderboard_fixture.py`` (the shape of a skills benchmark's
leaderboard: model-harness configurations x tasks x {no-skills, with-skills} x 3 trials; case
difficulty and part of the skill's effect shared by every provider, each provider with its
own ability and lift). References: statsmodels cluster-robust OLS (cluster = case) for the
pooled interval; seeded simulations (Monte Carlo errors in each docstring) for coverage, A/A
false verdicts per provider and overall, and the interaction test; an independent count of
disagreeing trial pairs for the flip rate.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

import evalkit
from evalkit.stats import CompareOptions, compare_tables as compare, flip_rate_within
from evalkit.stats._bootstrap import paired_delta_interval
from evalkit.stats._heterogeneity import heterogeneity
from evalkit.stats._paired import overall_summary
from evalkit.stats._signflip import sign_flip_test
from evalkit.stats._verdicts import adjust_pvalues
from tests.analysis.shaped_boards import LB  # scripts/make_leaderboard_fixture.py

ROOT = Path(__file__).resolve().parents[2]
CONDITIONS = ("no-skills", "with-skills")





@pytest.fixture(scope="module")
def board() -> pd.DataFrame:
    """15 providers x 80 cases x 2 conditions x 3 trials, provider-specific lift."""
    table: pd.DataFrame = LB.leaderboard(providers=15, cases=80, trials=3, seed=7)
    assert len(table) == 15 * 80 * 2 * 3
    return table.drop(columns="p_true")


@pytest.fixture(scope="module")
def compared(board: pd.DataFrame) -> evalkit.stats.PairedComparison:
    return compare(board, conditions=CONDITIONS, options=CompareOptions(n_resamples=10_000, seed=1))


def _cell_deltas(board: pd.DataFrame) -> pd.DataFrame:
    rates = board.groupby(["case_id", "provider", "condition"])["passed"].mean().unstack()
    rates["d"] = rates["with-skills"] - rates["no-skills"]
    return rates.reset_index()


def test_pooled_interval_matches_cluster_robust_ols(
    board: pd.DataFrame, compared: evalkit.stats.PairedComparison
) -> None:
    """The overall interval is the case-clustered one, not one over (case, provider) units.

    statsmodels: ``ols("d ~ 1").fit(cov_type="cluster", groups=case)`` on the per-(case,
    provider) paired deltas; the naive fit (units independent) is far narrower, which is the
    error evalkit used to make ("over 1200 cases").
    """
    cells = _cell_deltas(board)
    groups = cells["case_id"].astype("category").cat.codes
    clustered = smf.ols("d ~ 1", cells).fit(cov_type="cluster", cov_kwds={"groups": groups})
    naive = smf.ols("d ~ 1", cells).fit()
    low, high = clustered.conf_int().loc["Intercept"]
    d = compared.delta
    assert compared.n_cases == 80, "each case counts once"
    assert d.estimate == pytest.approx(clustered.params["Intercept"], abs=1e-12)
    # bootstrap percentile against the t interval: equal up to the bootstrap's own noise
    assert d.ci_low == pytest.approx(low, abs=0.004)
    assert d.ci_high == pytest.approx(high, abs=0.004)
    naive_low, naive_high = naive.conf_int().loc["Intercept"]
    assert (d.ci_high - d.ci_low) > 1.3 * (naive_high - naive_low)
    assert compared.pooled_providers == tuple(sorted(board["provider"].unique()))
    out = compared.to_dict()
    assert out["pooled"]["method"] == "clustered-by-case"
    assert out["sign_flip"]["n_cases"] == 80


def test_each_provider_verdict_is_that_providers_own_compare(
    board: pd.DataFrame, compared: evalkit.stats.PairedComparison
) -> None:
    """``by_provider`` equals ``compare`` on one provider's rows (the pieces that existed)."""
    out = compared.to_dict()["by_provider"]
    assert len(out) == 15
    for name in ("model-00", "model-07", "model-14"):
        alone = compare(board[board["provider"] == name], conditions=CONDITIONS,
            options=CompareOptions(n_resamples=10_000, seed=1))
        mine = out[name]
        # its own verdict, kept only when its p Holm-adjusted across the 15 providers agrees
        assert mine["verdict"] == (alone.verdict if mine["p_adjusted"] < 0.05 else "inconclusive")
        assert mine["delta"] == pytest.approx(alone.delta.estimate)
        assert (mine["ci_low"], mine["ci_high"]) == pytest.approx(
            (alone.delta.ci_low, alone.delta.ci_high)
        )
        assert (mine["n_cases"], mine["wins"], mine["losses"], mine["ties"]) == (
            alone.n_cases, alone.wins, alone.losses, alone.ties
        )
    table = compared.provider_table()
    expected = adjust_pvalues(table["p_value"].to_numpy(), 0.05, "holm")
    np.testing.assert_allclose(table["p_adjusted"], expected)


def test_provider_specific_lift_is_detected_and_summarised(
    compared: evalkit.stats.PairedComparison,
) -> None:
    spread = compared.heterogeneity
    assert spread is not None and spread.n_providers == 15 and spread.n_cases == 80
    assert spread.differs and spread.pvalue < 0.001
    assert spread.tau2 > 0 and 0 < spread.i2 < 1
    assert spread.pi_low < compared.delta.ci_low < compared.delta.ci_high < spread.pi_high
    assert spread.line().startswith("providers: the effect differs between providers")


def test_interaction_f_matches_statsmodels_anova(board: pd.DataFrame,
                                                 compared: evalkit.stats.PairedComparison) -> None:
    """The case-blocked provider F test is statsmodels' type II ANOVA on the cell deltas."""
    from statsmodels.stats.anova import anova_lm

    cells = _cell_deltas(board)
    table = anova_lm(smf.ols("d ~ C(provider) + C(case_id)", cells).fit(), typ=2)
    spread = compared.heterogeneity
    assert spread is not None
    assert spread.f_statistic == pytest.approx(table.loc["C(provider)", "F"], rel=1e-9)
    assert spread.pvalue == pytest.approx(table.loc["C(provider)", "PR(>F)"], rel=1e-9)
    assert (spread.df_num, spread.df_den) == (14, 14 * 79)


def test_flip_rate_pairs_trials_only_within_a_provider(board: pd.DataFrame) -> None:
    """The flip rate equals an independent count of disagreeing trial pairs per cell."""
    result = flip_rate_within(board)
    pairs = flips = 0
    for _, cell in board.groupby(["case_id", "condition", "provider"]):
        outcomes = cell["passed"].tolist()
        for i in range(len(outcomes)):
            for j in range(i + 1, len(outcomes)):
                pairs += 1
                flips += outcomes[i] != outcomes[j]
    assert result.n_pairs == pairs == 15 * 80 * 2 * 3
    assert result.flip_rate == pytest.approx(flips / pairs)
    by_provider = result.by_provider.set_index("provider")
    assert len(by_provider) == 15 and int(by_provider["n_pairs"].sum()) == pairs
    one = board[board["provider"] == "model-03"]
    assert by_provider.loc["model-03", "flip_rate"] == pytest.approx(
        flip_rate_within(one).flip_rate
    )


def test_run_level_functions_take_a_provider_filter(board: pd.DataFrame) -> None:
    two = evalkit.compare(board, conditions=CONDITIONS, n_resamples=1000,
                          providers="model-01,model-02")
    assert set(two.to_dict()["by_provider"]) == {"model-01", "model-02"}
    lifted = evalkit.lift(board, roles="no-skills=A,with-skills=B", n_resamples=500)
    pooled = lifted.pooled.set_index("metric").loc["realized_lift"]
    cells = _cell_deltas(board)
    assert pooled["provider"] == "pooled" and pooled["n_cases"] == 80
    assert pooled["estimate"] == pytest.approx(cells.groupby("case_id")["d"].mean().mean())
    assert lifted.to_dict()["pooled_metrics"][0]["provider"] == "pooled"
    with pytest.raises(evalkit.errors.InputError, match="model-99 not in the results"):
        evalkit.flips(board, providers="model-99")


# ---- simulations ----------------------------------------------------------------------------


def _case_rates(table: pd.DataFrame) -> pd.DataFrame:
    return table.groupby(["case_id", "provider", "condition"])["passed"].mean().unstack()


@pytest.mark.slow
def test_pooled_interval_covers_the_population_effect() -> None:
    """1,000 leaderboards (15 fixed providers, 80 new cases each): coverage 93-97 %.

    Case effects are shared by every provider. The truth is the mean over the providers of
    the with-minus-without pass probability over the case population
    (:func:`population_effect`, Monte Carlo error 0.0004). Monte Carlo error of the coverage:
    0.7 pp (binomial, 1,000 runs). The same data with (case, provider) units taken as
    independent cover far less, which this test also measures (so it can fail).
    """
    truth = LB.population_effect(providers=15, provider_seed=0)
    covered = naive_covered = 0
    runs = 1000
    for run in range(runs):
        table = LB.leaderboard(providers=15, cases=80, trials=3, seed=10_000 + run,
                               provider_seed=0)
        rates = _case_rates(table)
        per_case = rates.groupby(level="case_id").mean()
        delta = paired_delta_interval(
            per_case["no-skills"].to_numpy()[:, None], per_case["with-skills"].to_numpy()[:, None],
            n_resamples=1000, confidence=0.95, seed=run,
        )
        covered += delta.ci_low <= truth <= delta.ci_high
        naive = paired_delta_interval(
            rates["no-skills"].to_numpy()[:, None], rates["with-skills"].to_numpy()[:, None],
            n_resamples=1000, confidence=0.95, seed=run,
        )
        naive_covered += naive.ci_low <= truth <= naive.ci_high
    print(f"coverage {covered / runs:.3f}, units taken as independent {naive_covered / runs:.3f}")
    assert 0.93 <= covered / runs <= 0.97
    assert naive_covered / runs < 0.90


def test_compare_uses_the_simulated_procedure(board: pd.DataFrame,
                                              compared: evalkit.stats.PairedComparison) -> None:
    """The pooled figure of ``compare`` is the case-level interval the simulation checks."""
    per_case = _case_rates(board).groupby(level="case_id").mean()
    delta = paired_delta_interval(
        per_case["no-skills"].to_numpy()[:, None], per_case["with-skills"].to_numpy()[:, None],
        n_resamples=10_000, confidence=0.95, seed=1,
    )
    assert (compared.delta.ci_low, compared.delta.ci_high) == pytest.approx(
        (delta.ci_low, delta.ci_high)
    )


@pytest.mark.slow
def test_aa_false_verdicts_at_most_alpha_per_provider_and_overall() -> None:
    """A/A leaderboards (no skill effect at all): false verdicts at most alpha = 5 %.

    Overall (pooled, clustered by case) and interaction test: 200 runs each (Monte Carlo
    error 1.5 pp at 5 %); per provider: 40 runs x 15 providers = 600 verdicts (0.9 pp);
    "some provider regressed" after Holm across providers: 40 runs (family-wise, 3.4 pp).
    Bounds: alpha plus two Monte Carlo errors.
    """
    overall = interaction = 0
    per_provider = family = 0
    runs, provider_runs = 200, 40
    for run in range(runs):
        table = LB.leaderboard(providers=15, cases=80, trials=3, seed=50_000 + run,
                               mean_lift=0.0, lift_sd=0.0, case_lift_sd=0.0)
        rates = _case_rates(table)
        per_case = rates.groupby(level="case_id").mean()
        summary = overall_summary(
            per_case["no-skills"].to_numpy()[:, None], per_case["with-skills"].to_numpy()[:, None],
            CompareOptions(threshold=0.05, confidence=0.95, n_resamples=1000, seed=run),
        )
        overall += summary["verdict"] != "inconclusive"
        cells = rates.reset_index().rename(
            columns={"no-skills": "baseline_rate", "with-skills": "candidate_rate"}
        )
        spread = heterogeneity(cells, estimate=summary["delta"].estimate, se=summary["se"])
        interaction += spread.differs
        if run >= provider_runs:
            continue
        pvalues = []
        for _, part in rates.groupby(level="provider"):
            mine = overall_summary(
                part["no-skills"].to_numpy()[:, None], part["with-skills"].to_numpy()[:, None],
                CompareOptions(threshold=0.05, confidence=0.95, n_resamples=1000, seed=run),
            )
            per_provider += mine["verdict"] != "inconclusive"
            diffs = part["with-skills"].to_numpy() - part["no-skills"].to_numpy()
            pvalues.append(sign_flip_test(diffs, 1000, run).pvalue)
        family += bool((adjust_pvalues(np.array(pvalues), 0.05, "holm") <= 0.05).any())
    print(f"A/A false verdicts: overall {overall / runs:.3f}, interaction "
          f"{interaction / runs:.3f}, per provider {per_provider / (provider_runs * 15):.3f}, "
          f"some provider after Holm {family / provider_runs:.3f}")
    assert overall / runs <= 0.05 + 2 * 0.015
    assert interaction / runs <= 0.05 + 2 * 0.015
    assert per_provider / (provider_runs * 15) <= 0.05 + 2 * 0.009
    assert family / provider_runs <= 0.05 + 2 * 0.034


def test_two_runs_conditions_by_providers(board: pd.DataFrame) -> None:
    """Two runs with two conditions and several providers: each case once at every level."""
    keep = board["provider"].isin(["model-00", "model-01", "model-02", "model-03"])
    small = board[keep]
    before = small[small["condition"] == "no-skills"]
    after = small[small["condition"] == "with-skills"]
    # two "conditions" in each run: the same trials labelled a and b, so both runs hold both
    base = pd.concat([before.assign(condition="a"), after.assign(condition="b")])
    cand = pd.concat([after.assign(condition="a"), after.assign(condition="b")])
    result = compare(base, cand, options=CompareOptions(n_resamples=2000, seed=3))
    out = result.to_dict()
    assert out["n_cases"] == 80
    assert out["pooled"] == {"method": "clustered-by-case", "conditions": ["a", "b"],
                             "providers": ["model-00", "model-01", "model-02", "model-03"],
                             "contributing": ["a", "b"], "left_out_reused": []}
    by_condition = {entry["condition"]: entry for entry in out["by_condition"]}
    assert by_condition["a"]["n_cases"] == 80 and len(by_condition["a"]["by_provider"]) == 4
    # condition b is the same trials in both runs: no change for any provider
    assert all(p["delta"] == 0.0 for p in by_condition["b"]["by_provider"].values())
    # each provider's overall figure pools its two conditions stratified by case
    alone = compare(base[base["provider"] == "model-01"], cand[cand["provider"] == "model-01"],
        options=CompareOptions(n_resamples=2000, seed=3))
    assert out["by_provider"]["model-01"]["delta"] == pytest.approx(alone.delta.estimate)
    assert out["by_provider"]["model-01"]["n_cases"] == 80
