"""Small read-only views of a run for the report notebooks (selections and counts, no statistics).

The statistics come from :mod:`evalkit.stats` and :mod:`evalkit.analysis`; what is here picks
rows (slowest items, failing items, the items behind a regressed case), counts them (errors by
class, the trigger confusion matrix) or calls those libraries once per group so that a
notebook cell stays one line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._settings import CONFIDENCE, RUNS_DIR
from evalkit.analysis import LiftResult, RunComparison, condition_table, wins_table
from evalkit.errors import ConfigError, InputError
from evalkit.report._tables import (
    Fragment,
    html_table,
    interval,
    key_values,
    note,
    pct,
    pp,
    rows_of,
)
from evalkit.results import load_manifest, read_run, resolve_run_dir
from evalkit.stats import (
    CompareOptions,
    FlipRate,
    PairedComparison,
    compare_tables,
    correction_words,
    flip_rate_between,
    flip_rate_within,
    unmatched_lines,
)

ITEM_COLUMNS = ("case_id", "lane", "condition", "provider", "trial", "status")


def run_facts(rows: pd.DataFrame, manifest: Mapping[str, Any]) -> Fragment:
    """Key facts of a run: id, suite, dataset version, dates, matrix shape and outcomes.

    Args:
        rows: The run's result rows.
        manifest: The run's manifest (may be empty).

    Returns:
        A definition list.
    """
    status = rows["status"].value_counts() if "status" in rows else pd.Series(dtype=int)

    def unique(column: str) -> str | None:
        if column not in rows:
            return None
        values = sorted(rows[column].dropna().astype(str).unique())
        return ", ".join(values) if values else None

    cached = (rows["cache_hit"] == True) if "cache_hit" in rows else None  # noqa: E712
    here = rows[~cached] if cached is not None else rows
    # rows copied from the cache keep the times of the run that produced them
    started = here["started_at"].min() if "started_at" in here and len(here) else None
    finished = here["finished_at"].max() if "finished_at" in here and len(here) else None
    return key_values(
        {
            "run": manifest.get("run_id") or unique("run_id"),
            "suite": manifest.get("suite") or unique("suite"),
            "dataset version": unique("dataset_version"),
            "created": manifest.get("created_at"),
            "started / finished": (
                f"{_stamp(started)} / {_stamp(finished)}"
                + (" (the items run here)" if cached is not None and cached.any() else "")
                if started is not None and pd.notna(started)
                else (f"{manifest.get('started_at') or 'n/a'} / none run here: every item "
                      "came from the cache"
                      if cached is not None and len(rows) and cached.all() else None)
            ),
            "from the cache": _cache_line(rows, cached),
            "status": manifest.get("status"),
            "items": f"{len(rows):,}",
            "cases": f"{rows['case_id'].nunique():,}",
            "conditions": unique("condition"),
            "providers": unique("provider"),
            "models": unique("model"),
            "lanes": unique("lane"),
            "trials per cell": str(rows["trial"].nunique()) if "trial" in rows else None,
            "outcomes": ", ".join(f"{k} {v:,}" for k, v in status.items()),
            "evalkit": manifest.get("evalkit_version"),
        }
    )


def _cache_line(rows: pd.DataFrame, cached: pd.Series | None) -> str | None:
    """How many items were copied from the cache, and the runs that produced them."""
    if cached is None or not cached.any():
        return None
    origins = (rows.loc[cached, "origin_run_id"] if "origin_run_id" in rows
               else pd.Series([None] * int(cached.sum())))
    named = sorted({str(v) for v in origins.dropna()})
    unknown = int(origins.isna().sum())
    runs = ", ".join(named) + (f"{', ' if named else ''}{unknown} of unrecorded origin"
                               if unknown else "")
    word = "runs" if len(named) + bool(unknown) > 1 else "run"
    return f"{int(cached.sum()):,} of {len(rows):,} items, produced by {word} {runs}"


def _stamp(value: Any) -> str:
    if value is None or pd.isna(value):
        return "n/a"
    stamp = pd.Timestamp(value)
    return stamp.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if stamp.tzinfo is not None else "")


_KIND = {
    "realized_lift": "pp",
    "oracle_lift": "pp",
    "routing_gap": "pp",
    "stale_harm": "pp",
    "routing_efficiency": "num",
}


def metrics_table(
    metrics: pd.DataFrame,
    names: Sequence[str] | None = None,
    *,
    caption: str | None = None,
    table_id: str | None = None,
) -> Fragment:
    """Lift metrics as a table: differences in pp, rates in %, routing efficiency as a ratio.

    Args:
        metrics: :attr:`evalkit.analysis.LiftResult.metrics`.
        names: Metrics to show (default: all).
        caption: Caption.
        table_id: ``id`` of the table.

    Returns:
        The table (``provider, lane, metric, estimate [CI], n_cases``).
    """
    part = metrics if names is None else metrics[metrics["metric"].isin(list(names))]
    level = part["confidence"].iloc[0] if len(part) else CONFIDENCE.default
    shown = part.assign(
        value=[
            interval(e, lo, hi, _KIND.get(str(m), "pct"))
            for m, e, lo, hi in zip(
                part["metric"], part["estimate"], part["ci_low"], part["ci_high"], strict=True
            )
        ]
    )
    columns = {
        "provider": "provider",
        "lane": "lane",
        "metric": "metric",
        "value": f"estimate [{level:.0%} CI]",
        "n_cases": "cases",
    }
    if "note" in shown and shown["note"].fillna("").astype(bool).any():
        columns["note"] = "note"  # why a metric is n/a: a condition with only errors
    return html_table(
        shown,
        columns=columns,
        numeric=["value"],
        caption=caption,
        table_id=table_id,
        empty="no metric could be computed (the conditions it needs are missing)",
    )


def missing_cases(result: LiftResult) -> Fragment:
    """The cases that lack a condition (reported, never silently dropped), or a note.

    Conditions with only errors (:attr:`~evalkit.analysis.LiftResult.notes`) are named first.

    Args:
        result: A lift result.

    Returns:
        A note, and the table when some cases lack a condition.
    """
    errored = Fragment("")
    for _, row in result.notes.iterrows():
        errored += note(
            f"{row['provider']} / {row['lane']}: {row['note']}: it measured nothing, so the "
            "metrics that need it are n/a.",
            "warn",
        )
    if result.missing.empty:
        return errored + note("Every case has every condition of its group.", "ok")
    return errored + note(
        f"{len(result.missing)} case(s) lack a condition: each metric uses only the cases "
        "that have the conditions it needs.",
        "warn",
    ) + html_table(result.missing, table_id="missing-cases")


def errors_by_class(rows: pd.DataFrame) -> pd.DataFrame:
    """Errors and timeouts by status and error class, with an example message.

    Args:
        rows: Result rows.

    Returns:
        ``status, error_class, n, share, cases, example`` (``share`` of all items), most
        frequent first; empty when every item is ``ok``.
    """
    bad = rows[rows["status"].astype(str) != "ok"]
    columns = ["status", "error_class", "n", "share", "cases", "example"]
    if bad.empty:
        return pd.DataFrame(columns=columns)
    bad = bad.assign(
        error_class=bad["error_class"].fillna("unknown").astype(str),
        error_message=bad["error_message"].fillna("").astype(str),
    )
    table = (
        bad.groupby(["status", "error_class"], sort=True)
        .agg(
            n=("item_key", "size"), cases=("case_id", "nunique"), example=("error_message", "first")
        )
        .reset_index()
    )
    table["share"] = table["n"] / len(rows)
    return table.sort_values("n", ascending=False, kind="stable")[columns].reset_index(drop=True)


def top_items(rows: pd.DataFrame, column: str, n: int = 10) -> pd.DataFrame:
    """The ``n`` items with the largest ``column`` (e.g. ``latency_s``, ``cost_usd``).

    Args:
        rows: Result rows.
        column: Column to rank by.
        n: Number of items.

    Returns:
        The item columns plus ``latency_s, cost_usd, input_tokens, output_tokens``.
    """
    keep = [c for c in ITEM_COLUMNS if c in rows]
    keep += [
        c
        for c in ("latency_s", "cost_usd", "input_tokens", "output_tokens")
        if c in rows and c not in keep
    ]
    if column not in rows:
        raise InputError(f"the result table has no column {column!r} to rank items by.")
    return rows.nlargest(n, column, keep="first")[keep].reset_index(drop=True)


def trigger_confusion(rows: pd.DataFrame, condition: str = "self-load") -> pd.DataFrame:
    """Expected skill x skill the agent loaded, counted over one condition's items.

    Args:
        rows: Result rows with ``expected_skill`` and ``inferred_skill``.
        condition: The condition where the agent decides (``self-load``).

    Returns:
        One row per expected skill (``expected_skill``), one count column per inferred skill,
        then ``total``; empty when the condition is absent.
    """
    part = rows[rows["condition"].astype(str) == condition]
    if part.empty or not {"expected_skill", "inferred_skill"} <= set(part.columns):
        return pd.DataFrame(columns=["expected_skill", "total"])
    expected = part["expected_skill"].fillna("none").astype(str).rename("expected_skill")
    inferred = part["inferred_skill"].fillna("none").astype(str).rename("inferred_skill")
    table = pd.crosstab(expected, inferred)
    table["total"] = table.sum(axis=1)
    table.columns.name = None
    return table.reset_index()


def failing_items(rows: pd.DataFrame, n: int = 6) -> pd.DataFrame:
    """Up to ``n`` failing items, one per case first (wrong answers before errors and timeouts).

    Args:
        rows: Result rows.
        n: Most items returned.

    Returns:
        The selected rows.
    """
    failed = rows[~rows["passed"].fillna(False).astype(bool)]
    if failed.empty:
        return failed
    failed = failed.assign(_infra=(failed["status"].astype(str) != "ok"))
    failed = failed.sort_values(["_infra", "case_id", "condition", "trial"], kind="stable")
    first = failed.drop_duplicates("case_id")
    rest = failed.drop(first.index)
    return pd.concat([first, rest]).head(n).drop(columns="_infra")


@dataclass(frozen=True)
class ComparisonView:
    """A comparison with what a report needs around it.

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


