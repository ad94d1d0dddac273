"""The analyses' printed figures against independent computations on two committed demo runs.

Each test takes one figure of a command's ``--json`` output and computes it again from the
runs' result tables with pandas, scipy or statsmodels, as the docs define it
(docs/statistics.md), with the tolerance beside it. The runs are ``evalkit run cases/demo
--trials 3 --seed 1`` (``demo-a``) and ``--seed 2`` (``demo-b``): 39 cases x 4 conditions x 3
trials of the simulated provider.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from tests.golden_commands import GOLDEN, GOLDEN_COMMANDS, command_output

EXACT = 1e-12  # the same arithmetic in another order
SOLVED = 1e-6  # a root found by a solver on either side


class _Outputs(dict[str, dict[str, Any]]):
    """Each command's parsed ``--json`` output, run on first use (once per module)."""

    def __init__(self, runs: Path) -> None:
        super().__init__()
        self.runs = runs

    def __missing__(self, name: str) -> dict[str, Any]:
        self[name] = command_output(GOLDEN_COMMANDS[name], self.runs)["stdout"]
        return self[name]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The commands' outputs on a scratch copy of the runs (an analysis may write caches)."""
    runs = tmp_path_factory.mktemp("reference") / "runs"
    shutil.copytree(GOLDEN / "runs", runs)
    return _Outputs(runs)


def _results(run: str) -> pd.DataFrame:
    return pd.read_parquet(GOLDEN / "runs" / run / "results.parquet")


def _case_differences(baseline: pd.DataFrame, candidate: pd.DataFrame) -> pd.Series:
    """Candidate minus baseline pass rate per case (trials averaged within the case first)."""
    rates = [frame.groupby("case_id")["passed"].mean() for frame in (baseline, candidate)]
    return (rates[1] - rates[0]).dropna()


def _t_interval(d: pd.Series) -> tuple[float, float]:
    half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    return d.mean() - half, d.mean() + half


def _exact_sign_flip_p(d: pd.Series, trials: int) -> float:
    """Two-sided sign-flip p of the mean, by exact convolution (differences are k / trials)."""
    steps = np.rint(np.abs(d.to_numpy()) * trials).astype(int)
    counts = {0: 1}
    for step in steps:
        after: dict[int, int] = {}
        for total, ways in counts.items():
            for signed in (step, -step):
                after[total + signed] = after.get(total + signed, 0) + ways
        counts = after
    observed = abs(int(np.rint(d.sum() * trials)))
    return sum(w for t, w in counts.items() if abs(t) >= observed) / 2 ** len(steps)


# ---- compare: two conditions of one run ------------------------------------------------------


def test_compare_conditions_delta_and_counts(outputs: dict[str, dict[str, Any]]) -> None:
    out, a = outputs["compare-conditions"], _results("demo-a")
    d = _case_differences(a[a.condition == "none"], a[a.condition == "preloaded"])
    assert out["delta"]["estimate"] == pytest.approx(d.mean(), abs=EXACT)
    counts = ((d > 0).sum(), (d < 0).sum(), (d == 0).sum())
    assert (out["wins"], out["losses"], out["ties"]) == counts
    assert out["n_cases"] == len(d)


def test_compare_conditions_interval_contains_the_t_interval(
    outputs: dict[str, dict[str, Any]],
) -> None:
    """The expanded percentile bootstrap, widened to contain Student's t (docs/statistics.md)."""
    out, a = outputs["compare-conditions"], _results("demo-a")
    d = _case_differences(a[a.condition == "none"], a[a.condition == "preloaded"])
    low, high = _t_interval(d)
    assert out["delta"]["ci_low"] <= low + EXACT and out["delta"]["ci_high"] >= high - EXACT
    # the bootstrap side is no wider than a t interval at twice the standard error
    assert out["delta"]["ci_high"] - out["delta"]["ci_low"] <= 2 * (high - low)


def test_compare_conditions_sign_flip_p_is_the_resampled_exact_p(
    outputs: dict[str, dict[str, Any]],
) -> None:
    out, a = outputs["compare-conditions"], _results("demo-a")
    d = _case_differences(a[a.condition == "none"], a[a.condition == "preloaded"])
    exact = _exact_sign_flip_p(d, trials=3)
    draws = 10_000  # (1 + hits) / (1 + R), R random sign patterns
    expected = (1 + draws * exact) / (1 + draws)
    spread = np.sqrt(draws * exact * (1 - exact)) / (1 + draws)
    assert out["sign_flip"]["method"] == "resampled" and out["sign_flip"]["n_cases"] == len(d)
    assert abs(out["sign_flip"]["pvalue"] - expected) <= 5 * spread + 1 / (1 + draws)


def test_compare_conditions_verdict_follows_the_rule(outputs: dict[str, dict[str, Any]]) -> None:
    out = outputs["compare-conditions"]
    improved = (
        out["delta"]["ci_low"] > 0
        and out["delta"]["estimate"] >= out["threshold"]
        and out["sign_flip"]["pvalue"] < 0.05
    )
    assert improved == (out["verdict"] == "improved")


