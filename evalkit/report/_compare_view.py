"""A comparison as the compare report reads it: :class:`ComparisonView` and its sections.

``compare_view(run, baseline, result=evalkit.compare(...))`` puts the two sides' rows and run
directories around a :class:`~evalkit.analysis.RunComparison`; each method of the view is one
section of the compare report, as escaped HTML (:meth:`~ComparisonView.verdict`,
:meth:`~ComparisonView.named_cases`, :meth:`~ComparisonView.next_step`,
:meth:`~ComparisonView.providers`, :meth:`~ComparisonView.failure_causes`,
:meth:`~ComparisonView.regressed`, ...). The statistics come from :mod:`evalkit.stats` and
:mod:`evalkit.analysis`; what is here picks the rows behind them and lays them out.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._settings import ROUND_CASES, RUNS_DIR, SEED
from evalkit._version import __version__
from evalkit.analysis import (
    JudgeCalibration,
    JudgedRun,
    RunComparison,
    check_judge_calibration,
    sequential_compare as sequential_compare_runs,
)
from evalkit.errors import ConfigError, InputError
from evalkit.report._browser import item_browser
from evalkit.report._bundles import evidence_bundles
from evalkit.report._forensics_view import explanation_fragment
from evalkit.report._judge import calibration_note, expectation_pass_rates
from evalkit.report._named_cases import (
    case_named_column,
    named_case_columns,
    named_case_table,
    named_cases_section,
    no_named_case_note,
)
from evalkit.report._plots import figure_html
from evalkit.report._providers import provider_section
from evalkit.report._reasons_view import cause_changes, run_scores
from evalkit.report._sequential import SequentialTrajectory, sequential_trajectory
from evalkit.report._sequential_plot import sequential_plot
from evalkit.report._tables import (
    Fragment,
    html_table,
    interval,
    interval_table,
    key_values,
    note,
    pct,
    pp,
    rows_of,
    stat_cards,
    verdict_banner,
)
from evalkit.report._transcripts import paired_excerpts
from evalkit.report._views import case_keys
from evalkit.results import judged_statements, load_manifest, read_run, resolve_run_dir
from evalkit.stats import (
    CompareOptions,
    PairedComparison,
    compare_tables,
    correction_words,
    unmatched_lines,
)

#: Columns of the tables of named cases after the case columns.
_NAMED_EXTRA = ["baseline_rate", "candidate_rate", "n_baseline", "n_candidate", "p_adjusted"]


@dataclass(frozen=True)
class ComparisonView:
    """A comparison with the two sides' rows around it; each method is a report section.

    The sections, in the compare report's order: :meth:`verdict`, :meth:`named_cases`,
    :meth:`next_step`, :meth:`sequential`, :meth:`by_condition`, :meth:`providers`, :meth:`forest`,
    :meth:`wins`, :meth:`failure_causes`, :meth:`regressed` and :meth:`why_regressed`,
    :meth:`improved`, :meth:`all_cases`, :meth:`unmatched`, :meth:`judged_expectations`,
    :meth:`evidence_bundles`, :meth:`item_browser`, :meth:`further_metrics` and
    :meth:`about`. Each returns escaped HTML that displays itself in a notebook.

    Attributes:
        comparison: The :class:`~evalkit.analysis.RunComparison`.
        mode: ``"runs"`` (two runs) or ``"conditions"`` (two conditions of one run).
        baseline_label: How the baseline is named in the report.
        candidate_label: How the candidate is named.
        baseline_run: Directory of the baseline run.
        candidate_run: Directory of the candidate run.
        baseline_rows: Result rows of the baseline arm.
        candidate_rows: Result rows of the candidate arm.
        conditions: ``(baseline, candidate)`` conditions in ``"conditions"`` mode.
    """

    comparison: RunComparison
    mode: str
    baseline_label: str
    candidate_label: str
    baseline_run: Path
    candidate_run: Path
    baseline_rows: pd.DataFrame
    candidate_rows: pd.DataFrame
    conditions: tuple[str, str] | None = None

    @property
    def labels(self) -> tuple[str, str]:
        """``(baseline_label, candidate_label)``."""
        return self.baseline_label, self.candidate_label

    def verdict(self, trajectory: SequentialTrajectory | None = None) -> Fragment:
        """The verdict banner (where the change is first, then how it was decided) and cards.

        Args:
            trajectory: The sequential trajectory shown with the comparison, if any: the
                banner then names its sequential verdict.

        Returns:
            The banner and the wins / losses / ties / named-cases cards.
        """
        c = self.comparison
        headline, details = _verdict_lines(self)
        if trajectory is not None:
            details.append(
                f"sequential verdict: {trajectory.facts()['sequential verdict']}; the "
                "interval above is the fixed-design one over the cases run, valid for one look "
                "at a number of cases fixed in advance (see Sequential trajectory)"
            )
        return verdict_banner(c.verdict, headline, details) + stat_cards([
            ("wins", str(c.wins), "cases where the candidate does better"),
            ("losses", str(c.losses), "cases where it does worse"),
            ("ties", str(c.ties), "cases with no change"),
            ("named cases", f"{len(c.regressed_cases)} / {len(c.improved_cases)}",
             "regressed / improved after correction"),
        ])

    def named_cases(self) -> Fragment:
        """The cases the comparison names regressed or improved, or why none is."""
        return named_cases_section(self.comparison.stats)

    def next_step(self) -> Fragment | None:
        """What would settle an inconclusive verdict (None when it is settled).

        Returns:
            The cases for the observed effect and for the threshold, the trials at these
            cases, the command and what limits the plan (planned by :func:`compare_view`
            or :func:`evalkit.compare`).
        """
        step = self.comparison.next_step
        if step is None:
            return None
        trials, cases = step["current_trials"], step["current_cases"]
        return key_values({
            f"cases at {trials} trials for the observed {pp(step['effect'])}": _or_none(
                step["cases"], "no number of cases"),
            f"trials per case at these {cases} cases": _or_none(
                step["trials"], "no number of trials"),
            f"cases to tell a {pp(step['threshold'])} effect from zero": _or_none(
                step["cases_at_threshold"], "not plannable"),
            "planned for": f"power {step['power']:.0%}, from these runs' variances",
            "command": step["command"],
            "note": step["note"] or None,
        })

    def sequential(self, trajectory: SequentialTrajectory) -> Fragment:
        """The sequential trajectory (:func:`comparison_trajectory`): facts, figure, every look.

        Args:
            trajectory: The trajectory of this comparison.

        Returns:
            Its facts, the figure of its looks against the fixed design, the table of looks.
        """
        return key_values(trajectory.facts()) + figure_html(
            sequential_plot(trajectory),
            "sequential",
            "Estimate and confidence sequence after each look, with the stopping boundaries "
            "and the settling look marked; below, items and agent cost spent against the "
            "fixed design.",
        ) + trajectory.looks_table()

    def by_condition(self) -> Fragment:
        """Each condition of a two-run comparison on its own, over its cases."""
        return interval_table(
            self.comparison.condition_table(), ["condition"], kind="pp", header="change",
            extra=["verdict", "n_cases", "reused_items"], table_id="by-condition",
            empty="Two conditions of one run are compared: see the verdict above.",
        )

    def providers(self) -> Fragment:
        """Each provider's verdict, their forest plot and the between-provider spread."""
        return provider_section(self.comparison.stats)

    def forest(self, max_cases: int = 40) -> Fragment:
        """The forest plot of the per-case changes (:meth:`RunComparison.plot_forest`)."""
        return figure_html(
            self.comparison.plot_forest(max_cases=max_cases),
            "forest",
            f"Per-case change from {self.baseline_label} to {self.candidate_label}, with "
            "per-case confidence intervals.",
        )

    def wins(self) -> Fragment:
        """Wins, losses and ties per condition, and how they relate to the banner's counts."""
        c = self.comparison
        table = html_table(c.wins_table(), caption="By condition", table_id="wins")
        units = _wins_note(c.stats)
        return table + note(units) if units else table

    def failure_causes(self) -> Fragment:
        """Failing items of each side by primary cause, and the change, over the paired units."""
        baseline, candidate = _paired_rows(self)
        shown = cause_changes(
            baseline, run_scores(self.baseline_run), candidate, run_scores(self.candidate_run),
            labels=self.labels,
        )
        if len(baseline) < len(self.baseline_rows) or len(candidate) < len(self.candidate_rows):
            shown += note(
                "Counted over the units both sides ran: the unmatched items (see below) are "
                "left out, so a provider that ran only one side adds no failures to either "
                "column."
            )
        return shown

    def regressed(self, max_pairs: int = 5, max_chars: int = 900) -> Fragment:
        """The cases named regressed, then a passing baseline and a failing candidate item each.

        Args:
            max_pairs: Most cases shown with their transcripts.
            max_chars: Character budget per transcript excerpt.
        """
        return self._named("regressed", max_pairs, max_chars)

    def improved(self, max_pairs: int = 5, max_chars: int = 900) -> Fragment:
        """The cases named improved, then a failing baseline and a passing candidate item each.

        Args:
            max_pairs: Most cases shown with their transcripts.
            max_chars: Character budget per transcript excerpt.
        """
        return self._named("improved", max_pairs, max_chars)

    def _named(self, verdict: str, max_pairs: int, max_chars: int) -> Fragment:
        stats = self.comparison.stats
        named = named_case_table(stats)
        table = interval_table(
            named[named["verdict"] == verdict], named_case_columns(stats), kind="pp",
            header="change", extra=_NAMED_EXTRA, table_id=verdict,
            empty=no_named_case_note(stats) or f"No case is named {verdict}.",
        )
        return table + paired_excerpts(
            _case_pairs(self, verdict, max_pairs),
            baseline_run=self.baseline_run, candidate_run=self.candidate_run,
            baseline_rows=self.baseline_rows, candidate_rows=self.candidate_rows,
            labels=self.labels, max_chars=max_chars,
        )

    def why_regressed(self, max_pairs: int = 5) -> Fragment:
        """Why each named regressed case regressed (:func:`evalkit.explain`), at most ``max_pairs``.

        Between two runs the case's trials in both; between two conditions of one run the
        candidate condition's own trials.
        """
        from evalkit.analysis import explain

        named = named_case_table(self.comparison.stats)
        regressed = named[named["verdict"] == "regressed"]
        if regressed.empty:
            return note("No case is named regressed: nothing to explain.")
        shown = Fragment("")
        for case in rows_of(regressed.head(max_pairs)):
            if self.mode == "runs":
                why = explain(self.candidate_run, case["case_id"], baseline=self.baseline_run,
                              condition=case.get("condition"))
            else:
                condition = self.conditions[1] if self.conditions else None
                why = explain(self.candidate_run, case["case_id"], condition=condition)
            shown += explanation_fragment(why)
        return shown

    def all_cases(self) -> Fragment:
        """Every case row (in each condition and provider) with its test, most regressed first."""
        c = self.comparison
        cases = c.case_table()
        lead = note(
            f"One row per case in each condition and provider. Each row's interval is its own "
            f"({c.delta.confidence:.0%}, unadjusted); its verdict needs its p-value after "
            f"{c.correction} correction across the {len(cases)} rows to be at most "
            f"{c.alpha:g}, so a row whose interval excludes 0 can stay inconclusive "
            "(decided_by says which applied). The named cases above pool a case's providers "
            "into one row (case_named)."
        )
        return lead + interval_table(
            cases.assign(case_named=case_named_column(c.stats)).sort_values(
                "estimate", kind="stable"),
            case_keys(c.cases), kind="pp", header="change",
            extra=["n_baseline", "n_candidate", "p_value", "p_adjusted", "verdict",
                   "decided_by", "case_named"],
            table_id="all-cases",
        )

    def unmatched(self) -> Fragment:
        """What one side ran and the other did not (left out of the comparison), listed."""
        shown = Fragment("")
        for line in unmatched_lines(self.comparison, listed=" (listed below)"):
            shown += note(line.strip())
        return shown + html_table(
            self.comparison.unmatched, table_id="unmatched",
            empty="Every case and condition is present on both sides.",
        )

    def judged_expectations(self) -> Fragment:
        """Whether the judge is calibrated, and each judged statement's pass rate on both sides."""
        rates = expectation_pass_rates(_statements(self), by=["run", "condition"],
                                       confidence=self.comparison.delta.confidence)
        return calibration_note(_calibration(self)) + interval_table(
            rates, ["expectation", "run", "condition"], header="pass rate",
            table_id="expectation-pass-rates", empty="no judged statement on either side",
        )

    def evidence_bundles(self, max_items: int = 6, max_embed_bytes: int = 1_000_000) -> Fragment:
        """The evidence bundles of each side's evidence-lane items, failing items first.

        Args:
            max_items: Most items shown per side.
            max_embed_bytes: Most bytes of images embedded per side.
        """
        shown = Fragment("")
        for label, run_dir, rows in ((self.baseline_label, self.baseline_run, self.baseline_rows),
                                     (self.candidate_label, self.candidate_run,
                                      self.candidate_rows)):
            shown += note(f"{label}: evidence bundles") + evidence_bundles(
                run_dir, rows, max_items=max_items, max_embed_bytes=max_embed_bytes)
        return shown

    def item_browser(self, max_items: int = 500, seed: int = SEED.default) -> Fragment:
        """The items of both sides in one searchable table (:func:`item_browser`)."""
        return item_browser(
            self.candidate_run, self.candidate_rows, baseline=self.baseline_run,
            baseline_rows=self.baseline_rows, labels=self.labels, max_items=max_items, seed=seed,
        )

    def further_metrics(self) -> Fragment:
        """The ``compare_metric`` plugins' figures on the same two sides, each with what it is."""
        metrics = pd.DataFrame(list(self.comparison.report_metrics),
                               columns=["label", "value", "description"])
        return html_table(
            metrics, columns={"label": "metric", "value": "value", "description": "what it is"},
            table_id="report-metrics", empty="No further metric is registered.",
        )

    def about(self) -> Fragment:
        """How the comparison was decided: sides, metric, interval, tests, threshold, version."""
        c = self.comparison
        options = c.options or CompareOptions()
        return key_values({
            "baseline": self.baseline_label,
            "candidate": self.candidate_label,
            "metric": c.metric,
            "overall interval": f"{c.delta.method}, {options.n_resamples:,} resamples, seed "
                                f"{options.seed}",
            "per-case tests": f"exact tests, {c.correction} correction, alpha {c.alpha:g}",
            "named cases": f"pooled case rows (CMH or Fisher), {c.case_correction} across "
                           f"cases, alpha {c.alpha:g}",
            "practical threshold": pp(c.threshold),
            "evalkit": __version__,
        })


