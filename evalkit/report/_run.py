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

from evalkit._settings import CONFIDENCE, RUNS_DIR, SEED
from evalkit._version import __version__
from evalkit.analysis import (
    LIFT_METRICS,
    TRIGGER_METRICS,
    JudgeCalibration,
    JudgedRun,
    LiftResult,
    check_judge_calibration,
)
from evalkit.errors import InputError
from evalkit.report._browser import BROWSE_LIMIT, item_browser
from evalkit.report._bundles import evidence_bundles
from evalkit.report._judge import calibration_note, expectation_pass_rates
from evalkit.report._matched_view import matched_rate_section
from evalkit.report._plots import figure_html, rate_plot
from evalkit.report._reasons_view import failure_summary, run_scores
from evalkit.report._style import styled
from evalkit.report._tables import (
    Fragment,
    banner,
    html_table,
    interval,
    interval_table,
    key_values,
    pct,
    seconds,
    stat_cards,
    usd,
)
from evalkit.report._transcripts import excerpts
from evalkit.report._views import metrics_table, missing_cases, run_facts
from evalkit.results import judged_statements, load_manifest, read_run, resolve_run_dir
from evalkit.stats import pass_rates

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The columns of :meth:`RunOverview.top_items`: the item's, then what it took.
_ITEM_COLUMNS = ("case_id", "lane", "condition", "provider", "trial", "status")
_ITEM_COSTS = ("latency_s", "cost_usd", "input_tokens", "output_tokens")

#: How a grouping column is named in a figure's caption.
_FACETS = {"lane": "lane (prompt, execution, evidence)"}