def verdict_lines(view: ComparisonView) -> tuple[str, list[str]]:
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


def next_step_facts(comparison: RunComparison) -> dict[str, Any] | None:
    """What would settle an inconclusive comparison, for :func:`~evalkit.report.key_values`.

    Args:
        comparison: A comparison whose ``next_step`` was planned (:func:`compare_view`).

    Returns:
        ``{label: text}`` (the cases for the observed effect and for the threshold, the trials
        at these cases, the command and what limits the plan), or None when the verdict is
        settled.
    """
    step = comparison.next_step
    if step is None:
        return None
    trials, cases = step["current_trials"], step["current_cases"]
    return {
        f"cases at {trials} trials for the observed {pp(step['effect'])}": _or_none(
            step["cases"], "no number of cases"),
        f"trials per case at these {cases} cases": _or_none(step["trials"], "no number of trials"),
        f"cases to tell a {pp(step['threshold'])} effect from zero": _or_none(
            step["cases_at_threshold"], "not plannable"),
        "planned for": f"power {step['power']:.0%}, from these runs' variances",
        "command": step["command"],
        "note": step["note"] or None,
    }


def _or_none(value: int | None, missing: str) -> str:
    return missing if value is None else f"{value:,}"


def condition_comparisons(comparison: PairedComparison | RunComparison) -> pd.DataFrame:
    """One row per condition of a two-run comparison, each over its own cases.

    Args:
        comparison: A comparison of two runs (:attr:`PairedComparison.by_condition`).

    Returns:
        ``condition, verdict, estimate, ci_low, ci_high, confidence, n_cases,
        reused_items``; empty when two conditions of one run were compared.
    """
    stats = comparison.stats if isinstance(comparison, RunComparison) else comparison
    return condition_table(stats)