def compared_conditions(
    run: str | os.PathLike[str],
    baseline: str | os.PathLike[str] | None = None,
    conditions: Sequence[str] | str | None = None,
    *,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
) -> tuple[str, ...]:
    """The conditions a compare report compares, as :func:`evalkit.compare` takes them.

    Args:
        run: Candidate run (directory or id).
        baseline: Baseline run; None or ``""`` to compare two conditions of ``run``.
        conditions: ``"A,B"`` / ``(A, B)``: with a baseline, a filter on conditions; without,
            the baseline and candidate conditions (default: the two conditions of a run of
            ``evalkit run --until-verdict``, else ``none`` vs ``preloaded``).
        runs_dir: Where run ids are looked up.

    Returns:
        With a baseline the filter (empty: every condition), else the two conditions.

    Raises:
        InputError: Two conditions of one run are compared and not exactly two are named.
    """
    if isinstance(conditions, str):
        conditions = [c.strip() for c in conditions.split(",") if c.strip()]
    wanted = tuple(str(c) for c in conditions or ())
    if baseline:
        return wanted
    pair = wanted or _default_pair(resolve_run_dir(run, runs_dir))
    if len(pair) != 2:
        raise InputError(
            f"comparing two conditions of one run needs exactly two, as 'A,B', not {list(pair)}."
        )
    return pair