@dataclass(frozen=True)
class RunOverview:
    """A run as a notebook shows it: pass rates with intervals, a plot and the item browser.

    Its display is a banner, the pass rates by condition with their figure and the item
    browser. Its methods and properties are the views of the run report:
    :meth:`summary` and :meth:`facts` (headline cards, key facts), :meth:`pass_rates` by any
    columns and :meth:`plot_pass_rates`, :meth:`matched_rates`, :attr:`errors`,
    :meth:`outcomes`, :meth:`top_items`, :attr:`trigger_confusion`, :meth:`failing_items`,
    :attr:`scores`, :attr:`judge_calibration` and :meth:`expectation_pass_rates`. The run
    report's sections are one method each, as escaped HTML: :meth:`rates`,
    :meth:`lift_metrics`, :meth:`routing`, :meth:`judged_expectations`, :meth:`failure_causes`,
    :meth:`errors_table`, :meth:`slowest`, :meth:`costliest`, :meth:`failing_transcripts`,
    :meth:`evidence_bundles`, :meth:`item_browser` and :meth:`about`.

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

        Columns ``status, error_class, n, share, cases, example`` (``share`` of all items);
        empty when every item is ``ok``.
        """
        rows = self.rows
        bad = rows[rows["status"].astype(str) != "ok"]
        columns = ["status", "error_class", "n", "share", "cases", "example"]
        if bad.empty:
            return pd.DataFrame(columns=columns)
        bad = bad.assign(
            error_class=bad["error_class"].fillna("unknown").astype(str),
            error_message=bad["error_message"].fillna("").astype(str),
        )
        table = bad.groupby(["status", "error_class"], sort=True).agg(
            n=("item_key", "size"), cases=("case_id", "nunique"), example=("error_message", "first")
        ).reset_index()
        table["share"] = table["n"] / len(rows)
        return table.sort_values("n", ascending=False, kind="stable")[columns].reset_index(
            drop=True)

    def outcomes(self, by: str = "condition") -> pd.DataFrame:
        """Counts of each status per value of ``by``, then ``total`` (a contingency table)."""
        table = pd.crosstab(self.rows[by].astype(str), self.rows["status"].astype(str))
        table["total"] = table.sum(axis=1)
        table.columns.name = None
        return table.reset_index()

    def top_items(self, column: str, n: int = 10) -> pd.DataFrame:
        """The ``n`` items with the largest ``column`` (``latency_s``, ``cost_usd``).

        Returns:
            The item columns plus ``latency_s, cost_usd, input_tokens, output_tokens``.

        Raises:
            InputError: The rows have no such column.
        """
        rows = self.rows
        keep = [c for c in (*_ITEM_COLUMNS, *_ITEM_COSTS) if c in rows]
        if column not in rows:
            raise InputError(f"the result table has no column {column!r} to rank items by.")
        return rows.nlargest(n, column, keep="first")[keep].reset_index(drop=True)

    @property
    def trigger_confusion(self) -> pd.DataFrame:
        """Expected skill x skill the agent loaded, counted over the ``self-load`` items.

        One row per expected skill (``expected_skill``), one count column per inferred skill,
        then ``total``; empty without ``self-load`` items.
        """
        part = self.rows[self.rows["condition"].astype(str) == "self-load"]
        if part.empty or not {"expected_skill", "inferred_skill"} <= set(part.columns):
            return pd.DataFrame(columns=["expected_skill", "total"])
        expected = part["expected_skill"].fillna("none").astype(str).rename("expected_skill")
        inferred = part["inferred_skill"].fillna("none").astype(str).rename("inferred_skill")
        table = pd.crosstab(expected, inferred)
        table["total"] = table.sum(axis=1)
        table.columns.name = None
        return table.reset_index()

    def failing_items(self, n: int = 6) -> pd.DataFrame:
        """Up to ``n`` failing items, one per case first (wrong answers before errors)."""
        failed = self.rows[~self.rows["passed"].fillna(False).astype(bool)]
        if failed.empty:
            return failed
        failed = failed.assign(_infra=(failed["status"].astype(str) != "ok"))
        failed = failed.sort_values(["_infra", "case_id", "condition", "trial"], kind="stable")
        first = failed.drop_duplicates("case_id")
        return pd.concat([first, failed.drop(first.index)]).head(n).drop(columns="_infra")

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

    def rates(self, by: Sequence[str] = ("condition",), *, max_facets: int = 8) -> Fragment:
        """The pass rates by ``by`` (ending in ``condition``): their figure, then their table.

        By condition alone, the rates over the cases every condition ran follow, when some
        case misses one (:meth:`matched_rates`).

        Args:
            by: Grouping columns, ``condition`` last (``["provider", "condition"]``: one
                panel per provider).
            max_facets: Most panels drawn.

        Returns:
            The figure (``fig-pass-rate-<first column>``) and the table
            (``rates-<first column>``).
        """
        keys = list(by)
        if keys == ["condition"]:
            caption = "Pass rate by condition, with confidence intervals (cases as clusters)."
        else:
            facets = " and ".join(_FACETS.get(key, key) for key in keys)
            caption = f"Pass rate per {facets}, with confidence intervals."
        figure = figure_html(
            self.plot_pass_rates(keys, title="Pass rate by " + " and ".join(keys),
                                 max_facets=max_facets),
            f"pass-rate-{keys[0]}",
            caption,
        )
        table = interval_table(self.pass_rates(keys), keys, header="pass rate",
                               table_id=f"rates-{keys[0]}")
        return figure + table + self.matched_rates() if keys == ["condition"] else figure + table

    def lift_metrics(self, lifted: LiftResult) -> Fragment:
        """The lift metrics of ``evalkit.lift(overview.rows)``: figure, table, missing cases."""
        return figure_html(
            lifted.plot(),
            "lift",
            "Lift metrics per provider and lane, with case-bootstrap confidence intervals.",
        ) + metrics_table(lifted.metrics, LIFT_METRICS, table_id="lift-metrics") + missing_cases(
            lifted)

    def routing(self, lifted: LiftResult | None = None) -> Fragment:
        """The trigger confusion matrix, then the trigger metrics of ``lifted`` (if given)."""
        shown = html_table(
            self.trigger_confusion,
            caption="Trigger confusion matrix (items under self-load)",
            table_id="trigger-confusion",
            empty="no self-load item in this run",
        )
        if lifted is None:
            return shown
        return shown + metrics_table(lifted.metrics, TRIGGER_METRICS, caption="Trigger metrics")

    def judged_expectations(self) -> Fragment:
        """Whether the run's judge is calibrated, and each judged statement's pass rate."""
        return calibration_note(self.judge_calibration) + interval_table(
            self.expectation_pass_rates(),
            ["expectation", "condition"], header="pass rate", table_id="expectation-pass-rates",
            empty="no judged statement in this run",
        )

    def failure_causes(self, lifted: LiftResult | None = None) -> Fragment:
        """Every failing item once under its primary cause: lines per group, bars, the counts.

        Args:
            lifted: ``evalkit.lift`` of these rows, whose counts are reused (None: counted).
        """
        return failure_summary(
            self.rows, self.scores, causes=lifted.failure_causes if lifted is not None else None,
            plot=True,
        )

    def errors_table(self) -> Fragment:
        """Errors and timeouts by status and class, then the outcomes by condition and provider."""
        return html_table(
            self.errors,
            formats={"share": pct},
            caption="By status and error class",
            table_id="errors",
            empty="No error and no timeout: every item finished.",
        ) + html_table(self.outcomes("condition"), caption="Outcomes by condition") + html_table(
            self.outcomes("provider"), caption="Outcomes by provider")

    def slowest(self, n: int = 10) -> Fragment:
        """The ``n`` slowest items (:meth:`top_items` by ``latency_s``)."""
        return self._top("latency_s", n, "slowest")

    def costliest(self, n: int = 10) -> Fragment:
        """The ``n`` most expensive items (:meth:`top_items` by ``cost_usd``)."""
        return self._top("cost_usd", n, "costliest")

    def _top(self, column: str, n: int, table_id: str) -> Fragment:
        return html_table(self.top_items(column, n),
                          formats={"latency_s": seconds, "cost_usd": usd}, table_id=table_id)

    def failing_transcripts(self, n: int = 6, max_chars: int = 1200) -> Fragment:
        """Excerpts of :meth:`failing_items`: why each failed, the prompt, the last events.

        Args:
            n: Most items shown.
            max_chars: Character budget per excerpt.
        """
        return excerpts(self.run_dir, self.failing_items(n), rows=self.rows, max_chars=max_chars,
                        empty="No failing item.")

    def evidence_bundles(self) -> Fragment:
        """What each evidence-lane item left for a reviewer, failing items first."""
        return evidence_bundles(self.run_dir, self.rows)

    def item_browser(self, max_items: int = BROWSE_LIMIT, seed: int = SEED.default) -> Fragment:
        """Every item, searchable and filterable; a click shows its reason and transcript."""
        return item_browser(self.run_dir, self.rows, max_items=max_items, seed=seed)

    def about(self, n_resamples: int, seed: int) -> Fragment:
        """How the report was made: confidence level, interval methods, evalkit's version.

        Args:
            n_resamples: Bootstrap replicates of the lift intervals.
            seed: Their seed.
        """
        return key_values({
            "confidence level": f"{self.confidence:.0%}",
            "pass-rate intervals": ", ".join(sorted(set(self.pass_rates(["condition"])["method"]))),
            "lift intervals": f"case bootstrap, {n_resamples:,} resamples, seed {seed}",
            "evalkit": __version__,
        })

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
