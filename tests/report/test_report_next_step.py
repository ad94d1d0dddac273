"""The compare report plans the same next step as ``evalkit compare`` and shows it."""

from __future__ import annotations

from evalkit.analysis import NextStep, compare
from evalkit.report import compare_view, key_values, next_step_facts, verdict_lines
from tests.report.conftest import AFTER, BEFORE


def test_the_report_view_plans_what_compare_plans() -> None:
    view = compare_view(AFTER, BEFORE, n_resamples=2000)
    result = view.comparison
    assert result.verdict == "inconclusive"
    same = compare(BEFORE, AFTER, n_resamples=2000)
    assert result.next_step is not None and result.next_step == same.next_step
    _, details = verdict_lines(view)
    assert NextStep(**result.next_step).text() in details
    facts = next_step_facts(result)
    assert facts is not None and facts["command"] == result.next_step["command"]
    shown = key_values(facts).html
    assert "cases to tell a" in shown and "from these runs&#x27; variances" in shown