def compare_view(
    run: str | os.PathLike[str],
    baseline: str | os.PathLike[str] | None = None,
    conditions: Sequence[str] | str | None = None,
    *,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    providers: str | Sequence[str] | None = None,
    result: RunComparison | None = None,
    **options: Any,
) -> ComparisonView:
    """Compare ``run`` against ``baseline`` (two runs), or two conditions of ``run``.

    Args:
        run: Candidate run (directory or id).
        baseline: Baseline run; None or ``""`` to compare two conditions of ``run``.
        conditions: ``"A,B"`` / ``(A, B)``: with a baseline, a filter on conditions; without,
            the baseline and candidate conditions (:func:`compared_conditions`).
        runs_dir: Where run ids are looked up.
        providers: Keep only these providers (``"P,Q"``; default every provider).
        result: The comparison of these sides, made already (``evalkit.compare(...)``, as
            the compare report does); None: compared here, on the tables.
        **options: Without ``result``: the fields of the
            :class:`~evalkit.stats.CompareOptions` passed to
            :func:`evalkit.stats.compare_tables` (``threshold``, ``n_resamples``...).

    Returns:
        The :class:`ComparisonView`.

    Raises:
        ConfigError: Both ``result`` and options were passed (the result has its own).
    """
    from evalkit.analysis import select_providers

    if result is not None and options:
        raise ConfigError(
            f"compare_view: options {sorted(options)} and a result were both passed; the "
            "result was decided with its own options: pass one or the other"
        )
    wanted = compared_conditions(run, baseline, conditions, runs_dir=runs_dir)
    settings = CompareOptions(**options)  # a notebook's parameters, checked once
    candidate_dir = resolve_run_dir(run, runs_dir)
    candidate_rows = select_providers(read_run(candidate_dir), providers, candidate_dir.name)
    if baseline:
        baseline_dir = resolve_run_dir(baseline, runs_dir)
        baseline_rows = select_providers(read_run(baseline_dir), providers, baseline_dir.name)
        if result is None:
            compared = compare_tables(
                baseline_rows,
                candidate_rows,
                conditions=wanted or None,
                labels=(baseline_dir.name, candidate_dir.name),
                options=settings,
            )
            result = _with_next_step(
                compared, baseline_rows, candidate_rows, candidate_dir, runs_dir, settings
            )
        if wanted:
            baseline_rows = baseline_rows[baseline_rows["condition"].isin(wanted)]
            candidate_rows = candidate_rows[candidate_rows["condition"].isin(wanted)]
        return ComparisonView(
            result,
            "runs",
            baseline_dir.name,
            candidate_dir.name,
            baseline_dir,
            candidate_dir,
            baseline_rows,
            candidate_rows,
        )
    first, second = wanted
    if result is None:
        compared = compare_tables(candidate_rows, conditions=wanted, options=settings)
        result = _with_next_step(compared, candidate_rows, None, candidate_dir, runs_dir, settings)
    return ComparisonView(
        result,
        "conditions",
        f"{candidate_dir.name} · {first}",
        f"{candidate_dir.name} · {second}",
        candidate_dir,
        candidate_dir,
        candidate_rows[candidate_rows["condition"] == first],
        candidate_rows[candidate_rows["condition"] == second],
        (str(first), str(second)),
    )


