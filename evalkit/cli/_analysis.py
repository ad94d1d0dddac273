"""``evalkit lift``, ``evalkit compare``, ``evalkit flips`` and ``evalkit power``.

Each handler imports only the analysis it runs: ``compare`` never loads the power planner.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalkit._lanes import EVIDENCE_METRICS
from evalkit._percent import percent
from evalkit._settings import (
    ALPHA,
    CASE_CORRECTION,
    CORRECTION,
    POWER,
    ROUND_CASES,
    THRESHOLD,
)
from evalkit.cli._common import (
    add_bootstrap_options,
    add_common_options,
    add_futility_options,
    add_provider_filter,
    add_roles_option,
    futility_arguments,
    pick,
    printed_json,
    split_csv,
)
from evalkit.cli._lines import Bold, Lines
from evalkit.cli._pairwise import add_pairwise_options, pairwise_main
from evalkit.errors import ConfigError, InputError
from evalkit.stats import METRICS  # evalkit.stats._types: no statistics imported to parse

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console
    from rich.table import Table

    from evalkit.analysis import RunComparison
    from evalkit.stats import PairedComparison


def _pct(value: float) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{percent(value):+.1f} pp"


def _share(value: float) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.1%}"


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


#: One line per lift metric: what it measures and how to read its sign. ``{A}``..``{D}`` are
#: the conditions playing each role (``--roles``).
METRIC_DEFINITIONS: dict[str, str] = {
    "realized_lift": "success({B}) - success({A}): what the skill adds when the agent must "
    "load it itself; > 0 the skill helps",
    "oracle_lift": "success({C}) - success({A}): what the skill adds when it is injected, the "
    "ceiling; > 0 the skill text helps",
    "routing_gap": "success({C}) - success({B}): lift lost because the agent does not load the "
    "skill when it should; > 0 routing leaves lift on the table",
    "stale_harm": "success({D}) - success({C}): the outdated text against the current one; "
    "-26.7 pp means 26.7 points fewer passes with the stale text",
    "regression_rate": "share of cases passing under {A} that fail under {B} or {C} (a case "
    "passes with at least half its trials); lower is better",
    "unlock_rate": "share of cases failing under {A} that pass under {B} or {C}; higher is better",
    "routing_efficiency": "({B} - {A}) / max(0.01, {C} - {A}): share of the oracle lift the "
    "agent realises alone; 1 = all of it, above 1 when {B} beats {C} or the oracle lift is "
    "near 0 (read it with its CI)",
    "trigger_precision": "under {B}: of the items where a skill was loaded, the share that "
    "loaded the expected one",
    "trigger_recall": "under {B}: of the items that should load a skill, the share that "
    "loaded the expected one",
    "trigger_f1": "harmonic mean of trigger precision and recall",
    "over_trigger_rate": "under {B}: share of items that should load no skill but loaded one",
    "under_trigger_rate": "under {B}: share of items that should load a skill but loaded none",
}


def configure_lift(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit lift``."""
    p.add_argument("run", help="run directory or run id")
    add_bootstrap_options(p)
    add_roles_option(p)
    add_provider_filter(p)
    add_common_options(p, lift_main)