def case_keys(cases: pd.DataFrame) -> list[str]:
    """The columns that name one row of a comparison's per-case table, as they are there.

    With several providers a case has one row per provider, so ``provider`` is among them
    (a table without it would show one case twice with different numbers).

    Examples:
        >>> case_keys(pd.DataFrame(columns=["case_id", "condition", "provider", "estimate"]))
        ['case_id', 'condition', 'provider']
    """
    return [c for c in ("lane", "case_id", "condition", "provider") if c in cases.columns]


def paired_rows(view: ComparisonView) -> tuple[pd.DataFrame, pd.DataFrame]:
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


def wins_note(comparison: PairedComparison) -> str:
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


def wins_by_condition(cases: pd.DataFrame) -> pd.DataFrame:
    """Wins, losses and ties per condition, from a comparison's per-case table.

    Args:
        cases: :attr:`PairedComparison.cases`.

    Returns:
        ``condition, wins, losses, ties, cases, regressed, improved``; with several
        providers the count column is ``case x provider units`` (a case counts once per
        provider, see :func:`wins_note`).
    """
    return wins_table(cases)


def case_pairs(
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


def flip_overview(
    rows: pd.DataFrame,
    baseline_rows: pd.DataFrame | None = None,
    *,
    run_label: str = "run",
    baseline_label: str = "baseline",
    confidence: float = CONFIDENCE.default,
) -> pd.DataFrame:
    """Flip rates within the run (and the baseline), and between them, overall and per condition.

    Each number is one call of :func:`evalkit.stats.flip_rate_within` (trial pairs of a case,
    condition and provider) or :func:`evalkit.stats.flip_rate_between` (matched items).

    Args:
        rows: The run's result rows.
        baseline_rows: A second run's rows, or None.
        run_label: Name of the run in the ``scope`` column.
        baseline_label: Name of the second run.
        confidence: Confidence level.

    Returns:
        ``scope, condition, flip_rate, ci_low, ci_high, n_pairs, n_flips, method,
        reused_items`` with ``condition = "all"`` for the pooled rows; between runs, pairs
        whose two sides are one sample are left out and counted in ``reused_items`` (the flip
        rate is NaN when every pair is one).
    """
    records: list[dict[str, Any]] = []

    def add(scope: str, condition: str, result: Any) -> None:
        records.append(
            {
                "scope": scope,
                "condition": condition,
                "flip_rate": result.flip_rate,
                "ci_low": result.ci_low,
                "ci_high": result.ci_high,
                "n_pairs": result.n_pairs,
                "n_flips": result.n_flips,
                "method": result.method,
                "reused_items": result.reused_items,
            }
        )

    arms = [(f"within {run_label}", rows)]
    if baseline_rows is not None:
        arms.append((f"within {baseline_label}", baseline_rows))
    for scope, frame in arms:
        by = (
            ["case_id", "condition", "provider"]
            if "provider" in frame
            else ["case_id", "condition"]
        )
        add(scope, "all", flip_rate_within(frame, by=by, confidence=confidence))
        for condition, part in frame.groupby("condition", sort=True):
            add(scope, str(condition), flip_rate_within(part, by=by, confidence=confidence))
    if baseline_rows is not None:
        scope = f"between {baseline_label} and {run_label}"
        add(scope, "all", flip_rate_between(baseline_rows, rows, confidence=confidence))
        shared = sorted(set(rows["condition"]) & set(baseline_rows["condition"]))
        for condition in shared:
            add(
                scope,
                str(condition),
                flip_rate_between(
                    baseline_rows[baseline_rows["condition"] == condition],
                    rows[rows["condition"] == condition],
                    confidence=confidence,
                ),
            )
    columns = ["scope", "condition", "flip_rate", "ci_low", "ci_high", "n_pairs", "n_flips"]
    return pd.DataFrame(records, columns=[*columns, "method", "reused_items"])


def within_flips(rows: pd.DataFrame, confidence: float = CONFIDENCE.default) -> FlipRate:
    """Flip rate between the trials of each case, condition (and provider) of one run.

    Args:
        rows: The run's result rows.
        confidence: Confidence level.

    Returns:
        :func:`evalkit.stats.flip_rate_within` grouped by case, condition and provider.
    """
    by = ["case_id", "condition", "provider"] if "provider" in rows else ["case_id", "condition"]
    return flip_rate_within(rows, by=by, confidence=confidence)
