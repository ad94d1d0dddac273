"""Check that a suite's reference answers and solutions pass their own scorers."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from evalkit.cases import Case, Suite, find_affirmed
from evalkit.providers import AgentResponse, Event
from evalkit.sandbox import copy_fixture, run_command
from evalkit.scorers._reference_cache import ReferenceCache, reference_check_key
from evalkit.scorers._score import is_routing_case, score_item
from evalkit.scorers._verifiers import run_check


def _reference_response(case: Case) -> AgentResponse:
    events = [Event("user", case.prompt)]
    for command in case.solution:
        events.append(Event("tool_call", command, name="bash"))
    if case.reference:
        events.append(Event("assistant", case.reference))
    return AgentResponse(events=tuple(events))


def check_case(suite: Suite, case: Case, *, cache: ReferenceCache | None = None) -> list[str]:
    """Problems with one case's reference: it must pass, and its fixture must not.

    The reference must also satisfy the known truth (``truth`` regex) of each expectation.
    Only deterministic scorers are held to the reference: a case graded by the judge alone
    (judged expectations, no patterns or verifier) has nothing here to check it against.

    Args:
        suite: The suite (for fixtures, thresholds and suite-wide anti-patterns).
        case: The case.
        cache: Passed checks of cases that run commands (setup, solution or verifier) are
            looked up and stored here; None checks afresh and stores nothing.

    Returns:
        Human-readable problems (empty when the case is sound).
    """
    problems: list[str] = _truth_problems(case)
    if is_routing_case(case):  # routing decides it; no reference answer can show a skill load
        return problems
    if case.lane == "prompt" and not case.reference:
        return problems
    runs_commands = bool(case.setup or case.solution or case.verifier)
    key = reference_check_key(suite, case) if cache is not None and runs_commands else None
    if cache is not None and key is not None and cache.passed(key):
        return problems
    started = time.monotonic()
    scored = _scored_problems(suite, case)
    if cache is not None and key is not None and not scored:
        cache.record_pass(key, case.id, time.monotonic() - started)
    return problems + scored


def _scored_problems(suite: Suite, case: Case) -> list[str]:
    """Run the case's commands on its fixture and score its reference (see :func:`check_case`)."""
    problems: list[str] = []
    workspace = Path(tempfile.mkdtemp(prefix="evalkit-check-"))
    try:
        if case.fixture:
            copy_fixture(suite.root / case.fixture, workspace)
        for command in case.setup:
            run_command(command, workspace, case.budgets.timeout_s)
        if case.verifier and all([run_check(c, workspace).passed for c in case.verifier]):
            problems.append(f"{case.id}: the verifier already passes before the agent acts")
        for command in case.solution:
            run_command(command, workspace, case.budgets.timeout_s)
        result = score_item(
            case,
            _reference_response(case),
            workspace,
            pass_threshold=suite.spec.defaults.pass_threshold,
            suite_anti_patterns=suite.spec.anti_patterns,
        )
        weighted = [c for c in result.components if c.component != "skill_trigger"]
        judged_only = case.is_judged and not weighted  # no scorer to pass: the judge decides
        if not result.passed and not judged_only:
            failed = [f"{c.component} ({c.detail})" for c in result.components if not c.passed]
            failed = [f for f in failed if not f.startswith("skill_trigger")]
            problems.append(
                f"{case.id}: the reference scores {result.score:.2f} and fails: "
                + "; ".join(failed or result.gate_failures)
            )
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return problems


def _truth_problems(case: Case) -> list[str]:
    """Expectations whose known-truth regex does not hold on the case's reference."""
    if not case.reference and not case.solution:
        return []
    text = _reference_response(case).scored_text()
    return [
        f"{case.id}: expectations[{i}] ({e.text!r}): its truth regex does not hold on the "
        "reference; fix the regex or the reference"
        for i, e in enumerate(case.judged_expectations)
        if e.truth and not find_affirmed(e.truth, text)
    ]


def check_references(suite: Suite) -> list[str]:
    """Check every case of a suite (see :func:`check_case`).

    Returns:
        All problems found, in case order.
    """
    return [problem for case in suite.cases for problem in check_case(suite, case)]