def configure_compare(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit compare``."""
    p.add_argument("baseline", help="baseline run (directory or id)")
    p.add_argument("candidate", nargs="?", help="candidate run; omit with --conditions A,B")
    p.add_argument("--conditions", help="A,B: compare two conditions of one run (or filter)")
    p.add_argument(
        "--metric",
        default="passed",
        choices=[*METRICS, *EVIDENCE_METRICS],
        help="pass rate, score, or an evidence-lane metric (over the items that measured it)",
    )
    THRESHOLD.add_argument(p, default=None)
    CORRECTION.add_argument(p)
    CASE_CORRECTION.add_argument(p)
    add_bootstrap_options(p)
    p.add_argument(
        "--fail-on-regression", action="store_true", help="exit 1 when the verdict is regressed"
    )
    p.add_argument(
        "--sequential",
        action="store_true",
        help="anytime-valid verdict (confidence sequence over cases, a look after every "
        "--round-cases; a run of run --until-verdict is read with its own looks)",
    )
    ROUND_CASES.add_argument(p, when="with --sequential: ")
    p.add_argument(
        "--plan-cases", type=int, help="with --sequential: cases the bets are tuned for"
    )
    add_futility_options(p)
    add_provider_filter(p)
    add_pairwise_options(p)
    add_common_options(p, compare_main)


def configure_flips(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit flips``."""
    p.add_argument("run_a", help="run directory or id")
    p.add_argument("run_b", nargs="?", help="second run (omit for within-run flips)")
    p.add_argument("--top", type=int, default=10, help="most unstable cases to list")
    add_provider_filter(p)
    add_common_options(p, flips_main)


def configure_power(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit power``."""
    p.add_argument("--cases", type=int, help="number of cases")
    p.add_argument("--trials", type=int, help="trials per case and arm")
    p.add_argument("--effect", type=float, help="effect to detect, e.g. 0.1 for 10 pp")
    p.add_argument("--baseline-rate", type=float, help="baseline pass rate (default 0.5)")
    ALPHA.add_argument(p)
    POWER.add_argument(p)
    THRESHOLD.add_argument(p, default=None)
    p.add_argument(
        "--equivalence", action="store_true",
        help="plan the cases that show no practical difference (the whole interval within "
        "+-threshold) when the true change is --effect (default 0)",
    )
    p.add_argument(
        "--case-effect", type=float,
        help="plan the trials per case at which the case screen names a case whose pass rate "
        "moves by this much (e.g. -0.4), corrected across --cases case rows",
    )
    CASE_CORRECTION.add_argument(p, when="with --case-effect: ")
    p.add_argument("--from-run", help="estimate variances from this run")
    p.add_argument("--conditions", help="A,B: the two arms in --from-run")
    p.add_argument(
        "--sequential",
        action="store_true",
        help="with --effect: also simulate run --until-verdict (expected cases to a verdict)",
    )
    p.add_argument(
        "--max-cases", type=int, help="budget of cases of the simulated sequential design"
    )
    ROUND_CASES.add_argument(p, when="with --sequential: ")
    p.add_argument(
        "--adaptive-trials",
        action="store_true",
        help="with --sequential: simulate it with adaptive trials (expected work items)",
    )
    p.add_argument(
        "--providers",
        type=int,
        default=1,
        help="providers that answer the same cases (the pooled verdict; default 1)",
    )
    p.add_argument(
        "--provider-correlation",
        type=float,
        default=1.0,
        help="with --providers: share of the case-to-case spread of the effect every "
        "provider shares (0..1, default 1: the cautious assumption)",
    )
    add_futility_options(p)
    add_common_options(p, power_main)


def lift_main(args: argparse.Namespace) -> int:
    """Print the lift metrics."""
    from evalkit.analysis import lift

    result = lift(
        args.run,
        n_resamples=args.resamples,
        **pick(args, "roles", "seed", "runs_dir", "providers"),
    )
    if printed_json(args, result):
        return 0
    from rich.markup import escape

    from evalkit._terminal import console as text_console

    console = text_console(highlight=False, emoji=False)
    empty: dict[str, list[str]] = {}
    for (provider, lane), group in result.metrics.groupby(["provider", "lane"], sort=True):
        if group["estimate"].isna().all():  # said in one line below, not a table of n/a
            ran_in = result.success.query("provider == @provider and lane == @lane")["condition"]
            empty.setdefault(", ".join(sorted(map(str, ran_in))) or "no condition", []).append(
                f"{provider} / {lane}"
            )
            continue
        console.print(_lift_table(
            f"{result.run_id or 'data'} - {provider} / {lane} (95% CI)", group
        ))
    for conditions, names in empty.items():
        console.print(
            f"no lift metric for {', '.join(names)}: ran only {conditions} (every metric "
            "compares two "
            "conditions)", markup=False, soft_wrap=True,
        )
    for lane, group in result.pooled.groupby("lane", sort=True):
        console.print(_lift_table(
            f"{result.run_id or 'data'} - pooled over providers / {lane!s} (95% CI; each "
            "case once, case bootstrap)",
            group,
        ))
    for scope in result.pooled_scope:
        if scope.note():
            console.print(f"pooled {scope.note()}", markup=False, soft_wrap=True)
    if result.trigger_note:
        console.print(result.trigger_note, markup=False, soft_wrap=True)
    for _, row in result.notes.iterrows():
        console.print(
            f"{row['provider']} / {row['lane']}: {row['note']}; the metrics that need it are "
            "n/a",
            markup=False,
        )
    console.print(
        "pp = percentage points; success = pass rate with trials averaged per case first; "
        "95% CI from a case bootstrap",
        soft_wrap=True,
    )
    measured = result.metrics.dropna(subset=["estimate"])
    shown = set(measured["metric"])
    for name, definition in METRIC_DEFINITIONS.items():
        if name in shown:
            line = f"  {name}: {escape(definition.format(**result.roles))}"
            console.print(line, soft_wrap=True)
    unmeasured = [m for m in dict.fromkeys(result.metrics["metric"]) if m not in shown]
    if unmeasured:
        console.print(
            f"  n/a everywhere: {', '.join(unmeasured)} (their conditions are not in the data: "
            f"roles {_role_text(result.roles, result.success)})",
            markup=False, soft_wrap=True,
        )
    if not result.missing.empty:
        console.print(f"{len(result.missing)} case(s) lack a condition (see --json missing_cases)")
    if not result.evidence.empty:
        _print_evidence(console, result.evidence, result.run_id)
    if not result.failure_causes.empty:
        from evalkit.results import describe_causes

        by = ["provider", "condition"] if result.failure_causes["provider"].nunique() > 1 else [
            "condition"
        ]
        console.print("what the failures are made of (failing items by primary cause):")
        for line in describe_causes(result.failure_causes, by=by):
            console.print(f"  {line}", markup=False, soft_wrap=True)
        _print_failure_changes(console, result.failure_changes, several=len(by) > 1)
    return 0


def _print_failure_changes(console: Console, changes: Any, *, several: bool) -> None:
    """Each condition's failures by cause against the baseline condition's (role A)."""
    if changes.empty:
        return
    from evalkit.results import describe_changes

    base = changes["baseline_condition"].iloc[0]
    console.print(f"failing items by cause, {base} (A) -> each other condition:",
                  markup=False, soft_wrap=True)
    for (provider, condition), group in changes.groupby(["provider", "condition"], sort=False):
        label = f"{provider} / {condition}" if several else str(condition)
        for line in describe_changes(group):
            console.print(f"  {label}: {line}", markup=False, soft_wrap=True)


def _role_text(roles: Mapping[str, str], success: Any) -> str:
    """``A=none (present), C=preloaded (absent), ...``: which role conditions the data has."""
    present = set(success["condition"].astype(str))
    return ", ".join(
        f"{role}={condition} ({'present' if condition in present else 'absent'})"
        for role, condition in sorted(roles.items())
    )


def _print_evidence(console: Console, evidence: Any, run_id: str) -> None:
    """The evidence lane's metrics: one table per provider/lane, levels then lifts."""
    from rich.markup import escape
    from rich.table import Table

    for (provider, lane), group in evidence.groupby(["provider", "lane"], sort=True):
        table = Table(title=f"{run_id or 'data'} - {provider} / {lane}: evidence (95% CI)")
        for column in ("metric", "condition / lift", "estimate", "95% CI", "cases"):
            left = column in ("metric", "condition / lift")
            table.add_column(column, justify="left" if left else "right")
        for _, row in group.iterrows():
            level = row["contrast"] == "level"
            what = row["condition"] if level else f"{row['contrast']} ({row['condition']})"
            fmt = _share if level else _pct
            table.add_row(
                row["metric"],
                what,
                fmt(row["estimate"]),
                escape(f"[{fmt(row['ci_low'])}, {fmt(row['ci_high'])}]"),
                str(row["n_cases"]),
            )
        console.print(table)
    console.print(
        "evidence_completeness: share of artifact requirements met (the manifest counts as "
        "one); report_completeness: share of required sections present; taxonomy_usage: share "
        "of notes using an issue label. Compare them between runs with compare --metric NAME.",
        soft_wrap=True,
    )


def compare_main(args: argparse.Namespace) -> int:
    """Print the verdict and the named cases."""
    from evalkit.analysis import compare
    from evalkit.stats import DEFAULT_THRESHOLD

    if args.pairwise:
        return pairwise_main(args)
    conditions = split_csv(args.conditions) or None
    if args.sequential:  # a run of run --until-verdict knows its two conditions
        return _sequential_main(args, conditions)
    if args.plan_effect is not None or args.futility_beta is not None:
        raise ConfigError("--plan-effect and --futility-beta: only with --sequential")
    if args.candidate is None and (conditions is None or len(conditions) != 2):
        raise ConfigError("compare needs CANDIDATE, or --conditions A,B to compare within a run")
    result = compare(  # builds the one CompareOptions of the comparison
        args.baseline,
        args.candidate,
        conditions=conditions,
        metric=args.metric,
        threshold=DEFAULT_THRESHOLD if args.threshold is None else args.threshold,
        correction=args.correction,
        case_correction=args.case_correction,
        seed=args.seed,
        n_resamples=args.resamples,
        **pick(args, "runs_dir", "providers"),
    )
    if not printed_json(args, result):
        out = Lines()
        _print_comparison(out, result)
        for label, cases in (
            ("regressed", result.regressed_cases),
            ("improved", result.improved_cases),
        ):
            out.line(f"{label} cases: {', '.join(cases) if cases else 'none'}")
            for line in _named_case_lines(result.stats, label):
                out.line(line)
            for line in _case_reason_lines(result, label):
                out.line(line)
        if result.case_verdict_note:
            out.line(f"  ({result.case_verdict_note})")
        for line in _failure_change_lines(result):
            out.line(line)
        follow_up = _confirm_line(args, result.stats)
        if follow_up:
            out.line(follow_up)
        from evalkit.stats import unmatched_lines

        for line in unmatched_lines(result):
            out.line(line)
    return 1 if args.fail_on_regression and result.verdict == "regressed" else 0


def _failure_change_lines(result: RunComparison) -> list[str]:
    """The compared failing items by outcome and cause, baseline -> candidate."""
    if not result.failure_changes:
        return []
    import pandas as pd

    from evalkit.results import describe_changes

    head = (f"failing items by cause, {result.baseline_label} -> {result.candidate_label} "
            "(each failure counted once, under its primary cause):")
    changes = pd.DataFrame(list(result.failure_changes))
    return [head, *(f"  {line}" for line in describe_changes(changes))]


def _named_case_lines(result: PairedComparison, verdict: str) -> list[str]:
    """One line per named case: its change pooled over providers, interval and adjusted p."""
    rows = result.case_rows
    if rows is None or rows.empty or result.case_screen is None:
        return []
    lines = []
    for row in rows[rows["verdict"] == verdict].to_dict("records"):
        where = f" ({row['condition']})" if "condition" in row else ""
        lines.append(
            f"  {row['case_id']}{where}: {_pct(row['candidate_rate'] - row['baseline_rate'])} "
            f"[{_pct(row['ci_low'])}, {_pct(row['ci_high'])}], "
            f"{row['baseline_rate']:.0%} -> {row['candidate_rate']:.0%} over "
            f"{int(row['n_baseline'])} vs {int(row['n_candidate'])} trials, adjusted p "
            f"{row['p_adjusted']:.2g} ({result.case_correction})"
        )
    return lines


def _confirm_line(args: argparse.Namespace, result: PairedComparison) -> str:
    """The targeted follow-up, offered when a case is named or the change is concentrated."""
    from evalkit.analysis import cases_past_threshold

    named = [*result.regressed_cases, *result.improved_cases]
    concentrated = result.case_interaction is not None and result.case_interaction.differs
    moved = [] if named else cases_past_threshold(result)[0][:3]
    if result.metric != "passed" or not (named or concentrated or moved):
        return ""
    import shlex

    runs = [args.baseline] if args.candidate is None else [args.baseline, args.candidate]
    command = ["evalkit", "confirm", *runs]
    if args.conditions:
        command += ["--conditions", args.conditions]
    else:  # confirm reruns one condition: the one whose change was largest
        parts = [(name, part) for name, part in result.by_condition if part.n_cases > 0]
        if len(result.by_condition) > 1 and parts:
            name, _ = max(parts, key=lambda item: abs(float(item[1].delta.estimate)))
            command += ["--conditions", name]
    for case_id in moved:
        command += ["--case", case_id]
    what = (f"the {len(named)} named case(s)" if named else
            f"the {len(moved)} case(s) that moved most" if moved else
            "the cases its screen ranks strongest (or name them with --case)")
    imported = _imported_formats(args, runs)
    if imported:
        cases = ", ".join(named or moved) or "the cases that moved most"
        return (f"follow-up: these runs were imported from {' and '.join(imported)} logs, which "
                f"evalkit cannot rerun: to settle {cases}, rerun them in their harness with "
                "more trials a side (at least 4; 8-10 is typical, e.g. Inspect's --epochs), "
                "import those logs and compare again")
    return (f"follow-up: {shlex.join(command)} --suite SUITE --dry-run  (reruns only {what} "
            "on fresh samples, both sides' stored skill texts, its trials spread over them by "
            "Neyman allocation of their screened pairs, and prices it before spending; drop "
            "--dry-run to run it)")


def _imported_formats(args: argparse.Namespace, runs: list[str]) -> list[str]:
    """The import formats of the compared runs that were imported (their manifests' source)."""
    from evalkit.results import peek_manifest, resolve_run_dir

    formats: list[str] = []
    for run in runs:
        try:
            source = peek_manifest(resolve_run_dir(run, args.runs_dir)).get("source")
        except InputError:
            continue
        found = str(source.get("format", "")) if isinstance(source, dict) else ""
        if found and found not in formats:
            formats.append(found)
    return formats


def _case_reason_lines(result: RunComparison, verdict: str) -> list[str]:
    """Why each case of a verdict failed where it did: one line per case and side."""
    if result.case_reasons is None:
        return []
    from evalkit.analysis import side_line

    lines = []
    for index, row in enumerate(result.cases.to_dict("records")):
        if row["verdict"] != verdict:
            continue
        where = " / ".join(str(row[c]) for c in ("condition", "provider") if c in row)
        reasons = result.case_reasons[index]
        lines.append(f"  {row['case_id']} ({where}):")
        for side, label in (("baseline", result.baseline_label),
                            ("candidate", result.candidate_label)):
            lines.append(f"    {side_line(label, reasons[side])}")
    return lines


def _sequential_main(args: argparse.Namespace, conditions: tuple[str, ...] | None) -> int:
    """``evalkit compare --sequential``: the verdict of the confidence sequence, look by look."""
    from evalkit.analysis import RunComparison, sequential_compare
    from evalkit.stats import CompareOptions

    options = CompareOptions(  # the one CompareOptions of the comparison
        metric=args.metric,
        seed=args.seed,
        # no --threshold: a run of run --until-verdict keeps its recorded one
        **({} if args.threshold is None else {"threshold": args.threshold}),
    )
    result = sequential_compare(
        args.baseline,
        args.candidate,
        conditions=conditions,
        options=options,
        round_cases=args.round_cases,
        **pick(args, "plan_cases", "runs_dir"),
        **futility_arguments(args),
    )
    if not printed_json(args, result):
        out = Lines()
        _print_comparison(out, RunComparison(result, next_step=result.next_step))
        from evalkit.stats import ALLOCATION_METHOD

        unit = "pairs" if result.method == ALLOCATION_METHOD else "cases"
        for look in result.looks:
            reason = f" ({look.reason})" if look.reason else ""
            out.line(
                f"  look at {look.n_cases} {unit}: {_pct(look.estimate)} "
                f"[{_pct(look.ci_low)}, {_pct(look.ci_high)}] -> {look.verdict}{reason}"
            )
        stopped = "not settled" if result.stopped_at is None else f"{result.stopped_at} {unit}"
        out.line(f"stopped at: {stopped}; method: {result.method}")
    return 1 if args.fail_on_regression and result.verdict == "regressed" else 0


def _delta_text(result: PairedComparison) -> str:
    d = result.delta
    return f"delta {_pct(d.estimate)} [{_pct(d.ci_low)}, {_pct(d.ci_high)}]"


def _print_comparison(out: Lines, result: RunComparison) -> None:
    """The verdict, per condition when two runs share several, and the notes."""
    parts = result.by_condition if len(result.by_condition) > 1 else ()
    if parts:
        verdicts: dict[str, list[str]] = {}
        for name, part in parts:
            verdicts.setdefault(part.verdict, []).append(name)
        said: list[str] = ["verdict by condition: "]
        for index, (verdict, names) in enumerate(verdicts.items()):
            said += ["; "] if index else []
            said += [Bold(verdict), f" for {', '.join(names)}"]
        out.line(*said)
        width = max(len(name) for name, _ in parts)
        out.line(
            "  (each verdict over its own cases; p Holm-adjusted across conditions, a direction "
            f"needs it below {1 - result.delta.confidence:g} and the interval past the threshold)"
        )
        from evalkit.stats import family_columns

        for (name, part), family in zip(parts, family_columns(parts), strict=True):
            reused = f"; {part.reused_items} reused pair(s) left out" if part.reused_items else ""
            out.line(
                f"  {name:<{width}}  {part.verdict:<12}  {_delta_text(part)} over "
                f"{part.n_cases} cases; p {_num(family['p_adjusted'], 3)}{reused}"
            )
        out.line(f"overall, {result.scope}:")
    scope = f" ({result.scope})" if result.scope and not parts else ""
    out.line(
        "verdict: ",
        Bold(result.verdict),
        f"  {_delta_text(result.stats)} over {result.n_cases} cases{scope}; "
        f"wins {result.wins}, losses {result.losses}, ties {result.ties}",
    )
    if result.case_summary:
        out.line(Bold(result.case_summary))
    if result.equivalence["equivalent"] or "cannot be claimed" in result.equivalence["note"]:
        out.line(result.equivalence["note"])
    if result.case_interaction is not None:
        out.line(result.case_interaction.line())
    if result.sign_flip is not None:
        out.line(
            f"sign-flip test over {result.sign_flip.n_cases} cases: "
            f"{result.sign_flip.text()}"
            + (" (exact: McNemar's test on the cases that moved)"
               if result.sign_flip.method == "binomial" else "")
        )
    if result.by_provider:
        _print_providers(out, result.stats)
    if result.verdict_note:
        out.line(f"note: {result.verdict_note}")
    if result.next_step is not None:
        from evalkit.analysis import NextStep

        out.line(NextStep(**result.next_step).text())
    if result.reuse_note and result.reuse_note != result.verdict_note:
        out.line(f"reused: {result.reuse_note}")
    if result.ungraded_note:
        out.line(f"ungraded: {result.ungraded_note}")
    calibration = result.judge_calibration
    if calibration is not None:
        if calibration["status"] == "calibrated":
            out.line(f"judge calibrated: {calibration['message']}")
        else:
            out.line(
                Bold(f"judge {calibration['status']}"),
                f": this verdict rests on judged expectations: {calibration['message']}",
            )


def _print_providers(out: Lines, result: PairedComparison) -> None:
    """One line per provider (its own verdict; Holm across providers) and the spread line."""
    table = result.provider_table()
    left_out = result.left_out_reasons
    width = max(len(str(name)) for name in table["provider"])
    counted = table[~table["provider"].astype(str).isin(left_out)]
    out.line(
        f"by provider ({len(counted)}; each verdict over its own cases, p Holm-adjusted across "
        f"providers, a direction needs it below {1 - result.delta.confidence:g} and the "
        "interval past the threshold):"
    )
    for row in counted.to_dict("records"):
        out.line(
            f"  {row['provider']!s:<{width}}  {row['verdict']:<12}  delta "
            f"{_pct(row['estimate'])} [{_pct(row['ci_low'])}, {_pct(row['ci_high'])}]"
            f" over {row['n_cases']} cases; p {_num(row['p_adjusted'], 3)}"
        )
    if left_out:
        out.line(f"  not compared: {result.left_out_text()}")
    if result.heterogeneity is not None:
        out.line(result.heterogeneity.line())


def flips_main(args: argparse.Namespace) -> int:
    """Print the flip rate and the most unstable cases."""
    from evalkit.analysis import flips
    from evalkit.results import NO_REASONS

    result = flips(args.run_a, args.run_b, runs_dir=args.runs_dir, providers=args.providers)
    if printed_json(args, result):
        return 0
    kind = "between runs" if args.run_b else "within run (trial pairs)"
    if result.n_pairs == 0:
        print(f"flip rate {kind}: not measurable here (0 pairs)"
              + (f"; {result.reused_items} reused pairs left out" if result.reused_items else ""))
    else:
        print(
            f"flip rate {kind}: {_num(result.flip_rate)} "
            f"[{_num(result.ci_low)}, {_num(result.ci_high)}] over {result.n_pairs} pairs"
            + (f" ({result.reused_items} reused pairs left out)" if result.reused_items else "")
        )
    if result.message:
        print(f"note: {result.message}")
    for line in result.by_provider.to_dict("records"):
        print(
            f"  provider {line['provider']}: {_num(line['flip_rate'])} [{_num(line['ci_low'])}, "
            f"{_num(line['ci_high'])}] over {line['n_pairs']} pairs"
        )
    table = result.by_case.dropna(subset=["estimate"]).sort_values("estimate", ascending=False)
    table = table[table["estimate"] > 0]  # a case that never flipped is not "unstable"
    if not table.empty:
        header = "case\tcondition" + ("\tprovider" if "provider" in table else "")
        print(f"most unstable cases ({min(args.top, len(table))} of {len(table)} that flipped;"
              " flip rate):")
        print(f"  {header}\tflip rate")
    elif result.n_pairs:
        print("no case flipped: every case gave the same outcome every time")
    unrecorded = 0
    for _, row in table.head(args.top).iterrows():
        provider = f"\t{row['provider']}" if "provider" in row else ""
        print(
            f"  {row['case_id']}\t{row.get('condition', '')}{provider}\t{row['estimate']:.2f}"
        )
        if row.get("causes") and row.get("example") == NO_REASONS:
            unrecorded += 1  # nothing to say per case: said once below
        elif row.get("causes"):
            print(f"      failing: {row['causes']} — {row['example']}")
    if unrecorded:
        print(f"why: {NO_REASONS} for the failing trials of {unrecorded} case(s) listed "
              "(the run has no scores or errors to read them from)")
    return 0


def power_main(args: argparse.Namespace) -> int:
    """Print the planning answer."""
    from evalkit.analysis import power

    result = power(
        conditions=split_csv(args.conditions) or None,
        **pick(args, "cases", "trials", "effect", "baseline_rate", "alpha", "power"),
        **pick(args, "threshold", "from_run", "runs_dir"),
        sequential=args.sequential,
        max_cases=args.max_cases,
        round_cases=args.round_cases,
        adaptive_trials=args.adaptive_trials,
        **futility_arguments(args),
        **pick(args, "providers", "provider_correlation"),
        equivalence=args.equivalence,
        case_effect=args.case_effect,
        case_correction=args.case_correction,
    )
    if printed_json(args, result):
        return 0
    if args.case_effect is not None:
        trials = "unreachable" if result.n_trials is None else result.n_trials
        print(f"trials per case to name a case that moves {_pct(result.effect)}: {trials}  "
              f"(case rows {result.n_cases}, power {_num(result.power, 2)}, alpha "
              f"{result.alpha})")
        print(f"note: {result.note}")
        return 0
    if args.equivalence:
        margin = f"±{(result.threshold or 0.0) * 100:g} pp"
        print(
            f"cases needed to show no practical difference (within {margin}): "
            f"{'unreachable' if result.n_cases is None else result.n_cases}  (trials "
            f"{result.n_trials}, true change {_pct(result.effect)}, power "
            f"{_num(result.power, 2)}, alpha {result.alpha})"
        )
        print(f"note: {result.note}")
        return 0
    if result.n_cases is None and args.cases is None:
        print(result.note)
        return 0
    verdict = "regressed" if result.effect is not None and result.effect < 0 else "improved"
    if args.effect is not None and args.cases is None:
        answer = f"cases needed for the verdict {verdict}: {result.n_cases}"
    elif args.cases is not None and args.effect is None:
        answer = f"minimum detectable effect: {_pct(result.effect)}"
    elif args.trials is None:
        answer = f"trials per case needed: {result.n_trials}"
    else:
        answer = f"power of the verdict procedure: {_num(result.power, 2)}"
    print(
        f"{answer}  (cases {result.n_cases}, trials {result.n_trials}, effect "
        f"{_pct(result.effect)}, power {_num(result.power, 2)}, alpha {result.alpha}, "
        f"method {result.method})"
    )
    if result.note and (args.providers != 1 or result.sequential is None):
        print(f"note: {result.note}")
    if result.sequential is not None:
        plan = result.sequential
        ratio = plan["ratio_to_fixed"]
        detected = plan[verdict]
        print(f"model: {result.note}")
        print(
            f"sequential (run --until-verdict --plan-cases {result.n_cases}): expected "
            f"{_num(plan['expected_cases'], 1)} cases to a verdict (median "
            f"{_num(plan['median_cases'], 1)}, 90th percentile {_num(plan['p90_cases'], 1)}, "
            f"{verdict} in {detected * 100:.0f} % of {plan['n_sims']} simulations, budget "
            f"{plan['max_cases']} cases)"
            + ("" if ratio is None else f"; {_num(ratio, 2)} x the fixed design")
        )
        if plan["equal_power_cases"] is not None:
            print(
                f"at equal error rates: a fixed design with the power the sequential one showed "
                f"({_num(plan['equal_power'], 2)}, the lower 95 % bound of its simulated "
                f"{detected * 100:.0f} %) needs {plan['equal_power_cases']} cases; "
                f"{_num(plan['ratio_to_equal_power'], 2)} x that"
            )
        if plan.get("plan_effect") is not None:
            print(
                f"with --plan-effect {plan['plan_effect']:g} (beta {plan['futility_beta']:g}): "
                f"stopped futile at the planned-effect boundary in "
                f"{plan['futile_planned'] * 100:.0f} % of the simulations"
            )
        if "expected_items" in plan:
            items_ratio = plan["items_ratio_to_fixed"]
            print(
                f"with --adaptive-trials: expected {_num(plan['expected_items'], 0)} work items "
                f"to a verdict ({plan['stage_two_share'] * 100:.0f} % of cases ran all "
                f"{plan['n_trials']} trials)"
                + ("" if items_ratio is None else
                   f"; {_num(items_ratio, 2)} x the fixed design's items")
                + ("" if plan["items_ratio_to_equal_power"] is None else
                   f", {_num(plan['items_ratio_to_equal_power'], 2)} x at equal error rates")
            )
    return 0


def _lift_table(title: str, group: pd.DataFrame) -> Table:
    """One group of lift metrics as a rich table (rates as numbers, lifts in pp)."""
    from rich.markup import escape
    from rich.table import Table  # only lift prints a table

    table = Table(title=title)
    for column in ("metric", "estimate", "95% CI", "cases"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for _, row in group.iterrows():
        rate = row["metric"].endswith("_rate") or row["metric"].startswith("trigger")
        fmt = _num if rate or row["metric"] == "routing_efficiency" else _pct
        table.add_row(
            row["metric"],
            fmt(row["estimate"]),
            escape(f"[{fmt(row['ci_low'])}, {fmt(row['ci_high'])}]"),
            str(row["n_cases"]),
        )
    return table
