"""A run that grows (``RunConfig.extend``): kept items must be items of the larger plan."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalkit
from evalkit.errors import ConfigError
from evalkit.runner import RunConfig, run
from tests.conftest import TINY


def _config(runs_dir: Path, cases: tuple[str, ...], **extra: object) -> RunConfig:
    return RunConfig(
        case_ids=cases,
        conditions=("none", "preloaded"),
        trials=2,
        runs_dir=runs_dir,
        run_id="grow",
        progress=False,
        concurrency=1,
        backend="threading",
        use_cache=False,
        **extra,
    )


def test_a_run_grows_keeping_its_finished_items(tmp_path: Path) -> None:
    first = run(TINY, _config(tmp_path, ("sum-numbers",)))
    before = evalkit.read_run(first.run_dir).set_index("item_key")
    grown = run(TINY, _config(tmp_path, ("sum-numbers", "wait-server"), resume=True, extend=True))
    after = evalkit.read_run(grown.run_dir).set_index("item_key")
    assert len(before) == 4 and len(after) == 8
    kept = after.loc[before.index]
    assert (kept["started_at"] == before["started_at"]).all()  # not run again
    assert (kept["passed"] == before["passed"]).all()


def test_without_extend_a_grown_plan_is_refused(tmp_path: Path) -> None:
    run(TINY, _config(tmp_path, ("sum-numbers",)))
    with pytest.raises(ConfigError, match="plan hash differs"):
        run(TINY, _config(tmp_path, ("sum-numbers", "wait-server"), resume=True))


def test_extend_refuses_finished_items_of_another_plan(tmp_path: Path) -> None:
    run(TINY, _config(tmp_path, ("sum-numbers",), seed=1))
    with pytest.raises(ConfigError, match="cannot grow into this plan"):
        run(
            TINY,
            _config(tmp_path, ("sum-numbers", "wait-server"), seed=2, resume=True, extend=True),
        )


def test_a_case_given_more_trials_grows_keeping_its_first_trials(tmp_path: Path) -> None:
    """case_trials: a case runs its first trial, then the rest; the first is not run again."""
    cases = ("sum-numbers", "wait-server")
    first = run(TINY, _config(tmp_path, cases, case_trials={"sum-numbers": 1, "wait-server": 1}))
    before = evalkit.read_run(first.run_dir).set_index("item_key")
    assert len(before) == 4 and set(before["trial"]) == {0}
    grown = run(
        TINY,
        _config(tmp_path, cases, case_trials={"sum-numbers": 3}, resume=True, extend=True),
    )
    after = evalkit.read_run(grown.run_dir)
    trials = after.groupby(["case_id", "condition"])["trial"].nunique().to_dict()
    assert trials == {("sum-numbers", "none"): 3, ("sum-numbers", "preloaded"): 3,
                      ("wait-server", "none"): 2, ("wait-server", "preloaded"): 2}
    kept = after.set_index("item_key").loc[before.index]
    assert (kept["started_at"] == before["started_at"]).all()  # not run again
    assert (kept["item_hash"] == before["item_hash"]).all()
    with pytest.raises(ConfigError, match="greater than 0"):
        RunConfig(case_trials={"sum-numbers": 0})
