"""A run's judged statements: one row per expectation or rubric line a judge graded."""

from __future__ import annotations

import os

import pandas as pd

from evalkit.results._io import read_run, read_scores

#: Score components a judge grades (``expectation:N``, ``rubric:N``).
JUDGED_COMPONENT = r"^(expectation|rubric):\d+$"
_ITEM_COLUMNS = ("item_key", "case_id", "condition", "provider", "trial", "judge_provider",
                 "judge_model", "judge_prompt_hash")


def judged_statements(run: str | os.PathLike[str]) -> pd.DataFrame:
    """One row per judged statement of a run: its item's columns and the verdict ``passed``.

    Returns:
        Columns ``item_key, component, expectation, passed, detail`` and the item's
        ``case_id, condition, provider, trial, judge_provider, judge_model,
        judge_prompt_hash`` (empty when the run has no judged statement).
    """
    scores = read_scores(run)
    judged = scores[scores["component"].str.match(JUDGED_COMPONENT)]
    rows = read_run(run)
    items = rows[[c for c in _ITEM_COLUMNS if c in rows.columns]]
    return judged.merge(items, on="item_key").reset_index(drop=True)
