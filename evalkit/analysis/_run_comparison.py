"""The result of :func:`evalkit.compare`: the statistics' comparison and what the runs add.

:func:`evalkit.stats.compare_tables` compares two tables; :func:`evalkit.analysis.compare`
reads two runs and learns more about them than the tables say: why each case's trials failed,
the failures by cause, the compare report's further metrics, whether the judge behind judged
expectations is calibrated, the items no judge graded yet, and what would settle an
inconclusive verdict. :class:`RunComparison` holds the statistics' result unchanged
(:attr:`RunComparison.stats`) beside those facts, each filled once where it is computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from evalkit._display import RichDisplay, draw
from evalkit.stats import CompareOptions, PairedComparison, json_ready

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass(frozen=True)
class RunComparison(RichDisplay):
    """Two runs (or two conditions of one run) compared: the verdict and what the runs add.

    Every attribute of the statistics' result is read through this one: ``result.verdict``,
    ``result.delta``, ``result.cases``, ``result.named_cases``, ... are those of
    :attr:`stats` (:class:`~evalkit.stats.PairedComparison`, where each is documented); the
    fields below are the run-level facts. :meth:`to_dict` is the ``evalkit compare --json``
    object, a notebook shows the comparison as HTML, and the tables and figure of the compare
    report are its methods (:meth:`case_table`, :meth:`condition_table`, :meth:`wins_table`,
    :meth:`plot_forest`).

    Attributes:
        stats: The statistics' comparison of the two sides' tables
            (:func:`evalkit.stats.compare_tables`).
        lane_metric: The evidence-lane metric compared (as a score), or None; :attr:`metric`
            names it.
        ungraded_items: Compared items left out because they have no outcome yet (status
            ``ungraded``: judged statements the run's judge could not grade); missing evidence,
            counted here and never taken as a pass or a failure.
        ungraded_note: One line explaining :attr:`ungraded_items` ("" when there are none).
        next_step: An inconclusive verdict: what would settle it (``cases``, ``trials``,
            ``effect``, ``command``, ...; see :class:`evalkit.analysis.NextStep`); None
            otherwise.
        case_reasons: Why each row of ``cases`` failed where it did, in its order:
            ``{"baseline": side, "candidate": side}``, a side ``{"trials", "failing",
            "causes": {cause: n}, "example"}`` or None; None when the runs were not read.
        failure_changes: Failing items of the compared rows by outcome ("did not finish",
            "answered wrong") and primary cause on each side, ``{"outcome", "cause",
            "baseline", "candidate", "change"}`` records (:func:`evalkit.results.cause_changes`).
        report_metrics: The compare report's further metrics: one ``{"name", "label",
            "value", "description"}`` per metric of the ``compare_metric`` plugin kind
            (:func:`evalkit.analysis.compare_report_metrics`).
        judge_calibration: Whether the judged expectations behind the compared rows rest on a
            calibrated judge (:func:`evalkit.analysis.check_judge_calibration`); None without
            judged rows.
        options: The options the comparison was decided with (an evidence-lane metric as
            ``"score"``), or None when they are not known.

    Examples:
        >>> import pandas as pd
        >>> from evalkit.stats import CompareOptions, compare_tables
        >>> before = pd.DataFrame({"case_id": list("abcdefghijkl"), "condition": "none",
        ...                        "passed": [False, True] * 6})
        >>> stats = compare_tables(before, before.assign(passed=True),
        ...                        options=CompareOptions(n_resamples=2000))
        >>> result = RunComparison(stats, ungraded_items=2, ungraded_note="2 left out")
        >>> result.verdict, result.wins, result.to_dict()["ungraded_items"]
        ('improved', 6, 2)
    """

    stats: PairedComparison
    lane_metric: str | None = None
    ungraded_items: int = 0
    ungraded_note: str = ""
    next_step: dict[str, Any] | None = None
    case_reasons: tuple[dict[str, Any], ...] | None = None
    failure_changes: tuple[dict[str, Any], ...] | None = None
    report_metrics: tuple[dict[str, Any], ...] = ()
    judge_calibration: dict[str, Any] | None = None
    options: CompareOptions | None = None

    def __getattr__(self, name: str) -> Any:
        """An attribute of :attr:`stats` (every figure of the comparison is one of them)."""
        if name.startswith("__") or name == "stats":  # copy and pickle probe before init
            raise AttributeError(name)
        return getattr(self.stats, name)

    def __dir__(self) -> list[str]:
        """This object's names and those of :attr:`stats` (for completion in a notebook)."""
        return sorted(set(super().__dir__()) | set(dir(self.stats)))

    @property
    def metric(self) -> str:
        """The compared metric: ``"passed"``, ``"score"`` or the evidence-lane metric's name."""
        return self.lane_metric or self.stats.metric

    def case_table(self) -> pd.DataFrame:
        """The per-case table with why each row has its verdict (``decided_by``).

        Returns:
            :attr:`~evalkit.stats.PairedComparison.cases` (one row per case in each condition
            and provider) with ``decided_by`` (:meth:`~evalkit.stats.PairedComparison.
            case_decisions`: the raw and corrected p and the rule that applied).
        """
        return self.stats.cases.assign(decided_by=self.stats.case_decisions())

    def condition_table(self) -> pd.DataFrame:
        """One row per condition of a two-run comparison, each over its own cases.

        Returns:
            ``condition, verdict, estimate, ci_low, ci_high, confidence, n_cases,
            reused_items``; empty when two conditions of one run were compared.
        """
        return condition_table(self.stats)

    def wins_table(self) -> pd.DataFrame:
        """Wins, losses and ties per condition, from the per-case table.

        Returns:
            ``condition, wins, losses, ties, cases, regressed, improved``; with several
            providers the count column is ``case x provider units`` (a case counts once per
            provider, while the verdict's wins count each case once).
        """
        return wins_table(self.stats.cases)

    def plot_forest(self, *, max_cases: int = 40, title: str | None = None) -> Figure:
        """The per-case changes with their intervals, coloured by condition, verdicts marked.

        Drawn by :func:`evalkit.report.forest_plot` (matplotlib is imported when it draws);
        dotted lines mark the practical threshold.

        Args:
            max_cases: Most rows drawn (cases with a verdict first, then the largest changes).
            title: Figure title (default: the report's).

        Returns:
            The matplotlib figure.
        """
        options: dict[str, Any] = {"max_cases": max_cases}
        if title is not None:
            options["title"] = title
        figure: Figure = draw(self, "plot_forest", **options)
        return figure

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit compare --json`` object (plain Python values only).

        Returns:
            :meth:`PairedComparison.to_dict <evalkit.stats.PairedComparison.to_dict>` with the
            run-level keys filled in place (``"metric"``, ``"judge_calibration"``,
            ``"failure_changes"``, ``"report_metrics"``, ``"ungraded_items"``,
            ``"ungraded_note"``, ``"next_step"``), and each case's ``"reasons"`` when
            :attr:`case_reasons` is set.
        """
        out = self.stats.to_dict()
        if self.case_reasons is not None:
            for case, reasons in zip(out["cases"], self.case_reasons, strict=True):
                case["reasons"] = json_ready(reasons)
        out.update(json_ready({  # keys the statistics' object holds already: order kept
            "metric": self.metric,
            "judge_calibration": self.judge_calibration,
            "failure_changes": self.failure_changes and list(self.failure_changes),
            "report_metrics": list(self.report_metrics),
            "ungraded_items": int(self.ungraded_items),
            "ungraded_note": self.ungraded_note,
            "next_step": self.next_step,
        }))
        return out


def condition_table(comparison: PairedComparison) -> pd.DataFrame:
    """:meth:`RunComparison.condition_table` of the statistics' comparison."""
    rows = [
        {
            "condition": name,
            "verdict": part.verdict,
            "estimate": part.delta.estimate,
            "ci_low": part.delta.ci_low,
            "ci_high": part.delta.ci_high,
            "confidence": part.delta.confidence,
            "n_cases": part.n_cases,
            "reused_items": part.reused_items,
        }
        for name, part in comparison.by_condition
    ]
    columns = ["condition", "verdict", "estimate", "ci_low", "ci_high", "confidence"]
    return pd.DataFrame(rows, columns=[*columns, "n_cases", "reused_items"])


def wins_table(cases: pd.DataFrame) -> pd.DataFrame:
    """:meth:`RunComparison.wins_table` of a comparison's per-case table."""
    sign = cases["estimate"].fillna(0.0)
    table = cases.assign(
        wins=(sign > 1e-12).astype(int),
        losses=(sign < -1e-12).astype(int),
        ties=(sign.abs() <= 1e-12).astype(int),
        regressed=(cases["verdict"] == "regressed").astype(int),
        improved=(cases["verdict"] == "improved").astype(int),
    )
    out = (
        table.groupby("condition", sort=True)[["wins", "losses", "ties", "regressed", "improved"]]
        .sum()
        .reset_index()
    )
    units = "provider" in cases and cases["provider"].nunique() > 1
    out.insert(4, "case x provider units" if units else "cases",
               out[["wins", "losses", "ties"]].sum(axis=1))
    return out