def test_compare_conditions_case_rows_are_fisher_with_newcombe_intervals(
    outputs: dict[str, dict[str, Any]],
) -> None:
    out, a = outputs["compare-conditions"], _results("demo-a")
    rows = pd.DataFrame(out["case_screen"]["rows"]).set_index("case_id")
    counts = a[a.condition.isin(["none", "preloaded"])].groupby(["case_id", "condition"])["passed"]
    passes, trials = counts.sum().unstack(), counts.size().unstack()
    for case, row in rows.iterrows():
        b, c = int(passes.loc[case, "none"]), int(passes.loc[case, "preloaded"])
        nb, nc = int(trials.loc[case, "none"]), int(trials.loc[case, "preloaded"])
        assert (row.n_baseline, row.n_candidate) == (nb, nc)
        assert row.estimate == pytest.approx(c / nc - b / nb, abs=EXACT)
        if row.method == "fisher":
            p = stats.fisher_exact([[c, nc - c], [b, nb - b]]).pvalue
            assert row.p_value == pytest.approx(p, abs=EXACT), case
        low, high = confint_proportions_2indep(c, nc, b, nb, method="newcomb", compare="diff")
        assert (row.ci_low, row.ci_high) == pytest.approx((low, high), abs=EXACT), case
    adjusted = multipletests(rows.p_value, method=out["case_screen"]["correction"])[1]
    assert rows.p_adjusted.to_numpy() == pytest.approx(adjusted, abs=EXACT)


def test_compare_conditions_case_interaction_is_the_ols_interaction_f(
    outputs: dict[str, dict[str, Any]],
) -> None:
    out, a = outputs["compare-conditions"], _results("demo-a")
    frame = a[a.condition.isin(["none", "preloaded"])].assign(y=lambda f: f.passed.astype(float))
    table = anova_lm(smf.ols("y ~ C(case_id) * C(condition)", data=frame).fit(), typ=2)
    row = table.loc["C(case_id):C(condition)"]
    found = out["case_interaction"]
    assert found["f_statistic"] == pytest.approx(row.F, rel=1e-9)
    assert (found["df_num"], found["df_den"]) == (row.df, table.loc["Residual", "df"])
    # a within-cell permutation p (999 draws) near the F distribution's
    assert abs(found["pvalue"] - row["PR(>F)"]) < 0.03


# ---- compare: two runs, pooled over conditions -----------------------------------------------


def test_compare_runs_by_condition_and_pooled_delta(outputs: dict[str, dict[str, Any]]) -> None:
    out, a, b = outputs["compare-runs"], _results("demo-a"), _results("demo-b")
    assert out["reused_items"] == 0
    per_condition = {}
    for row in out["by_condition"]:
        cond = row["condition"]
        d = _case_differences(a[a.condition == cond], b[b.condition == cond])
        per_condition[cond] = d
        assert row["delta"]["estimate"] == pytest.approx(d.mean(), abs=EXACT), cond
        assert (row["wins"], row["losses"]) == ((d > 0).sum(), (d < 0).sum()), cond
    # pooled: each case once, its per-condition differences averaged, then the mean over cases
    pooled = pd.concat(per_condition, axis=1).mean(axis=1)
    assert out["delta"]["estimate"] == pytest.approx(pooled.mean(), abs=EXACT)
    low, high = _t_interval(pooled)
    assert out["delta"]["ci_low"] <= low + EXACT and out["delta"]["ci_high"] >= high - EXACT


def test_gate_reads_the_comparison_compare_prints(outputs: dict[str, dict[str, Any]]) -> None:
    gate, compare = outputs["gate"], outputs["compare-runs"]
    assert gate["comparison"]["delta"] == compare["delta"]
    assert gate["ledger_row"]["delta"] == compare["delta"]["estimate"]
    verdicts = {row["condition"]: row["verdict"] for row in compare["by_condition"]}
    assert gate["ledger_row"]["condition_verdicts"] == verdicts
    # no condition regressed once Holm-adjusted across the four: the judge nobody calibrated
    # is what blocks the release tier
    assert "regressed" not in verdicts.values()
    assert gate["decision"] == "blocked"
    assert gate["ledger_row"]["reason"].startswith("judge uncalibrated")


def test_gate_budgets_are_the_runs_totals(outputs: dict[str, dict[str, Any]]) -> None:
    budgets = {row["name"]: row for row in outputs["gate"]["budgets"]}
    a, b = _results("demo-a"), _results("demo-b")
    assert budgets["cost"]["baseline"] == pytest.approx(a.cost_usd.sum(), rel=1e-9)
    assert budgets["cost"]["candidate"] == pytest.approx(b.cost_usd.sum(), rel=1e-9)
    tokens = a.input_tokens.sum() + a.output_tokens.sum()
    assert budgets["tokens"]["baseline"] == pytest.approx(tokens, rel=1e-9)
    p95 = np.percentile(a.latency_s, 95)
    assert budgets["p95_latency"]["baseline"] == pytest.approx(p95, rel=1e-9)


# ---- flips -----------------------------------------------------------------------------------