def comparison_trajectory(
    view: ComparisonView,
    *,
    sequential: bool = False,
    conditions: str = "",
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    round_cases: int = ROUND_CASES.default,
    plan_cases: int | None = None,
) -> SequentialTrajectory | None:
    """The trajectory a compare report shows, or None when it shows none.

    Two conditions of a run of ``evalkit run --until-verdict`` (the conditions of its
    ``sequential`` record, metric ``passed``) give the looks the run took, as its manifest
    records them. Otherwise, with ``sequential``, the comparison is looked at as
    ``evalkit compare --sequential`` looks at it (:func:`evalkit.analysis.sequential_compare`,
    with the options the view's comparison was decided with) and each look's items and cost
    are counted from the compared rows.

    Args:
        view: The comparison of the report (:func:`~evalkit.report.compare_view`).
        sequential: Look sequentially at a comparison that is not a sequential run's.
        conditions: The report's ``conditions`` filter between two runs (``"A,B"``).
        runs_dir: Where run ids are looked up.
        round_cases: Cases per look.
        plan_cases: The planned number of cases (None: every case of the comparison).

    Returns:
        The :class:`SequentialTrajectory`, or None (not a sequential run, not asked for).
    """
    settings = view.comparison.options or CompareOptions()
    labels = (view.baseline_label, view.candidate_label)
    if view.mode == "conditions" and settings.metric == "passed":
        manifest = load_manifest(view.candidate_run)
        record = manifest.sequential if manifest is not None else None
        if record is not None and view.conditions == (record.baseline, record.candidate):
            return sequential_trajectory(record, labels=labels)
    if not sequential:
        return None
    if view.mode == "conditions":
        result = sequential_compare_runs(
            view.candidate_run, conditions=view.conditions, runs_dir=runs_dir,
            options=settings, round_cases=round_cases, plan_cases=plan_cases,
        )
    else:
        wanted = [c.strip() for c in conditions.split(",") if c.strip()]
        result = sequential_compare_runs(
            view.baseline_run,
            view.candidate_run,
            conditions=wanted or None,
            runs_dir=runs_dir,
            options=settings,
            round_cases=round_cases,
            plan_cases=plan_cases,
        )
    rows = pd.concat([view.baseline_rows, view.candidate_rows], ignore_index=True)
    return sequential_trajectory(result, rows, labels=labels, plan_cases=plan_cases)


