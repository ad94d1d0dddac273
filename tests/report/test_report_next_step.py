"""The compare report plans the same next step as ``evalkit compare`` and shows it."""

from __future__ import annotations

import html

from evalkit.analysis import NextStep, compare
from evalkit.report import compare_view
from tests.report.conftest import AFTER, BEFORE


def test_the_report_view_plans_what_compare_plans() -> None:
    view = compare_view(AFTER, BEFORE, n_resamples=2000)
    result = view.comparison
    assert result.verdict == "inconclusive"
    same = compare(BEFORE, AFTER, n_resamples=2000)
    assert result.next_step is not None and result.next_step == same.next_step
    assert html.escape(NextStep(**result.next_step).text()) in view.verdict().html
    settle = view.next_step()
    assert settle is not None
    shown = settle.html
    assert f"power {result.next_step['power']:.0%}, from these runs" in shown
    assert "cases to tell a" in shown and "from these runs&#x27; variances" in shown


def test_a_settled_verdict_has_no_next_step() -> None:
    view = compare_view(AFTER, AFTER, n_resamples=500)
    assert view.comparison.next_step is None and view.next_step() is None
