"""lift, flips and the rate guard on unbalanced providers and one-trial data.

The leaderboard shape: six harnesses ran model-a, two of them also model-b. A pool of every
row sets model-a's six harnesses against model-b's two (Simpson's paradox); the pool must
count the cells both ran, and then say the same as ``compare``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit._percent import percent
from evalkit.stats._matched import matched_rates
from tests.analysis.shaped_boards import (
    HARNESSES,
    MODELS,
    one_trial_board,
    unbalanced_board,
    write_run,
)
from tests.conftest import evalkit_cli

ROLES = f"{MODELS[0]}=A,{MODELS[1]}=B"


@pytest.fixture(scope="module")
def board() -> pd.DataFrame:
    return unbalanced_board()


@pytest.fixture(scope="module")
def board_run(board: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run(board, tmp_path_factory.mktemp("lift") / "runs", "board")


def test_the_pooled_lift_counts_the_cells_both_ran_and_equals_compare(
    board: pd.DataFrame,
) -> None:
    lifted = evalkit.lift(board, roles=ROLES, n_resamples=2000, seed=3)
    pooled = lifted.pooled.set_index("metric").loc["realized_lift"]
    compared = evalkit.compare(board, conditions=MODELS, n_resamples=2000, seed=3)
    # one quantity, one interval: the same figure as compare, to the last digit
    assert pooled["estimate"] == pytest.approx(compared.delta.estimate, abs=1e-12)
    assert pooled["ci_low"] == pytest.approx(compared.delta.ci_low, abs=1e-12)
    assert pooled["ci_high"] == pytest.approx(compared.delta.ci_high, abs=1e-12)
    # by hand: the harnesses that ran both, each case once
    both = board[board["provider"].isin(HARNESSES[:2])]
    per_case = both.pivot_table(index="case_id", columns="condition", values="passed")
    assert pooled["estimate"] == pytest.approx(
        (per_case[MODELS[1]] - per_case[MODELS[0]]).mean(), abs=1e-12
    )
    # the naive pool of every row says something else (the paradox the pool avoids)
    naive = board.groupby("condition")["passed"].mean()
    assert np.sign(naive[MODELS[1]] - naive[MODELS[0]]) != np.sign(pooled["estimate"])
    (scope,) = lifted.pooled_scope
    assert scope.providers == HARNESSES[:2] and scope.cells == 2 * 80
    assert scope.left_out == {name: "ran only model-a" for name in HARNESSES[2:]}


def test_trigger_metrics_are_absent_when_the_data_records_no_loading(
    board: pd.DataFrame,
) -> None:
    lifted = evalkit.lift(board, roles=ROLES, n_resamples=500)
    assert not set(lifted.metrics["metric"]) & {"over_trigger_rate", "trigger_precision"}
    assert "record no skill loading" in lifted.trigger_note
    recorded = evalkit.lift("tests/fixtures/runs/after", n_resamples=500)
    assert "over_trigger_rate" in set(recorded.metrics["metric"])
    assert recorded.trigger_note == ""


def test_lift_text_and_json_say_who_was_pooled_and_why_metrics_are_missing(
    board_run: Path,
) -> None:
    done = evalkit_cli("lift", board_run, "--roles", ROLES, "--resamples", "500")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "no lift metric for harness-3 / prompt, harness-4 / prompt" in text
    assert "ran only model-a" in text
    assert "pooled over the 160 (provider, case) cells that ran every condition" in text
    assert "over_trigger_rate" not in text and "no trigger metrics" in text
    assert "n/a everywhere: oracle_lift, routing_gap, stale_harm, routing_efficiency" in text
    assert "C=preloaded (absent)" in text
    data = json.loads(evalkit_cli("lift", board_run, "--roles", ROLES, "--resamples", "500",
                                  "--json").stdout)
    assert data["pooled_scope"][0]["providers"] == list(HARNESSES[:2])
    assert data["trigger_note"].startswith("no trigger metrics")


def test_matched_rates_set_the_pooled_rate_beside_the_shared_cells_rate(
    board: pd.DataFrame,
) -> None:
    guard = matched_rates(board)
    assert not guard.balanced
    table = guard.table.set_index("condition")
    assert table.loc[MODELS[0], "cells"] == 6 * 80 and table.loc[MODELS[1], "cells"] == 2 * 80
    shared = board[board["provider"].isin(HARNESSES[:2])]
    by_hand = shared.groupby(["condition", "case_id"])["passed"].mean().groupby("condition").mean()
    for model in MODELS:
        assert table.loc[model, "matched_estimate"] == pytest.approx(by_hand[model])
    gap = percent(by_hand[MODELS[1]] - by_hand[MODELS[0]])
    assert f"{gap:+.1f} pp over the 160 cells both ran" in guard.warning
    assert "model-a 6 provider(s); model-b 2 provider(s) (harness-1, harness-2)" in guard.warning
    balanced = board[board["provider"].isin(HARNESSES[:2])]
    assert matched_rates(balanced).balanced and matched_rates(balanced).warning == ""


def test_a_one_trial_run_has_no_within_run_flip_interval(tmp_path: Path) -> None:
    run = write_run(one_trial_board(cases=60), tmp_path / "runs", "once")
    done = evalkit_cli("flips", run)
    assert done.returncode == 0
    assert "not measurable here (0 pairs)" in done.stdout
    assert "[0.000, 1.000]" not in done.stdout and "one trial per case" in done.stdout
    data = json.loads(evalkit_cli("flips", run, "--json").stdout)
    assert data["n_pairs"] == 0 and data["ci_low"] is None and data["ci_high"] is None


def test_the_rich_comparison_names_the_pool_and_the_unmatched(board: pd.DataFrame) -> None:
    compared = evalkit.compare(board, conditions=MODELS, n_resamples=500)
    html = compared._repr_html_()
    assert html is not None
    assert "pooled over 2 of 6 providers" in html
    assert "harness-3, harness-4, harness-5, harness-6 (ran only model-a)" in html
    assert "320 model-a-only group(s)" in html
    assert "<th>provider</th>" in html or ">provider<" in html


def test_the_import_summary_warns_when_conditions_ran_different_cells(
    board: pd.DataFrame, tmp_path: Path
) -> None:
    source = tmp_path / "board.csv"
    board.to_csv(source, index=False)
    done = evalkit_cli("import", source, "--format", "csv", "--run-id", "b",
                       "--runs-dir", tmp_path / "runs")
    assert done.returncode == 0, done.stderr
    assert "note: The conditions did not run the same cells" in done.stdout
    assert "over the 160 cells both ran" in done.stdout
    balanced = board[board["provider"].isin(HARNESSES[:2])]
    balanced.to_csv(source, index=False)
    done = evalkit_cli("import", source, "--format", "csv", "--run-id", "c",
                       "--runs-dir", tmp_path / "runs")
    assert done.returncode == 0 and "did not run the same cells" not in done.stdout