def _with_next_step(
    result: PairedComparison,
    baseline_rows: pd.DataFrame,
    candidate_rows: pd.DataFrame | None,
    candidate_dir: Path,
    runs_dir: str | os.PathLike[str],
    options: CompareOptions,
) -> RunComparison:
    """``result`` with what would settle it when inconclusive (as ``evalkit compare`` plans)."""
    from evalkit.analysis import next_step, run_command_line, run_suite_path

    step = next_step(result, baseline_rows, candidate_rows,
                     suite_path=run_suite_path(candidate_dir, runs_dir),
                     command_line=run_command_line(candidate_dir, runs_dir))
    return RunComparison(result, next_step=None if step is None else step.to_dict(),
                         options=options)


def _default_pair(run_dir: Path) -> tuple[str, str]:
    """The conditions a sequential run compared, else ``none`` vs ``preloaded``."""
    manifest = load_manifest(run_dir)
    record = manifest.sequential if manifest is not None else None
    return (record.baseline, record.candidate) if record is not None else ("none", "preloaded")




def _verdict_lines(view: ComparisonView) -> tuple[str, list[str]]:
    """Headline and detail lines of the verdict banner.

    Args:
        view: The comparison.

    Returns:
        ``(headline, details)``.
    """
    c = view.comparison
    what = "pass rate" if c.metric == "passed" else "score"
    scope = (
        f", {c.scope}" if c.pooled_conditions or c.by_condition or c.pooled_providers else ""
    )
    headline = (
        f"{view.candidate_label} vs {view.baseline_label}: change in {what} "
        f"{interval(c.delta.estimate, c.delta.ci_low, c.delta.ci_high, 'pp')} "
        f"({c.delta.confidence:.0%} {c.delta.method} interval) over {c.n_cases} matched "
        f"cases{scope}."
    )
    details = []
    if len(c.by_condition) > 1:
        details.append(
            "by condition: "
            + "; ".join(f"{name} {part.verdict}" for name, part in c.by_condition)
            + " (each over its own cases, table below)"
        )
    if c.reuse_note:
        details.append(c.reuse_note)
    if c.equivalence["equivalent"]:
        details.append(c.equivalence["note"])
    details += [
        f"wins {c.wins}, losses {c.losses}, ties {c.ties}",
        f"improved needs the interval above 0 and an effect of at least {pp(c.threshold)}; "
        "regressed needs the upper bound below 0",
        f"named cases: each case's trials pooled over its providers, named at "
        f"{correction_words(c.case_correction, c.alpha)}; {len(c.regressed_cases)} "
        f"regressed, {len(c.improved_cases)} improved"
        + (f" ({c.case_verdict_note})" if c.case_verdict_note else ""),
    ]
    if c.case_summary:  # where the change is, said before anything else
        details.insert(0, c.case_summary)
    if c.sign_flip is not None:
        details.append(
            f"sign-flip test over {c.sign_flip.n_cases} cases: {c.sign_flip.text()}"
            + (f" ({c.verdict_note})" if c.verdict_note else "")
        )
    if not c.unmatched.empty:
        details += [
            line.strip() for line in unmatched_lines(c, listed=" (listed below)")
        ]
    if c.next_step is not None:
        from evalkit.analysis import NextStep

        details.append(NextStep(**c.next_step).text())
    return headline, details