def test_flips_within_is_the_share_of_disagreeing_trial_pairs(
    outputs: dict[str, dict[str, Any]],
) -> None:
    out, a = outputs["flips-within"], _results("demo-a")
    flips = pairs = 0
    for _, cell in a.groupby(["case_id", "condition"]):
        for x, y in itertools.combinations(cell.passed.tolist(), 2):
            flips, pairs = flips + (x != y), pairs + 1
    assert out["n_pairs"] == pairs
    assert out["flip_rate"] == pytest.approx(flips / pairs, abs=EXACT)
    assert out["ci_low"] < out["flip_rate"] < out["ci_high"]


def test_flips_between_runs_pairs_trials_of_a_cell(outputs: dict[str, dict[str, Any]]) -> None:
    out = outputs["flips-between"]
    pairs = _results("demo-a").merge(
        _results("demo-b"), on=["case_id", "condition", "trial"], suffixes=("_a", "_b")
    )
    disagree = pairs.passed_a != pairs.passed_b
    assert out["n_pairs"] == len(pairs)
    assert out["flip_rate"] == pytest.approx(disagree.mean(), abs=EXACT)
    for row in out["by_case"]:
        cell = disagree[(pairs.case_id == row["case_id"]) & (pairs.condition == row["condition"])]
        assert (row["flips"], row["n"]) == (cell.sum(), len(cell))
        low, high = proportion_confint(cell.sum(), len(cell), method="wilson")
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=EXACT)


# ---- lift ------------------------------------------------------------------------------------


def test_lift_success_is_each_conditions_pass_rate(outputs: dict[str, dict[str, Any]]) -> None:
    a = _results("demo-a")
    for row in outputs["lift"]["success"]:
        cell = a[(a.condition == row["condition"]) & (a.lane == row["lane"])]
        rate = cell.groupby("case_id")["passed"].mean().mean()
        assert row["estimate"] == pytest.approx(rate, abs=EXACT), row
        assert row["n_cases"] == cell.case_id.nunique()
        assert row["ci_low"] <= row["estimate"] <= row["ci_high"]


def test_lift_failure_causes_count_failed_items(outputs: dict[str, dict[str, Any]]) -> None:
    a = _results("demo-a")
    causes = pd.DataFrame(outputs["lift"]["failure_causes"])
    for condition, rows in causes.groupby("condition"):
        failed = int((~a[a.condition == condition].passed.astype(bool)).sum())
        assert rows.failures.max() <= failed
        assert rows.share.to_numpy() == pytest.approx(rows.failures.to_numpy() / failed, abs=EXACT)


# ---- power -----------------------------------------------------------------------------------


def test_power_mde_is_statsmodels_one_sample_t(outputs: dict[str, dict[str, Any]]) -> None:
    out = outputs["power-mde"]
    # per-case difference variance: 2 (var_between (1 - correlation) + var_within / trials)
    variance = 2 * (out["var_between"] * (1 - out["correlation"])
                    + out["var_within"] / out["n_trials"])
    assert out["se"] == pytest.approx(np.sqrt(variance / out["n_cases"]), abs=EXACT)
    effect_size = TTestPower().solve_power(nobs=out["n_cases"], alpha=0.05, power=0.8)
    assert out["effect"] == pytest.approx(effect_size * np.sqrt(variance), abs=SOLVED)


def test_power_from_run_reads_the_pilots_variances(outputs: dict[str, dict[str, Any]]) -> None:
    out, a = outputs["power-from-run"], _results("demo-a")
    cells = a.groupby(["case_id", "condition"])["passed"]
    var_within = cells.var(ddof=1).mean()
    assert out["var_within"] == pytest.approx(var_within, abs=EXACT)
    assert out["var_between"] == pytest.approx(cells.mean().var(ddof=1) - var_within / 3, abs=EXACT)
    assert out["baseline_rate"] == pytest.approx(a.passed.mean(), abs=EXACT)
    sd = out["se"] * np.sqrt(out["n_cases"])
    power = TTestPower().power(effect_size=out["effect"] / sd, nobs=out["n_cases"], alpha=0.05)
    assert out["power"] == pytest.approx(power, abs=EXACT)
    smaller = TTestPower().power(
        effect_size=out["effect"] / sd, nobs=out["n_cases"] - 1, alpha=0.05
    )
    assert smaller < 0.8 <= out["power"]  # the fewest cases that reach 80 %


# ---- compare --sequential --------------------------------------------------------------------


def test_each_look_estimates_the_cases_drawn_so_far(outputs: dict[str, dict[str, Any]]) -> None:
    out, a = outputs["compare-sequential"], _results("demo-a")
    d = _case_differences(a[a.condition == "none"], a[a.condition == "preloaded"])
    assert sorted(out["order"]) == sorted(d.index)
    for look in out["looks"]:
        drawn = d.loc[out["order"][: look["n_cases"]]]
        assert look["estimate"] == pytest.approx(drawn.mean(), abs=EXACT)
        assert look["ci_low"] <= look["estimate"] <= look["ci_high"]
    settled = [look for look in out["looks"] if look["settled"]]
    assert out["stopped_at"] == settled[0]["n_cases"] == out["n_cases"]
    assert out["verdict"] == settled[0]["verdict"]
