"""One run as a notebook reads it: :class:`RunOverview`, its views, figures and rich display.

``run_overview(run)`` reads a run once; its methods and properties are what the run report's
cells show (pass rates by any grouping and their figure, the errors, the outcome counts, the
slowest and costliest items, the trigger confusion matrix, the failing items, the judge's
calibration and the judged statements). The statistics come from :mod:`evalkit.stats` and
:mod:`evalkit.analysis`; what is here selects and counts rows.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from evalkit._settings import CONFIDENCE, RUNS_DIR
from evalkit.analysis import JudgeCalibration, JudgedRun, check_judge_calibration
from evalkit.report._browser import item_browser
from evalkit.report._judge import expectation_pass_rates
from evalkit.report._matched_view import matched_rate_section
from evalkit.report._plots import figure_html, rate_plot
from evalkit.report._reasons_view import run_scores
from evalkit.report._style import styled
from evalkit.report._tables import (
    Fragment,
    banner,
    interval,
    interval_table,
    pct,
    seconds,
    stat_cards,
    usd,
)
from evalkit.report._views import (
    errors_by_class,
    failing_items,
    run_facts,
    top_items,
    trigger_confusion,
)
from evalkit.results import judged_statements, load_manifest, read_run, resolve_run_dir
from evalkit.stats import pass_rates

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass(frozen=True)
class RunOverview:
    """A run as a notebook shows it: pass rates with intervals, a plot and the item browser.

    Its display is a banner, the pass rates by condition with their figure and the item
    browser. Its methods and properties are the views of the run report:
    :meth:`summary` and :meth:`facts` (headline cards, key facts), :meth:`pass_rates` by any
    columns and :meth:`plot_pass_rates`, :meth:`matched_rates`, :attr:`errors`,
    :meth:`outcomes`, :meth:`top_items`, :attr:`trigger_confusion`, :meth:`failing_items`,
    :attr:`scores`, :attr:`judge_calibration` and :meth:`expectation_pass_rates`.

    Attributes:
        run_dir: The run directory.
        rows: Its result rows (:func:`evalkit.read_run`).
        manifest: Its manifest (empty for imported tables without one).
        confidence: Confidence level of the pass-rate intervals.
        max_items: Most items in the browser.
    """

    run_dir: Path
    rows: pd.DataFrame
    manifest: dict[str, Any] = field(default_factory=dict)
    confidence: float = CONFIDENCE.default
    max_items: int = 200
    _rates: dict[tuple[str, ...], pd.DataFrame] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def pass_rates(self, by: Sequence[str] = ("condition",)) -> pd.DataFrame:
        """Pass rates per group with their intervals, cases as clusters (computed once).

        Args:
            by: Grouping columns (``[]``: the whole run).

        Returns:
            :func:`evalkit.stats.pass_rates` of the rows at :attr:`confidence`.
        """
        key = tuple(by)
        if key not in self._rates:
            self._rates[key] = pass_rates(self.rows, by=list(key), confidence=self.confidence)
        return self._rates[key]

    def plot_pass_rates(
        self,
        by: Sequence[str] = ("condition",),
        *,
        title: str = "Pass rate by condition",
        max_facets: int = 8,
    ) -> Figure:
        """Bars of :meth:`pass_rates` by ``by`` (ending in ``condition``), a panel per the rest.

        Args:
            by: Grouping columns, ``condition`` last (``["provider", "condition"]``: one panel
                per provider).
            title: Figure title.
            max_facets: Most panels drawn.

        Returns:
            The figure.
        """
        facets = list(by)[:-1]
        facet: str | list[str] | None = (
            None if not facets else facets[0] if len(facets) == 1 else facets
        )
        return rate_plot(self.pass_rates(by), facet=facet, title=title, max_facets=max_facets)

    def summary(self) -> Fragment:
        """Headline cards: items, cases, pass rate with its interval, failures, cost, time."""
        rows = self.rows
        status = rows["status"].astype(str)
        failed = int((status != "ok").sum())
        overall = self.pass_rates([])
        rate = overall.iloc[0] if len(overall) else None
        cards = [
            ("work items", f"{len(rows):,}", f"{rows['case_id'].nunique():,} cases"),
            (
                "pass rate",
                pct(rate["estimate"]) if rate is not None else "n/a",
                (
                    f"{rate['confidence']:.0%} CI {pct(rate['ci_low'])} to "
                    f"{pct(rate['ci_high'])}"
                    if rate is not None
                    else ""
                ),
            ),
            (
                "errors and timeouts",
                f"{failed:,}",
                f"{int((status == 'timeout').sum()):,} timeouts"
                if failed
                else "every item finished",
            ),
        ]
        if "cost_usd" in rows and rows["cost_usd"].notna().any():
            simulated = "provider" in rows and bool(
                (rows["provider"].astype(str) == "simulated").all()
            )
            cards.append((
                "total cost", usd(rows["cost_usd"].sum()),
                "simulated provider: not billed" if simulated else "sum over items",
            ))
        if "latency_s" in rows and rows["latency_s"].notna().any():
            cards.append(
                ("median latency", seconds(rows["latency_s"].median()), "per item (wall clock)")
            )
        return stat_cards(cards)

    def facts(self) -> Fragment:
        """Key facts: id, suite, dataset version, dates, matrix shape and outcomes."""
        return run_facts(self.rows, self.manifest)

    def matched_rates(self) -> Fragment:
        """The by-condition rates over the cases every condition ran, when some miss one."""
        return matched_rate_section(self.rows, confidence=self.confidence)

    @property
    def errors(self) -> pd.DataFrame:
        """Errors and timeouts by status and error class, most frequent first.

        Columns ``status, error_class, n, share, cases, example``; empty when every item is
        ``ok``.
        """
        return errors_by_class(self.rows)

    def outcomes(self, by: str = "condition") -> pd.DataFrame:
        """Counts of each status per value of ``by``, then ``total`` (a contingency table)."""
        table = pd.crosstab(self.rows[by].astype(str), self.rows["status"].astype(str))
        table["total"] = table.sum(axis=1)
        table.columns.name = None
        return table.reset_index()

    def top_items(self, column: str, n: int = 10) -> pd.DataFrame:
        """The ``n`` items with the largest ``column`` (``latency_s``, ``cost_usd``)."""
        return top_items(self.rows, column, n)

    @property
    def trigger_confusion(self) -> pd.DataFrame:
        """Expected skill x skill the agent loaded, counted over the ``self-load`` items."""
        return trigger_confusion(self.rows)

    def failing_items(self, n: int = 6) -> pd.DataFrame:
        """Up to ``n`` failing items, one per case first (wrong answers before errors)."""
        return failing_items(self.rows, n)

    @functools.cached_property
    def scores(self) -> pd.DataFrame | None:
        """The run's score rows (None for a run without them)."""
        return run_scores(self.run_dir)

    @functools.cached_property
    def judge_calibration(self) -> JudgeCalibration | None:
        """Whether the run's judges are calibrated against human labels (None: no judge)."""
        return check_judge_calibration([JudgedRun(self.run_dir.name, self.rows, self.run_dir)])

    def expectation_pass_rates(self) -> pd.DataFrame:
        """The pass rate of each judged statement per condition (cases as clusters)."""
        return expectation_pass_rates(judged_statements(self.run_dir), confidence=self.confidence)

    def _repr_html_(self) -> str:
        rows = self.rows
        overall = self.pass_rates([])
        rates = self.pass_rates(["condition"])
        first = overall.iloc[0]
        status = rows["status"].astype(str).value_counts()
        head = banner(
            "inconclusive",
            f"run {self.run_dir.name}",
            f"pass rate {interval(first['estimate'], first['ci_low'], first['ci_high'])} over "
            f"{len(rows):,} items of {rows['case_id'].nunique():,} cases",
            [", ".join(f"{k} {v:,}" for k, v in status.items())],
        )
        table = interval_table(rates, ["condition"], header="pass rate", caption="By condition")
        figure = figure_html(
            self.plot_pass_rates(),
            "pass-rate-condition",
            "Pass rate by condition, with confidence intervals (cases as clusters).",
        )
        browser = item_browser(
            self.run_dir, rows, max_items=self.max_items, browser_id=self.run_dir.name
        )
        return styled((head + table + self.matched_rates() + figure + browser).html)

    def __repr__(self) -> str:
        return f"<RunOverview {self.run_dir.name}: {len(self.rows)} items>"


def run_overview(
    run: str | os.PathLike[str],
    *,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    confidence: float = CONFIDENCE.default,
    max_items: int = 200,
) -> RunOverview:
    """Load a run for a notebook: ``.rows`` is :func:`evalkit.read_run`, the display is rich.

    Args:
        run: Run directory or id.
        runs_dir: Where run ids are looked up.
        confidence: Confidence level of the pass-rate intervals.
        max_items: Most items in the item browser.

    Returns:
        The :class:`RunOverview`.
    """
    run_dir = resolve_run_dir(run, runs_dir)
    manifest = load_manifest(run_dir)
    recorded = manifest.to_json() if manifest is not None else {}
    return RunOverview(run_dir, read_run(run_dir), recorded, confidence, max_items)
