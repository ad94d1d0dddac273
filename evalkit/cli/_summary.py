"""Human-readable run summary (stdout)."""

from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.table import Table

from evalkit._settings import N_RESAMPLES
from evalkit._terminal import console as text_console
from evalkit.results import RESULT_SCHEMA, RESULTS_FILE, read_table
from evalkit.runner import RunResult
from evalkit.stats import pass_rates

#: What the summary reads of the results (pass rates by condition, clustered by case; errors).
_COLUMNS = ["item_key", "case_id", "condition", "provider", "trial", "passed", "score", "status"]


def print_run_summary(result: RunResult) -> None:
    """Print pass rate per condition with Wilson intervals, errors, and where the run is."""
    # the columns the table needs: the whole frame of a 100,000-item run was ~0.1 GB more
    df = read_table(result.run_dir, RESULTS_FILE, RESULT_SCHEMA).select(_COLUMNS).to_pandas()
    console = text_console(highlight=False, emoji=False)
    graded = df[df["status"] != "ungraded"]
    rates = (
        pass_rates(graded, by=("condition",)) if len(graded)
        else pd.DataFrame(columns=["condition"])
    )
    table = Table(
        title=f"run {result.run_id}: pass rate by condition",
        caption="95% Wilson intervals; with several trials per case, at the effective sample "
        "size of the case-clustered standard error",
    )
    for column in ("condition", "cases", "items", "pass rate", "95% CI", "errors", "ungraded"):
        table.add_column(column, justify="left" if column == "condition" else "right")
    order = list(dict.fromkeys(result.manifest.get("conditions", {}))) or sorted(rates["condition"])
    errors = df[df["status"].isin(("error", "timeout"))].groupby("condition").size()
    ungraded = df[df["status"] == "ungraded"].groupby("condition").size()
    for condition in order:
        row = rates[rates["condition"] == condition]
        if row.empty:
            if ungraded.get(condition, 0):
                table.add_row(condition, "", "0", "ungraded", "", str(int(errors.get(
                    condition, 0))), str(int(ungraded[condition])))
            continue
        r = row.iloc[0]
        table.add_row(
            condition,
            str(int(r["n_cases"])),
            str(int(r["n"])),
            f"{r['estimate']:.1%}",
            f"[{r['ci_low']:.1%}, {r['ci_high']:.1%}]",
            str(int(errors.get(condition, 0))),
            str(int(ungraded.get(condition, 0))),
        )
    console.print(table)
    console.print(
        f"{result.items} items, {result.ok} ok, {result.errors} errors/timeouts, "
        f"{result.cache_hits} from cache"
    )
    if result.ungraded:
        console.print(
            f"{result.ungraded} items ungraded: their expectations have no known truth for the "
            "offline simulated judge, so they neither pass nor fail and are left out of every "
            f"pass rate; grade them: evalkit judge {result.run_id} --judge-provider NAME"
        )
    if result.judge is not None:
        j = result.judge
        console.print(
            f"judge {j['provider']}/{j['model']}: {j['statements_passed']}/{j['statements']} "
            f"expectations passed on {j['items']} items, {j['errors']} judge errors; "
            f"{j['calls']} judge calls, {j['cache_hits']} from cache, judge cost "
            f"${j['cost_usd']:.4f} (apart from the agent's)"
        )
    if "lane" in df.columns and (df["lane"] == "evidence").any():
        _print_evidence_summary(console, result, order)
    console.print(f"run written to {result.run_dir}")


def _print_evidence_summary(console: Console, result: RunResult, order: list[str]) -> None:
    """The evidence lane's completeness per condition, with case-bootstrap intervals."""
    from evalkit.analysis import lift

    # the replicates of evalkit lift, so the two print the same intervals
    evidence = lift(result.run_dir, n_resamples=N_RESAMPLES.default).evidence
    if evidence.empty:
        return
    levels = evidence[(evidence["metric"] == "evidence_completeness")
                      & (evidence["contrast"] == "level")]
    parts = [
        f"{r['condition']} {r['estimate']:.0%} [{r['ci_low']:.0%}, {r['ci_high']:.0%}]"
        for _, r in levels.set_index("condition").reindex(
            [c for c in order if c in set(levels["condition"])]).reset_index().iterrows()
    ]
    n_cases = int(levels["n_cases"].max())
    console.print(
        f"evidence lane ({n_cases} cases): evidence completeness " + ", ".join(parts)
        + "; see `evalkit lift` for report completeness, taxonomy usage and the lifts",
        soft_wrap=True,
    )
