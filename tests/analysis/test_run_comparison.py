"""``evalkit.compare`` returns a ``RunComparison``: the statistics' result held, not patched.

The runs are the committed fixture runs (``tests/fixtures/runs``): ``before`` and ``after``
(one provider, four conditions) and ``w41``/``w42`` (two providers). Every expectation is
read off the statistics' own result (``result.stats``) or computed here from its case table.
"""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
import sys

import numpy as np
import pytest
from matplotlib.figure import Figure

import evalkit
from evalkit._display import draw
from evalkit.analysis import RunComparison
from evalkit.errors import ConfigError
from evalkit.report import compare_view
from evalkit.stats import PairedComparison, compare_tables
from tests.conftest import ROOT

RUNS = ROOT / "tests" / "fixtures" / "runs"
BEFORE, AFTER = RUNS / "before", RUNS / "after"
#: The keys of the compare JSON that only the runs can fill.
RUN_KEYS = {"metric", "judge_calibration", "failure_changes", "report_metrics",
            "ungraded_items", "ungraded_note", "next_step"}


@pytest.fixture(scope="module")
def result() -> RunComparison:
    return evalkit.compare(BEFORE, AFTER, n_resamples=500)


def test_compare_holds_the_statistics_result_and_reads_through_it(
    result: RunComparison,
) -> None:
    assert isinstance(result, RunComparison) and isinstance(result.stats, PairedComparison)
    stats = result.stats
    assert (result.verdict, result.delta, result.n_cases) == (
        stats.verdict, stats.delta, stats.n_cases)
    assert result.cases is stats.cases and result.named_cases == stats.named_cases
    assert result.scope == stats.scope and result.baseline_label == "before"
    assert {"verdict", "cases", "case_table", "failure_changes"} <= set(dir(result))
    with pytest.raises(AttributeError, match="no_such_figure"):
        _ = result.no_such_figure


def test_the_statistics_result_has_no_run_level_fields() -> None:
    fields = set(PairedComparison.__dataclass_fields__)
    assert not fields & (RUN_KEYS - {"metric"} | {"case_reasons"})


def test_to_dict_fills_the_run_keys_in_place(result: RunComparison) -> None:
    out, plain = result.to_dict(), result.stats.to_dict()
    assert list(out) == list(plain)  # the same keys in the same order
    assert {k for k in out if out[k] != plain[k]} <= RUN_KEYS | {"cases"}
    assert (plain["next_step"], plain["judge_calibration"], plain["ungraded_items"]) == (
        None, None, 0)
    assert out["next_step"] == result.next_step and out["next_step"] is not None
    assert out["failure_changes"] == list(result.failure_changes or ())
    for case, stat_case, reasons in zip(out["cases"], plain["cases"], result.case_reasons or (),
                                        strict=True):
        assert case == stat_case | {"reasons": reasons}
        assert list(case)[-1] == "reasons"
    json.dumps(out)  # plain values only


def test_it_copies_and_pickles(result: RunComparison) -> None:
    for other in (copy.copy(result), pickle.loads(pickle.dumps(result))):
        assert other.to_dict() == result.to_dict()


def test_the_case_table_says_why_each_row_has_its_verdict(result: RunComparison) -> None:
    table = result.case_table()
    assert list(table.columns) == [*result.stats.cases.columns, "decided_by"]
    assert table["decided_by"].tolist() == result.stats.case_decisions().tolist()


def test_the_condition_table_is_one_row_per_condition(result: RunComparison) -> None:
    table = result.condition_table()
    parts = dict(result.stats.by_condition)
    assert table["condition"].tolist() == list(parts) and len(parts) == 4
    for row in table.to_dict("records"):
        part = parts[row["condition"]]
        assert (row["verdict"], row["n_cases"]) == (part.verdict, part.n_cases)
        assert row["estimate"] == pytest.approx(part.delta.estimate)
    within = evalkit.compare(BEFORE, conditions=("none", "preloaded"), n_resamples=200)
    assert within.condition_table().empty


def test_the_wins_table_counts_each_row_by_the_sign_of_its_change(
    result: RunComparison,
) -> None:
    table = result.wins_table().set_index("condition")
    cases = result.stats.cases
    for condition, rows in cases.groupby("condition"):
        change = rows["estimate"].to_numpy(float)
        assert table.loc[condition, "wins"] == int(np.sum(change > 0))
        assert table.loc[condition, "losses"] == int(np.sum(change < 0))
        assert table.loc[condition, "cases"] == len(rows)
    assert table["cases"].sum() == len(cases)


def test_plot_forest_draws_one_row_per_case_up_to_max_cases(result: RunComparison) -> None:
    figure = result.plot_forest(max_cases=7)
    assert isinstance(figure, Figure)
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert len(labels) == 7
    conditions = set(result.cases["condition"].astype(str))
    assert {label.rsplit(" · ", 1)[1] for label in labels} <= conditions  # case · condition
    assert len(result.plot_forest().axes[0].get_yticklabels()) == min(40, len(result.cases))


def test_a_figure_no_type_registered_is_refused() -> None:
    with pytest.raises(LookupError, match="no figure 'plot_forest' is registered for object"):
        draw(object(), "plot_forest")


@pytest.mark.slow
def test_plot_forest_draws_in_a_fresh_process_that_imported_only_the_analysis() -> None:
    code = (
        "import evalkit.analysis as a, sys\n"
        f"r = a.compare({str(BEFORE)!r}, conditions=('none', 'preloaded'), n_resamples=200)\n"
        "assert 'evalkit.report' not in sys.modules\n"
        "print(type(r.plot_forest()).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Figure"


def test_compare_view_shows_the_result_it_is_given(result: RunComparison) -> None:
    view = compare_view(AFTER, BEFORE, result=result)
    assert view.comparison is result
    assert (view.baseline_label, view.candidate_label) == ("before", "after")
    with pytest.raises(ConfigError, match="n_resamples"):
        compare_view(AFTER, BEFORE, result=result, n_resamples=200)


def test_a_table_comparison_displays_as_a_run_comparison_without_run_facts() -> None:
    rows = evalkit.read_run(BEFORE)
    stats = compare_tables(rows, conditions=("none", "preloaded"))
    assert stats._repr_html_() == RunComparison(stats)._repr_html_()
