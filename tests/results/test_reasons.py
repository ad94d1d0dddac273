"""Reasons of items, read from a run's records: causes, their order, the failure summaries."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.results import (
    NO_REASONS,
    describe_causes,
    failure_causes,
    item_reasons,
    read_scores,
    reason_table,
)


def _score(key: str, component: str, passed: bool, detail: str = "", value: float = 0.0,
           max_value: float = 1.0, expectation: str | None = None) -> dict[str, object]:
    return {"item_key": key, "component": component, "value": value, "max_value": max_value,
            "passed": passed, "detail": detail, "expectation": expectation}


def _row(key: str, *, passed: bool, condition: str = "preloaded", status: str = "ok",
         expected: str = "safe-shell", inferred: str = "none", loaded: bool = False,
         error_class: str | None = None, message: str | None = None,
         score: float = 0.0) -> dict[str, object]:
    return {"item_key": key, "case_id": key, "condition": condition, "passed": passed,
            "status": status, "expected_skill": expected, "inferred_skill": inferred,
            "skill_loaded": loaded, "error_class": error_class, "error_message": message,
            "score": score}


def _reason(rows: list[dict[str, object]], scores: list[dict[str, object]], key: str) -> pd.Series:
    out = item_reasons(pd.DataFrame(rows), pd.DataFrame(scores) if scores else None)
    return out.set_index("item_key").loc[key]


def test_an_error_or_a_timeout_is_its_own_cause_with_class_and_message() -> None:
    rows = [
        _row("e", passed=False, status="error", error_class="RateLimited", message="429 slow"),
        _row("t", passed=False, status="timeout", error_class="ProviderTimeout",
             message="after 60 s"),
    ]
    out = item_reasons(pd.DataFrame(rows), None).set_index("item_key")
    assert out.loc["e", "cause"] == "error: RateLimited"
    assert out.loc["e", "reason"] == "error: RateLimited: 429 slow"
    assert out.loc["t", "cause"] == "timeout"
    assert "after 60 s" in out.loc["t", "reason"]
    assert out["reasons_recorded"].all()


def test_a_gate_the_run_recorded_explains_before_a_heavier_component() -> None:
    rows = [_row("k", passed=False)]
    scores = [
        _score("k", "expected_patterns", False, "missing: `8080`", 1, 2),
        _score("k", "verifier", False, "config/app.json:server.port == 8080: found 3000"),
        _score("k", "anti_patterns", True, "", 4, 4),
        _score("k", "total", False, "gate failed: verifier", 0.3),
    ]
    got = _reason(rows, scores, "k")
    assert got["cause"] == "verifier failed"
    assert got["reason"] == (
        "verifier failed: config/app.json:server.port == 8080: found 3000"
        " · missing expected pattern: `8080`"
    )


def test_skill_not_loaded_is_a_cause_only_where_loading_was_up_to_the_agent() -> None:
    rows = [
        # self-load: one item loaded the skill, so loading is observable in this condition
        _row("s1", passed=True, condition="self-load", inferred="safe-shell", loaded=True),
        _row("s2", passed=False, condition="self-load"),
        # preloaded: the skill is injected, nobody "loads" it: not a routing failure
        _row("p1", passed=False, condition="preloaded"),
    ]
    scores = [
        _score("s2", "expected_patterns", False, "missing: `trap`", 0, 1),
        _score("p1", "expected_patterns", False, "missing: `trap`", 0, 1),
    ]
    out = item_reasons(pd.DataFrame(rows), pd.DataFrame(scores)).set_index("item_key")
    assert out.loc["s2", "cause"] == "skill not loaded"
    assert out.loc["s2", "reason"].startswith(
        "skill not loaded: expected safe-shell, inferred none"
    )
    assert "missing expected pattern: `trap`" in out.loc["s2", "reason"]
    assert out.loc["p1", "cause"] == "missing expected pattern"
    assert "skill" not in out.loc["p1", "reason"]


def test_a_pass_says_what_it_passed_on_and_a_bare_import_says_nothing_was_recorded() -> None:
    rows = [_row("ok", passed=True), _row("bare", passed=False)]
    scores = [_score("ok", "expected_patterns", True, "", 3, 3),
              _score("ok", "total", True, "", 1.0)]
    out = item_reasons(pd.DataFrame(rows), pd.DataFrame(scores)).set_index("item_key")
    assert out.loc["ok", "reason"] == "passed on expected_patterns 3/3"
    assert out.loc["ok", "cause"] == "passed"
    assert out.loc["bare", "reason"] == NO_REASONS
    assert not out.loc["bare", "reasons_recorded"]


def test_a_failure_without_a_failing_component_was_below_the_threshold() -> None:
    rows = [_row("k", passed=False, score=0.4)]
    scores = [_score("k", "expected_patterns", True, "", 2, 2),
              _score("k", "total", False, "", 0.4)]
    got = _reason(rows, scores, "k")
    assert got["cause"] == "score below the pass threshold"
    assert got["reason"] == "score below the pass threshold: score 0.40"


def test_judged_statements_and_artifacts_read_as_one_part_per_cause() -> None:
    rows = [_row("k", passed=False)]
    scores = [
        _score("k", "expectation:1", False, "the answer never quotes the deadline",
               expectation="States the quote deadline"),
        _score("k", "artifact:proof/a.png", False, "missing: missing"),
        _score("k", "artifact:proof/b.json", False, "invalid: not JSON"),
        _score("k", "artifacts", False, "proof/a.png missing; proof/b.json invalid"),
        _score("k", "total", False, "gate failed: artifacts"),
    ]
    got = _reason(rows, scores, "k")
    assert got["cause"] == "evidence missing or invalid"
    assert got["reason"] == (
        "evidence missing or invalid: proof/a.png missing; proof/b.json invalid: not JSON"
        " · judged expectation failed: 'States the quote deadline': the answer never quotes"
        " the deadline"
    )


def test_details_are_redacted_and_clipped() -> None:
    rows = [_row("k", passed=False)]
    secret = "sk-proj-" + "A1b2C3d4" * 4
    scores = [_score("k", "verifier", False, f"exit 1: echo {secret} " + "x" * 2000)]
    table = reason_table(pd.DataFrame(rows), pd.DataFrame(scores))
    assert secret not in table["detail"].iloc[0]
    assert "[REDACTED]" in table["detail"].iloc[0]
    assert len(table["detail"].iloc[0]) <= 400


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, pd.DataFrame]:
    runs = tmp_path_factory.mktemp("runs")
    root = Path(__file__).resolve().parents[2]
    evalkit.run(root / "cases" / "demo", evalkit.RunConfig(
        trials=2, runs_dir=runs, run_id="demo", concurrency=1, backend="threading"))
    return evalkit.read_run("demo", runs), read_scores("demo", runs)


@pytest.mark.slow
def test_every_failure_of_a_real_run_has_a_recorded_cause(
    demo_run: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    rows, scores = demo_run
    reasons = item_reasons(rows, scores)
    failing = reasons[~rows["passed"].to_numpy()]
    assert len(failing) > 0
    assert failing["reasons_recorded"].all()
    assert not failing["cause"].isin([NO_REASONS, "passed"]).any()
    causes = set(failing["cause"])
    assert {"missing expected pattern", "verifier failed", "skill not loaded"} <= causes
    # each failing item counts once: a condition's causes add up to its failures
    summary = failure_causes(rows, scores, by=["condition"])
    per_condition = summary.groupby("condition")["failures"].sum()
    expected = (~rows["passed"]).groupby(rows["condition"]).sum()
    assert per_condition.to_dict() == expected[expected > 0].to_dict()
    assert summary.groupby("condition")["share"].sum().round(12).eq(1.0).all()
    lines = describe_causes(summary, by=["condition"])
    assert len(lines) == summary["condition"].nunique()
    self_load = next(line for line in lines if line.startswith("self-load: "))
    assert f"{per_condition['self-load']} failures: " in self_load


@pytest.mark.slow
def test_the_fast_primary_causes_equal_the_reason_lines_causes(
    demo_run: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    from evalkit.results import primary_causes

    rows, scores = demo_run
    fast = primary_causes(rows, scores).tolist()
    assert fast == item_reasons(rows, scores)["cause"].tolist()
    assert primary_causes(rows, None).tolist() == item_reasons(rows, None)["cause"].tolist()