def _or_none(value: int | None, missing: str) -> str:
    return missing if value is None else f"{value:,}"


def _paired_rows(view: ComparisonView) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each side's rows cut to the units the comparison paired (unmatched units left out).

    A provider that ran only one side has nothing to compare, so its failures belong in
    neither side's count of a before/after table.

    Returns:
        ``(baseline rows, candidate rows)``, each only of units present on both sides.
    """
    cases = view.comparison.cases
    keys = [k for k in case_keys(cases) if not (k == "condition" and view.mode == "conditions")]
    keys = [k for k in keys if k in view.baseline_rows and k in view.candidate_rows]
    if not keys or cases.empty:
        return view.baseline_rows, view.candidate_rows
    paired = cases[keys].astype(str).drop_duplicates()

    def cut(rows: pd.DataFrame) -> pd.DataFrame:
        marked = rows[keys].astype(str).merge(paired.assign(_paired=True), how="left", on=keys)
        return rows[marked["_paired"].fillna(False).to_numpy(dtype=bool)]

    return cut(view.baseline_rows), cut(view.candidate_rows)


def _wins_note(comparison: PairedComparison) -> str:
    """How the wins/losses/ties table's counts relate to the banner's ("" when they agree).

    With several providers the banner counts each case once (its per-provider differences
    averaged) while the table counts each (case, provider) unit on its own.
    """
    cases = comparison.cases
    if "provider" not in cases or cases["provider"].nunique() < 2:
        return ""
    return (
        f"This table counts (case, provider) units: {len(cases):,} of them, each provider's "
        f"change in a case on its own. The verdict's wins {comparison.wins}, losses "
        f"{comparison.losses} and ties {comparison.ties} count cases ({comparison.n_cases:,}): "
        "each case once, its per-provider changes averaged, so a case can win for one "
        "provider and lose for another."
    )



def _case_pairs(
    view: ComparisonView, verdict: str, max_cases: int = 5
) -> list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]:
    """For each case with the given verdict, one baseline item and one candidate item.

    For a regressed case the baseline item is a passing one and the candidate item a failing
    one when such items exist (the other way round for an improved case), preferring the same
    trial number, so the pair shows the change.

    Args:
        view: The comparison.
        verdict: ``"regressed"`` or ``"improved"``.
        max_cases: Most pairs returned.

    Returns:
        ``(caption, baseline row, candidate row)`` triples.
    """
    cases = view.comparison.case_rows  # the cases the comparison names, pooled over providers
    chosen = cases[cases["verdict"] == verdict]
    chosen = chosen.iloc[chosen["estimate"].abs().to_numpy().argsort(kind="stable")[::-1]]
    chosen = chosen.head(max_cases)
    want_base = verdict == "regressed"
    out: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]] = []
    for case in rows_of(chosen):
        base = _arm(view.baseline_rows, case, view, baseline=True)
        cand = _arm(view.candidate_rows, case, view, baseline=False)
        b_pick = base[base["passed"].astype(bool) == want_base]
        c_pick = cand[cand["passed"].astype(bool) != want_base]
        common = sorted(set(b_pick["trial"]) & set(c_pick["trial"])) if "trial" in base else []
        if common:
            b_pick = b_pick[b_pick["trial"] == common[0]]
            c_pick = c_pick[c_pick["trial"] == common[0]]
        b_row = rows_of((b_pick if not b_pick.empty else base).head(1))
        c_row = rows_of((c_pick if not c_pick.empty else cand).head(1))
        caption = (
            f"{verdict}: case {case['case_id']} ({case.get('condition', '')}) — "
            f"{pct(case['baseline_rate'], 0)} → {pct(case['candidate_rate'], 0)}"
        )
        out.append((caption, b_row[0] if b_row else None, c_row[0] if c_row else None))
    return out


def _arm(
    rows: pd.DataFrame, case: Mapping[str, Any], view: ComparisonView, *, baseline: bool
) -> pd.DataFrame:
    mask = rows["case_id"].astype(str) == str(case["case_id"])
    if view.mode == "runs" and "condition" in case:
        mask &= rows["condition"].astype(str) == str(case["condition"])
    if "provider" in case and "provider" in rows:
        mask &= rows["provider"].astype(str) == str(case["provider"])
    return rows[mask].sort_values("trial", kind="stable")


def _calibration(view: ComparisonView) -> JudgeCalibration | None:
    """Whether the judges behind a comparison's rows are calibrated (None without any)."""
    if view.mode == "conditions":
        rows = pd.concat([view.baseline_rows, view.candidate_rows], ignore_index=True)
        return check_judge_calibration([JudgedRun(view.candidate_run.name, rows,
                                                  view.candidate_run)])
    return check_judge_calibration(
        [
            JudgedRun(view.baseline_run.name, view.baseline_rows, view.baseline_run),
            JudgedRun(view.candidate_run.name, view.candidate_rows, view.candidate_run),
        ]
    )


def _statements(view: ComparisonView) -> pd.DataFrame:
    """The judged statements of both sides of a comparison, with a ``run`` column."""
    sides = [(view.baseline_label, view.baseline_run, view.baseline_rows),
             (view.candidate_label, view.candidate_run, view.candidate_rows)]
    parts: list[pd.DataFrame] = []
    for label, run_dir, rows in sides:
        found = judged_statements(run_dir)
        if "item_key" in rows.columns:
            found = found[found["item_key"].isin(set(rows["item_key"]))]
        parts.append(found.assign(run=label))
    combined: pd.DataFrame = pd.concat(parts, ignore_index=True)
    return combined
