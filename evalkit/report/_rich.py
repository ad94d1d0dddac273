"""Rich displays of evalkit's result objects in Jupyter: a banner, a compact table, a figure.

Each renderer takes one result object and returns self-styled HTML (:func:`styled`): every
text escaped by the builders of :mod:`evalkit.report._tables`, the figure drawn only when the
object is displayed (matplotlib, a PNG data URI). :func:`register_rich_displays` makes them the
``_repr_html_`` of :class:`~evalkit.stats.PairedComparison`, :class:`~evalkit.stats.FlipRate`,
:class:`~evalkit.stats.PowerResult`, :class:`~evalkit.analysis.LiftResult`,
:class:`~evalkit.analysis.GateResult`, :class:`~evalkit.stats.SequentialComparison`,
:class:`~evalkit.sequential.SequentialRun` and :class:`~evalkit.ablation.AblationResult`
(through :mod:`evalkit._display`, whose first display calls it). A run gets the same through
:func:`~evalkit.report._run.run_overview`, and flipped items through :func:`flip_pairs`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalkit._display import register_html
from evalkit._settings import RUNS_DIR
from evalkit.ablation import AblationResult
from evalkit.analysis import LIFT_METRICS, Explanation, GateResult, LiftResult, RunComparison
from evalkit.report._ablation import ablation_html
from evalkit.report._forensics_view import explanation_html
from evalkit.report._named_cases import case_named_column, named_cases_section
from evalkit.report._plots import (
    figure_html,
    forest_plot,
    lift_plot,
    power_plot,
)
from evalkit.report._sequential import SequentialTrajectory, sequential_trajectory
from evalkit.report._sequential_plot import sequential_plot
from evalkit.report._style import styled
from evalkit.report._tables import (
    Fragment,
    banner,
    esc,
    html_table,
    interval,
    interval_table,
    key_values,
    note,
    num,
    pct,
    pp,
    rows_of,
    usd,
)
from evalkit.report._transcripts import paired_excerpts
from evalkit.report._views import case_keys, metrics_table
from evalkit.results import describe_causes, read_run, resolve_run_dir
from evalkit.sequential import SequentialRun
from evalkit.stats import (
    FlipRate,
    PairedComparison,
    PowerDesign,
    PowerResult,
    SequentialComparison,
    correction_words,
    minimum_detectable_effect,
    unmatched_lines,
)

#: Rows of the compact table of a rich display.
COMPACT_ROWS = 10


def _tone(low: float, high: float) -> str:
    if math.isfinite(low) and low > 0:
        return "improved"
    if math.isfinite(high) and high < 0:
        return "regressed"
    return "inconclusive"


def _as_run(result: PairedComparison | RunComparison) -> RunComparison:
    """A comparison as :func:`evalkit.compare` returns it (tables compared: no run-level facts)."""
    if isinstance(result, RunComparison):
        return result
    if isinstance(result, SequentialComparison):
        return RunComparison(result, next_step=result.next_step)
    return RunComparison(result)


def _comparison_banner(result: RunComparison, more: Sequence[str] = ()) -> Fragment:
    """The verdict banner of a comparison (``more``: further detail lines)."""
    what = "pass rate" if result.metric == "passed" else "score"
    d = result.delta
    headline = (
        f"{result.candidate_label} vs {result.baseline_label}: change in {what} "
        f"{interval(d.estimate, d.ci_low, d.ci_high, 'pp')} ({d.confidence:.0%} {d.method} "
        f"interval) over {result.n_cases} matched cases"
        + (f", {result.scope}" if result.pooled_providers or result.pooled_conditions else "")
    )
    details = [
        *more,
        f"wins {result.wins}, losses {result.losses}, ties {result.ties} (cases)",
        f"{len(result.regressed_cases)} case(s) regressed, {len(result.improved_cases)} improved "
        f"(named at {correction_words(result.case_correction, result.alpha)}); practical "
        f"threshold {pp(result.threshold)}",
    ]
    if result.equivalence["equivalent"]:
        details.insert(0, result.equivalence["note"])
    if result.case_summary:  # where the change is, said before anything else
        details.insert(0, result.case_summary)
    if result.case_verdict_note:
        details.append(result.case_verdict_note)
    if result.sign_flip is not None:
        details.append(f"sign-flip test over {result.sign_flip.n_cases} cases: "
                       f"{result.sign_flip.text()}")
    details += [line.strip() for line in unmatched_lines(result.stats, listed="")]
    if result.verdict_note:
        details.append(result.verdict_note)
    if result.next_step is not None:
        from evalkit.analysis import NextStep

        details.append(NextStep(**result.next_step).text())
    judge = result.judge_calibration
    if judge is not None and judge["status"] == "calibrated":
        details.append("judge calibrated")
    return banner(result.verdict, result.verdict, headline, details) + _basis_warnings(result)


def _basis_warnings(result: RunComparison) -> Fragment:
    """Warnings about what the verdict rests on, outside its banner and in their own colour.

    A verdict box says what the data show; a judge that is not calibrated says the data
    themselves may be wrong, so it is not one more grey line inside a green box.
    """
    judge = result.judge_calibration
    if judge is None or judge["status"] == "calibrated":
        return Fragment("")
    status = str(judge["status"]).replace("_", " ")
    text = f"judge {status}: this verdict rests on judged expectations; {judge['message']}"
    return Fragment(
        '<div class="ek-verdict-basis" role="note">'
        '<p class="ek-verdict-basis-head">Check the verdict\'s basis</p>'
        f"<p>{esc(text)}</p></div>"
    )


def _comparison_cases(result: RunComparison) -> Fragment:
    """The cases that moved most (with the verdict their case is named with) and the forest plot."""
    named = case_named_column(result.stats)
    cases = result.cases.assign(case_named=named, _named=named != "")
    cases = cases.assign(_size=cases["estimate"].abs()).sort_values(
        ["_named", "_size"], ascending=False, kind="stable"
    )
    # a case whose change shows as +0.0 pp did not move: it is counted, not listed
    still = int((cases["_size"].round(4) == 0).sum())
    moved = cases[cases["_size"].round(4) != 0]
    shown = min(COMPACT_ROWS, len(moved))
    unmoved = f"; {still} did not move" if still else ""
    table = interval_table(
        moved,
        case_keys(moved),
        kind="pp",
        header="change",
        extra=["baseline_rate", "candidate_rate", "case_named"],
        caption=f"Cases that moved most ({shown} of {len(moved)} that moved{unmoved}); "
        "case named: the case's verdict from its pooled row (the table above)",
        table_id="moved-most",
        max_rows=COMPACT_ROWS,
        empty=f"no case moved ({still} cases, each +0.0 pp)",
    )
    cases = moved
    figure = figure_html(
        forest_plot(result.stats, max_cases=20),
        "forest",
        "Per-case change with its interval; dotted lines: the practical threshold.",
    )
    return table + _case_reasons(result, cases.head(COMPACT_ROWS)) + figure


def _case_reasons(result: RunComparison, shown: pd.DataFrame) -> Fragment:
    """Why the shown cases failed on each side (runs compared by ``evalkit.compare``)."""
    if result.case_reasons is None or shown.empty:
        return Fragment("")
    from evalkit.analysis import side_line

    items = []
    for position in shown.index:
        index = int(result.stats.cases.index.get_loc(position))  # type: ignore[arg-type]
        row, reasons = result.cases.iloc[index], result.case_reasons[index]
        sides = [side_line(label, reasons[side]) for side, label in (
            ("baseline", result.baseline_label), ("candidate", result.candidate_label))]
        if not any(r and r["failing"] for r in reasons.values()):
            continue
        where = " / ".join(str(row[c]) for c in ("condition", "provider") if c in row)
        items.append(
            f"<li><b>{esc(row['case_id'])}</b> ({esc(where)}): "
            + "; ".join(esc(s) for s in sides) + "</li>"
        )
    if not items:
        return Fragment("")
    return Fragment(
        '<p class="ek-explain-head">Why their trials failed</p>'
        f'<ul class="ek-causes">{"".join(items)}</ul>'
    )


def comparison_html(result: PairedComparison | RunComparison) -> str:
    """A comparison: its verdict banner, named cases, the cases that moved most, the forest plot.

    With several providers the per-provider table, their forest plot and the heterogeneity
    line come after the named cases.
    """
    return styled(comparison_fragment(result).html)


def comparison_fragment(result: PairedComparison | RunComparison) -> Fragment:
    """The markup of :func:`comparison_html` without its stylesheet (for pages that have one)."""
    from evalkit.report._providers import provider_section

    run = _as_run(result)
    parts = _comparison_banner(run) + named_cases_section(run.stats, compact=True)
    if run.by_provider:
        parts = parts + provider_section(run.stats)
    return parts + _comparison_cases(run)


def _trajectory(trajectory: SequentialTrajectory) -> Fragment:
    """The trajectory figure and the table of every look."""
    figure = figure_html(
        sequential_plot(trajectory),
        "sequential",
        "Estimate and confidence sequence after each look with the stopping boundaries; "
        "below, items and agent cost spent against the fixed design.",
    )
    return figure + trajectory.looks_table(table_id=None)


def sequential_html(result: SequentialComparison) -> str:
    """A sequential comparison: its verdict banner, the trajectory of its looks, the cases."""
    trajectory, run = sequential_trajectory(result), _as_run(result)
    return styled((_comparison_banner(run) + _trajectory(trajectory) + _comparison_cases(run)).html)


def sequential_run_html(result: SequentialRun) -> str:
    """A run of ``--until-verdict``: why it stopped, its trajectory with spending, the cases."""
    trajectory = sequential_trajectory(result)
    spent = (
        f"stopped: {result.stop_reason} after {result.rounds} round(s), {result.items:,} items, "
        f"agent cost {usd(result.cost_usd)}; the fixed design takes {trajectory.fixed_cases} "
        f"cases ({num(trajectory.fixed_items, 0)} items)"
    )
    comparison = _as_run(result.comparison)
    return styled(
        (
            _comparison_banner(comparison, [spent])
            + _trajectory(trajectory)
            + _comparison_cases(comparison)
        ).html
    )


def lift_html(result: LiftResult) -> str:
    """Lift metrics: the realized lift in the banner, every metric in the table, the plot."""
    pooled = result.pooled[result.pooled["metric"] == "realized_lift"]
    realized = result.metrics[result.metrics["metric"] == "realized_lift"]
    scope = [scope.note() for scope in result.pooled_scope if scope.note()]
    scope += [result.trigger_note] if result.trigger_note else []
    if not pooled.empty and pd.notna(pooled["estimate"]).any():
        first = pooled.iloc[0]
        head = banner(
            _tone(float(first["ci_low"]), float(first["ci_high"])),
            "skill lift",
            f"realized lift {interval(first['estimate'], first['ci_low'], first['ci_high'], 'pp')}"
            f" pooled over providers / {first['lane']} ({int(first['n_cases'])} cases, each "
            "once)",
            [f"{len(realized)} provider/lane group(s); the table lists every metric", *scope],
        )
    elif realized.empty:
        head = banner("inconclusive", "skill lift", "no realized lift: a condition is missing")
    else:
        # the headline shows the largest group (most cases), and says so
        first = realized.sort_values("n_cases", ascending=False, kind="stable").iloc[0]
        groups = len(realized)
        which = f", the largest of {groups} groups" if groups > 1 else ""
        head = banner(
            _tone(float(first["ci_low"]), float(first["ci_high"])),
            "skill lift",
            f"realized lift {interval(first['estimate'], first['ci_low'], first['ci_high'], 'pp')}"
            f" for {first['provider']} / {first['lane']} ({int(first['n_cases'])} cases{which})",
            [f"{groups} provider/lane group(s); the table lists every metric"]
            + ([f"{len(result.missing)} case(s) miss a condition"] if len(result.missing) else [])
            + scope,
        )
    table = metrics_table(result.metrics, LIFT_METRICS, caption="Lift metrics")
    figure = figure_html(
        lift_plot(result.metrics), "lift", "Lift metrics with case-bootstrap intervals."
    )
    causes = Fragment("")
    if not result.failure_causes.empty:
        by = ["provider", "condition"] if result.failure_causes["provider"].nunique() > 1 else [
            "condition"
        ]
        lines = "".join(f"<li>{esc(line)}</li>" for line in describe_causes(
            result.failure_causes, by=by))
        causes = Fragment(
            '<p class="ek-explain-head">What the failures are made of</p>'
            f'<ul class="ek-causes">{lines}</ul>'
        )
    return styled((head + table + causes + figure).html)


def flips_html(result: FlipRate) -> str:
    """A flip rate: the rate and its interval, the most unstable cases, the heatmap."""
    head = banner(
        "inconclusive",
        "flip rate",
        f"{interval(result.flip_rate, result.ci_low, result.ci_high)} of {result.n_pairs:,} "
        f"pairs disagree ({result.n_flips:,} flips; {result.confidence:.0%} {result.method})",
        [f"{result.n_unmatched} item(s) had no match"] if result.n_unmatched else [],
    )
    table = html_table(
        result.unstable_cases(COMPACT_ROWS),
        formats={"estimate": pct},
        caption="Most unstable cases",
        empty="No case flipped.",
    )
    parts = head + table
    if {"case_id", "condition", "estimate"} <= set(result.by_case.columns):
        parts = parts + figure_html(
            result.plot_heatmap(max_rows=30),
            "flip-heatmap",
            "Flip rate per case (rows) and condition (columns).",
        )
    return styled(parts.html)


def power_html(result: PowerResult) -> str:
    """A power plan: the plan in the banner, its inputs in the table, the detectable effect."""
    trials = result.n_trials or 1
    if result.n_cases is not None:
        headline = (
            f"{result.n_cases} cases × {trials} trial(s): power {result.power:.0%} to detect "
            f"{pp(result.effect)} at alpha {result.alpha:g}"
        )
    else:
        headline = f"power {result.power:.0%} to detect {pp(result.effect)}"
    head = banner("inconclusive", "power", headline, [result.note] if result.note else [])
    facts = key_values(
        {
            "cases": result.n_cases,
            "trials per case and arm": trials,
            "effect": pp(result.effect),
            "power": f"{result.power:.1%}",
            "alpha": f"{result.alpha:g}",
            "baseline rate": pct(result.baseline_rate),
            "between-case variance": f"{result.var_between:.4g}",
            "within-case variance": f"{result.var_within:.4g}",
            "correlation of the arms": f"{result.correlation:.3g}",
            "method": result.method,
            "simulations": result.n_sims,
        }
    )
    parts = head + facts
    if result.n_cases is not None:
        top = max(3 * result.n_cases, 20)
        sizes = sorted({max(2, round(top * i / 40)) for i in range(1, 41)})
        curve = pd.DataFrame(
            {
                "n_cases": sizes,
                "effect": [
                    minimum_detectable_effect(
                        n,
                        trials,
                        design=PowerDesign.from_components(
                            baseline_rate=result.baseline_rate, var_between=result.var_between,
                            var_within=result.var_within, correlation=result.correlation,
                            alpha=result.alpha, power=max(min(result.power, 0.99), 0.5),
                        ), threshold=result.threshold,
                    ).effect
                    for n in sizes
                ],
            }
        )
        parts = parts + figure_html(
            power_plot(curve, n_cases=result.n_cases, effect=result.effect),
            "power",
            f"Smallest effect detected with power {max(min(result.power, 0.99), 0.5):.0%} "
            f"(Miller's formula) as the number of cases grows; the point is this plan.",
        )
    return styled(parts.html)


def gate_html(result: GateResult) -> str:
    """A gate decision: released or blocked with its reasons, budgets, cases, forest plot."""
    released = result.released
    details = [*result.reasons, *(f"safety regression: {c}" for c in result.safety_regressions)]
    if result.next_step is not None:
        from evalkit.analysis import NextStep

        details.append(NextStep(**result.next_step).text())
    head = banner("improved" if released else "regressed", result.decision, result.message,
                  details)
    budgets = pd.DataFrame([b.__dict__ for b in result.budgets])
    parts = head + html_table(
        budgets,
        columns={"name": "budget", "summary": "measured", "blocked": "blocks"},
        caption=f"Budgets (tier {result.tier})",
        empty="No budget in the policy.",
    )
    cases = pd.DataFrame(result.comparison.get("cases") or [])
    if not cases.empty and {"estimate", "ci_low", "ci_high"} <= set(cases.columns):
        parts = parts + figure_html(
            forest_plot(cases, threshold=result.comparison.get("threshold"), max_cases=20),
            "gate-forest",
            "Per-case change gated on, with intervals.",
        )
    return styled(parts.html)


def _flipped_within(rows: pd.DataFrame, max_pairs: int) -> list[tuple[str, Any, Any]]:
    keys = [c for c in ("case_id", "condition", "provider") if c in rows]
    frame = rows.assign(_passed=rows["passed"].fillna(False).astype(bool))
    share = frame.groupby(keys, sort=True, observed=True)["_passed"].mean().rename("share")
    mixed = share[(share > 0) & (share < 1)].to_frame()
    mixed["balance"] = np.minimum(mixed["share"], 1 - mixed["share"])
    top = mixed.sort_values("balance", ascending=False, kind="stable").head(max_pairs)
    chosen = frame.merge(top.reset_index()[keys], on=keys).sort_values("trial", kind="stable")
    out: list[tuple[str, Any, Any]] = []
    for key in top.index:
        names = key if isinstance(key, tuple) else (key,)
        mask = np.ones(len(chosen), dtype=bool)
        for column, value in zip(keys, names, strict=True):
            mask &= (chosen[column] == value).to_numpy()
        group = chosen[mask]
        good = rows_of(group[group["_passed"]].head(1).drop(columns="_passed"))[0]
        bad = rows_of(group[~group["_passed"]].head(1).drop(columns="_passed"))[0]
        condition = f" ({names[1]})" if len(names) > 1 else ""
        caption = (
            f"case {names[0]}{condition}: trial {good.get('trial')} passed, "
            f"trial {bad.get('trial')} failed"
        )
        out.append((caption, good, bad))
    return out


def _flipped_between(
    base: pd.DataFrame, cand: pd.DataFrame, labels: tuple[str, str], max_pairs: int
) -> list[tuple[str, Any, Any]]:
    keys = [
        c for c in ("lane", "case_id", "condition", "provider", "trial") if c in base and c in cand
    ]
    base = base.reset_index(drop=True)
    cand = cand.reset_index(drop=True)
    merged = base[keys].assign(_b=base.index, _pb=base["passed"].fillna(False).astype(bool))
    merged = merged.merge(
        cand[keys].assign(_c=cand.index, _pc=cand["passed"].fillna(False).astype(bool)), on=keys
    )
    flipped = merged[merged["_pb"] != merged["_pc"]]
    flipped = flipped.drop_duplicates(["case_id", "condition"]).head(max_pairs)
    out: list[tuple[str, Any, Any]] = []
    for row in rows_of(flipped):
        b = rows_of(base.iloc[[int(row["_b"])]])[0]
        c = rows_of(cand.iloc[[int(row["_c"])]])[0]
        outcome = "passed" if row["_pb"] else "failed"
        other = "passed" if row["_pc"] else "failed"
        out.append(
            (
                f"case {row['case_id']} ({row['condition']}), trial {row.get('trial', '')}: "
                f"{outcome} in {labels[0]}, {other} in {labels[1]}",
                b,
                c,
            )
        )
    return out


def flip_pairs(
    run: str | os.PathLike[str],
    rows: pd.DataFrame | None = None,
    *,
    baseline: str | os.PathLike[str] | None = None,
    baseline_rows: pd.DataFrame | None = None,
    labels: tuple[str, str] | None = None,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    max_pairs: int = 5,
    max_chars: int = 900,
) -> Fragment:
    """Two transcripts of the same case side by side: a pass and a fail, or run A and run B.

    Within a run (no ``baseline``), each case, condition and provider whose trials disagree
    gives one passing and one failing trial, the most evenly split cases first. Between two
    runs, each matched item (same case, condition, provider and trial) whose outcome changed
    gives the baseline's and the candidate's transcript. Tool calls and skill loads are marked.

    Args:
        run: The run (the candidate when ``baseline`` is given).
        rows: Its result rows (read when None).
        baseline: A second run: show between-run flips.
        baseline_rows: The baseline's result rows (read when None).
        labels: Column headings (default: the run directories' names, or ``passed``/``failed``).
        runs_dir: Where run ids are looked up.
        max_pairs: Most pairs shown.
        max_chars: Character budget of one transcript.

    Returns:
        The pairs (self-styled, so they read the same in Jupyter and in a report).
    """
    run_dir = resolve_run_dir(run, runs_dir)
    rows = read_run(run_dir) if rows is None else rows
    if baseline is None:
        pairs = _flipped_within(rows, max_pairs)
        base_dir, base_rows = run_dir, rows
        heads = labels or ("a passing trial", "a failing trial")
    else:
        base_dir = resolve_run_dir(baseline, runs_dir)
        base_rows = read_run(base_dir) if baseline_rows is None else baseline_rows
        heads = labels or (base_dir.name, run_dir.name)
        pairs = _flipped_between(base_rows, rows, heads, max_pairs)
    if not pairs:
        return Fragment(styled(note("No flipped item: every pair of outcomes agrees.").html))
    markup = paired_excerpts(
        pairs,
        baseline_run=base_dir,
        candidate_run=run_dir,
        baseline_rows=base_rows,
        candidate_rows=rows,
        labels=heads,
        max_chars=max_chars,
    )
    return Fragment(styled(markup.html))


def register_rich_displays() -> None:
    """Make the renderers above the ``_repr_html_`` of evalkit's result types (and their plots)."""
    register_html(PairedComparison, comparison_html)
    register_html(RunComparison, comparison_html)
    register_html(LiftResult, lift_html)
    register_html(FlipRate, flips_html)
    register_html(Explanation, explanation_html)
    register_html(PowerResult, power_html)
    register_html(GateResult, gate_html)
    register_html(SequentialComparison, sequential_html)
    register_html(SequentialRun, sequential_run_html)
    register_html(AblationResult, ablation_html)
