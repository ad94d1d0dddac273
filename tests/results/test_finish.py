"""Which failures did not finish: the causes read from each harness's fields, and the tables.

Rows are built the way each importer and the runner write them (status, error_class, the
``limit`` and ``incomplete`` score rows); the end-to-end imports are in
tests/interop/test_import_unfinished.py.
"""

from __future__ import annotations

import pandas as pd
import pytest

from evalkit.results import (
    cause_changes,
    cause_outcome,
    describe_causes,
    describe_changes,
    failure_causes,
    item_reasons,
    primary_causes,
)


def _rows(*specs: tuple[str, str, str | None, bool]) -> pd.DataFrame:
    """``(item_key, status, error_class, passed)`` rows of one condition."""
    return pd.DataFrame(
        {
            "item_key": [s[0] for s in specs],
            "condition": "none",
            "status": [s[1] for s in specs],
            "error_class": [s[2] for s in specs],
            "error_message": ["it stopped"] * len(specs),
            "passed": [s[3] for s in specs],
        }
    )


@pytest.mark.parametrize(
    ("status", "error_class", "cause"),
    [
        ("timeout", "timeout", "timeout"),  # evalkit's own provider deadline
        ("timeout", "time_limit", "timeout"),  # Inspect's time limit
        ("timeout", "AgentTimeoutError", "timeout"),  # Harbor
        ("timeout", "agent_timeout", "timeout"),  # Terminal-Bench
        ("error", "httpx.ReadTimeout", "timeout"),
        ("error", "CancelledError", "cancelled"),
        ("error", "operator_limit", "cancelled"),
        ("error", "OOMKilled", "sandbox killed"),
        ("error", "sandbox_killed", "sandbox killed"),
        ("error", "message_limit", "message limit"),
        ("error", "RuntimeError", "error: RuntimeError"),
        # an infrastructure failure that only contains the word is an error, not a timeout
        ("error", "EnvironmentStartTimeoutError", "error: EnvironmentStartTimeoutError"),
        # graded, but the agent ran out of time or context: it did not finish either
        ("ok", "AgentTimeoutError", "timeout"),
        ("ok", "ContextWindowExceededError", "context limit"),
    ],
)
def test_each_harness_field_names_what_happened(
    status: str, error_class: str, cause: str
) -> None:
    rows = _rows(("k", status, error_class, False))
    assert item_reasons(rows, None)["cause"].tolist() == [cause]
    assert primary_causes(rows, None).tolist() == [cause]
    assert cause_outcome(cause) == "did not finish"


def test_a_graded_failure_whose_class_names_no_limit_answered_wrong() -> None:
    rows = _rows(("k", "ok", "NonZeroAgentExitCodeError", False))
    scores = pd.DataFrame({"item_key": ["k"], "component": ["verifier"], "value": [0.0],
                           "max_value": [1.0], "passed": [False], "detail": ["reward 0.00"]})
    assert item_reasons(rows, scores)["cause"].tolist() == ["verifier failed"]
    assert cause_outcome("verifier failed") == "answered wrong"


@pytest.mark.parametrize(
    ("component", "detail", "cause"),
    [
        ("limit", "the sample hit its token limit (1000) before it finished", "token limit"),
        ("limit", "the sample hit its operator limit (1) before it finished", "cancelled"),
        ("incomplete", "agent_scorer: INCOMPLETE: HTTP timeout after 120 s", "timeout"),
        ("incomplete", "agent_scorer marked its score incomplete", "incomplete"),
    ],
)
def test_an_unfinished_score_row_comes_before_the_scorers_verdict(
    component: str, detail: str, cause: str
) -> None:
    rows = _rows(("k", "ok", None, False))
    scores = pd.DataFrame({
        "item_key": ["k", "k"], "component": ["agent_scorer", component], "value": [0.0, None],
        "max_value": [1.0, None], "passed": [False, False], "detail": ["target: 42", detail]})
    reasons = item_reasons(rows, scores)
    assert reasons["cause"].tolist() == primary_causes(rows, scores).tolist() == [cause]
    assert reasons["reason"][0] == f"{cause}: {detail} · agent_scorer failed: target: 42"


def test_a_passing_item_with_an_incomplete_row_is_still_a_pass() -> None:
    rows = _rows(("k", "ok", None, True))
    scores = pd.DataFrame({
        "item_key": ["k", "k"], "component": ["agent_scorer", "incomplete"],
        "value": [1.0, None], "max_value": [1.0, None], "passed": [True, False],
        "detail": ["fine", "agent_scorer: INCOMPLETE"]})
    assert item_reasons(rows, scores)["cause"].tolist() == ["passed"]
    assert failure_causes(rows, scores).empty


def test_the_cause_table_counts_unfinished_items_apart_and_first() -> None:
    rows = _rows(("a", "timeout", "timeout", False), ("b", "timeout", "timeout", False),
                 ("c", "error", "CancelledError", False), ("d", "ok", None, False),
                 ("e", "ok", None, False), ("f", "ok", None, False), ("g", "ok", None, True))
    scores = pd.DataFrame({
        "item_key": ["d", "e", "f"], "component": ["verifier"] * 3, "value": [0.0] * 3,
        "max_value": [1.0] * 3, "passed": [False] * 3, "detail": ["exit 1"] * 3})
    table = failure_causes(rows, scores)
    assert table[["outcome", "cause", "failures"]].values.tolist() == [
        ["did not finish", "timeout", 2], ["did not finish", "cancelled", 1],
        ["answered wrong", "verifier failed", 3]]
    assert table["share"].sum() == pytest.approx(1.0)
    assert describe_causes(table) == [
        "none: 6 failures: did not finish 3 (2 timeout, 1 cancelled); answered wrong 3 "
        "(3 verifier failed)"]


def test_the_change_table_sets_both_sides_side_by_side() -> None:
    base = pd.DataFrame({"outcome": ["did not finish", "answered wrong"],
                         "cause": ["timeout", "missing expected pattern"], "failures": [20, 3]})
    cand = pd.DataFrame({"outcome": ["did not finish", "did not finish", "answered wrong"],
                         "cause": ["timeout", "error: RuntimeError", "verifier failed"],
                         "failures": [8, 1, 2]})
    changes = cause_changes(base, cand)
    assert changes.values.tolist() == [
        ["did not finish", "timeout", 20, 8, -12],
        ["did not finish", "error: RuntimeError", 0, 1, 1],
        ["answered wrong", "missing expected pattern", 3, 0, -3],
        ["answered wrong", "verifier failed", 0, 2, 2],
    ]
    assert describe_changes(changes) == [
        "did not finish: 20 -> 9 (-11) of which timeout 20 -> 8 (-12), error: RuntimeError "
        "0 -> 1 (+1)",
        "answered wrong: 3 -> 2 (-1) of which missing expected pattern 3 -> 0 (-3), verifier "
        "failed 0 -> 2 (+2)",
    ]


def test_no_failure_on_either_side_is_an_empty_change_table() -> None:
    empty = failure_causes(_rows(("k", "ok", None, True)), None)
    assert cause_changes(empty, empty).empty
    assert describe_changes(cause_changes(empty, empty)) == [
        "did not finish: 0 -> 0", "answered wrong: 0 -> 0"]
