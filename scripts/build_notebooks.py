"""Write the report notebooks in ``notebooks/`` (outputs stripped, stable cell ids).

Usage::

    .venv/bin/python scripts/build_notebooks.py          # rewrite notebooks/*.ipynb
    .venv/bin/python scripts/build_notebooks.py --check  # exit 1 if a notebook is out of date

The notebooks are the source of truth for what a report shows, but writing them from this
script keeps them reviewable (plain Python strings below), free of outputs and of execution
counts, and with deterministic cell ids. Each report notebook has one cell tagged
``parameters`` (papermill) and calls ``evalkit`` / ``evalkit.report`` functions only: no
statistic is computed in a notebook, and no HTML is built by hand (``evalkit.report`` escapes
every untrusted string).

The cells below write ``rk.NAME`` for the ``evalkit.report`` helpers; :func:`build` turns
that into plain ``NAME`` calls and an explicit ``from evalkit.report import ...`` listing
exactly the names the notebook uses (in place of the ``import evalkit.report as rk`` line).
Explicit imports keep working even if ``evalkit.report`` is also bound to the ``report``
function at the top level of the package.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "notebooks"

Cell = tuple[str, str, tuple[str, ...]]
HELPER = re.compile(r"\brk\.(\w+)")
ALIAS_IMPORT = "import evalkit.report as rk"


def md(text: str) -> Cell:
    """A Markdown cell."""
    return ("markdown", text.strip("\n"), ())


def code(text: str, *tags: str) -> Cell:
    """A code cell (optionally tagged)."""
    return ("code", text.strip("\n"), tuple(tags))


def setup(*imports: str, package: bool = True) -> Cell:
    """The imports cell of a report notebook (``rk`` stands for the helpers it uses)."""
    lines = ["from IPython.display import display", ""]
    if package:
        lines.append("import evalkit")
    lines += sorted([*imports, ALIAS_IMPORT], key=lambda line: line.split()[1])
    return code("\n".join(lines))


LIFT_DEFINITIONS = """
| metric | definition (A = none, B = self-load, C = preloaded, D = stale) |
|---|---|
| realized lift | success(B) − success(A): what the skill brings when the agent must find it |
| oracle lift | success(C) − success(A): what it brings when it is injected up front |
| routing gap | success(C) − success(B): what is lost because the agent does not load it |
| stale harm | success(D) − success(C): what an old or wrong version of the skill costs |
| regression rate | share of cases passing under A that fail under B or C |
| unlock rate | share of cases failing under A that pass under B or C |
| routing efficiency | (B − A) / max(ε, C − A) |

Each metric has a case-bootstrap confidence interval (cases resampled jointly for every
metric of a provider and lane); a case missing a condition is listed, never silently dropped.
"""

RUN_REPORT: list[Cell] = [
    md(
        """
# Run report

What happened in one run: pass rates with confidence intervals, the lift the skill brings,
how the agent routed to its skills, what failed and why. Intervals and metrics come from
`evalkit.stats` and `evalkit.analysis`; cases are the clusters (trials of a case are averaged
first). Model output below is shown as text.
"""
    ),
    code(
        """
run: str = ""  # run directory or run id (required)
runs_dir: str = "runs"  # where run ids are looked up
confidence: float = 0.95  # confidence level of every interval
n_resamples: int = 2000  # bootstrap replicates of the lift intervals
seed: int = 0  # bootstrap seed
top_n: int = 10  # rows of the slowest and most expensive tables
max_transcripts: int = 6  # failing transcript excerpts shown
excerpt_chars: int = 1200  # characters per transcript excerpt
max_facets: int = 8  # most panels per figure (providers, lanes)
""",
        "parameters",
    ),
    setup(
        "from evalkit.analysis import LIFT_METRICS, TRIGGER_METRICS",
        "from evalkit.errors import InputError",
        "from evalkit.results import read_manifest",
        "from evalkit.stats import pass_rates",
    ),
    code(
        """
if not run:
    raise ValueError("set the `run` parameter to a run directory or run id")
rows = evalkit.read_run(run, runs_dir=runs_dir)
manifest = read_manifest(run, runs_dir=runs_dir)
"""
    ),
    md("## Summary"),
    code(
        """
display(rk.summary_cards(rows, pass_rates(rows, by=[], confidence=confidence)))
display(rk.run_facts(rows, manifest))
"""
    ),
    md(
        """
## Pass rates

The pass rate of a group is the mean over its cases of each case's pass rate; errors and
timeouts count as failures. Whiskers are confidence intervals with cases as clusters.

### By condition
"""
    ),
    code(
        """
by_condition = pass_rates(rows, by=["condition"], confidence=confidence)
display(rk.figure_html(
    rk.rate_plot(by_condition, title="Pass rate by condition"),
    "pass-rate-condition",
    "Pass rate by condition, with confidence intervals (cases as clusters).",
))
display(rk.interval_table(
    by_condition, ["condition"], header="pass rate", table_id="rates-condition"
))
"""
    ),
    md("### By provider and condition"),
    code(
        """
by_provider = pass_rates(rows, by=["provider", "condition"], confidence=confidence)
display(rk.figure_html(
    rk.rate_plot(by_provider, facet="provider", title="Pass rate by provider and condition",
                 max_facets=max_facets),
    "pass-rate-provider",
    "Pass rate per provider and condition, with confidence intervals.",
))
display(rk.interval_table(by_provider, ["provider", "condition"], header="pass rate"))
"""
    ),
    md("### By lane and condition"),
    code(
        """
by_lane = pass_rates(rows, by=["lane", "condition"], confidence=confidence)
display(rk.figure_html(
    rk.rate_plot(by_lane, facet="lane", title="Pass rate by lane and condition",
                 max_facets=max_facets),
    "pass-rate-lane",
    "Pass rate per lane (prompt, execution, evidence) and condition, with confidence intervals.",
))
display(rk.interval_table(by_lane, ["lane", "condition"], header="pass rate"))
"""
    ),
    md("## Skill lift\n" + LIFT_DEFINITIONS),
    code(
        """
try:
    lifted = evalkit.lift(rows, n_resamples=n_resamples, confidence=confidence, seed=seed)
except InputError as exc:
    lifted = None
    display(rk.note(f"No lift metric for this run: {exc}", "warn"))
if lifted is not None:
    display(rk.figure_html(
        rk.lift_plot(lifted.metrics),
        "lift",
        "Lift metrics per provider and lane, with case-bootstrap confidence intervals.",
    ))
    display(rk.metrics_table(lifted.metrics, LIFT_METRICS, table_id="lift-metrics"))
    display(rk.missing_cases(lifted))
"""
    ),
    md(
        """
## Routing

Under **self-load** the agent decides whether to load a skill. Rows: the skill a case expects
(`none`: it should load none); columns: the skill the agent loaded, read from its transcript.
"""
    ),
    code(
        """
display(rk.html_table(
    rk.trigger_confusion(rows),
    caption="Trigger confusion matrix (items under self-load)",
    table_id="trigger-confusion",
    empty="no self-load item in this run",
))
if lifted is not None:
    display(rk.metrics_table(lifted.metrics, TRIGGER_METRICS, caption="Trigger metrics"))
"""
    ),
    md(
        """
## Errors and timeouts

An error or a timeout is a row of its own (all-settled runs), counted as a failure in the pass
rates above.
"""
    ),
    code(
        """
display(rk.html_table(
    rk.errors_by_class(rows),
    formats={"share": rk.pct},
    caption="By status and error class",
    table_id="errors",
    empty="No error and no timeout: every item finished.",
))
display(rk.html_table(rk.status_by(rows, "condition"), caption="Outcomes by condition"))
display(rk.html_table(rk.status_by(rows, "provider"), caption="Outcomes by provider"))
"""
    ),
    md("## Slowest items"),
    code(
        """
display(rk.html_table(
    rk.top_items(rows, "latency_s", top_n),
    formats={"latency_s": rk.seconds, "cost_usd": rk.usd},
    table_id="slowest",
))
"""
    ),
    md("## Most expensive items"),
    code(
        """
display(rk.html_table(
    rk.top_items(rows, "cost_usd", top_n),
    formats={"latency_s": rk.seconds, "cost_usd": rk.usd},
    table_id="costliest",
))
"""
    ),
    md(
        """
## Failing transcripts

Excerpts of failing items, one per case first (wrong answers before errors and timeouts): the
prompt, then the last events of the transcript.
"""
    ),
    code(
        """
display(rk.excerpts(
    run, rk.failing_items(rows, max_transcripts), runs_dir=runs_dir, rows=rows,
    max_chars=excerpt_chars, empty="No failing item.",
))
"""
    ),
    md("## About this report"),
    code(
        """
display(rk.key_values({
    "confidence level": f"{confidence:.0%}",
    "pass-rate intervals": ", ".join(sorted(set(by_condition["method"]))),
    "lift intervals": f"case bootstrap, {n_resamples:,} resamples, seed {seed}",
    "evalkit": evalkit.__version__,
}))
"""
    ),
]

COMPARE: list[Cell] = [
    md(
        """
# Comparison

Did the candidate do better, worse, or can we not tell yet? Cases are paired (and trials line
up by number); the overall interval is a paired cluster bootstrap over cases, and a case is
named *regressed* or *improved* only when an exact test says so after correction for the
number of cases.
"""
    ),
    code(
        """
run: str = ""  # candidate run (directory or run id)
baseline: str = ""  # baseline run; empty: compare two conditions of `run`
conditions: str = ""  # no baseline: "A,B" (default none,preloaded); else keep only these
runs_dir: str = "runs"  # where run ids are looked up
metric: str = "passed"  # "passed" (pass rate) or "score"
threshold: float = 0.05  # practical threshold for "improved"
confidence: float = 0.95  # confidence level
n_resamples: int = 10000  # bootstrap replicates of the overall interval
seed: int = 0  # bootstrap seed
max_cases: int = 40  # most cases in the forest plot
max_pairs: int = 5  # regressed / improved cases shown with their transcripts
excerpt_chars: int = 900  # characters per transcript excerpt
""",
        "parameters",
    ),
    setup(),
    code(
        """
if not run:
    raise ValueError("set the `run` parameter to the candidate run")
view = rk.compare_view(
    run, baseline or None, conditions, runs_dir=runs_dir, metric=metric, threshold=threshold,
    confidence=confidence, n_resamples=n_resamples, seed=seed,
)
result = view.comparison
labels = (view.baseline_label, view.candidate_label)
"""
    ),
    md("## Verdict"),
    code(
        """
headline, details = rk.verdict_lines(view)
display(rk.verdict_banner(result.verdict, headline, details))
display(rk.stat_cards([
    ("wins", str(result.wins), "cases where the candidate does better"),
    ("losses", str(result.losses), "cases where it does worse"),
    ("ties", str(result.ties), "cases with no change"),
    ("named cases", f"{len(result.regressed_cases)} / {len(result.improved_cases)}",
     "regressed / improved after correction"),
]))
"""
    ),
    md(
        """
## Per-case changes

Each row is one case (in one condition): the change in its pass rate from the baseline to the
candidate, with the case's own interval. Dotted lines mark the practical threshold.
"""
    ),
    code(
        """
display(rk.figure_html(
    rk.forest_plot(result, max_cases=max_cases),
    "forest",
    f"Per-case change from {labels[0]} to {labels[1]}, with per-case confidence intervals.",
))
"""
    ),
    md("## Wins, losses and ties"),
    code(
        """
display(rk.html_table(rk.wins_by_condition(result.cases), caption="By condition", table_id="wins"))
"""
    ),
    md(
        """
## Regressed cases

Cases whose drop is larger than noise (exact test per case, corrected for multiplicity), each
with a baseline item that passed and a candidate item that failed, side by side.
"""
    ),
    code(
        """
regressed = result.cases[result.cases["verdict"] == "regressed"]
display(rk.interval_table(
    regressed, ["case_id", "condition"], kind="pp", header="change",
    extra=["baseline_rate", "candidate_rate", "p_adjusted"], table_id="regressed",
    empty="No case regressed beyond noise.",
))
display(rk.paired_excerpts(
    rk.case_pairs(view, "regressed", max_pairs),
    baseline_run=view.baseline_run, candidate_run=view.candidate_run,
    baseline_rows=view.baseline_rows, candidate_rows=view.candidate_rows,
    labels=labels, max_chars=excerpt_chars,
))
"""
    ),
    md("## Improved cases"),
    code(
        """
improved = result.cases[result.cases["verdict"] == "improved"]
display(rk.interval_table(
    improved, ["case_id", "condition"], kind="pp", header="change",
    extra=["baseline_rate", "candidate_rate", "p_adjusted"], table_id="improved",
    empty="No case improved beyond noise.",
))
display(rk.paired_excerpts(
    rk.case_pairs(view, "improved", max_pairs),
    baseline_run=view.baseline_run, candidate_run=view.candidate_run,
    baseline_rows=view.baseline_rows, candidate_rows=view.candidate_rows,
    labels=labels, max_chars=excerpt_chars,
))
"""
    ),
    md("## All cases"),
    code(
        """
display(rk.interval_table(
    result.cases.sort_values("estimate", kind="stable"), ["case_id", "condition"], kind="pp",
    header="change", extra=["n_baseline", "n_candidate", "p_adjusted", "verdict"],
    table_id="all-cases",
))
"""
    ),
    md("## Unmatched items"),
    code(
        """
display(rk.html_table(
    result.unmatched, table_id="unmatched",
    empty="Every case and condition is present on both sides.",
))
"""
    ),
    md("## About this report"),
    code(
        """
display(rk.key_values({
    "baseline": labels[0],
    "candidate": labels[1],
    "metric": result.metric,
    "overall interval": f"{result.delta.method}, {n_resamples:,} resamples, seed {seed}",
    "per-case tests": f"exact tests, {result.correction} correction, alpha {result.alpha:g}",
    "practical threshold": rk.pp(result.threshold),
    "evalkit": evalkit.__version__,
}))
"""
    ),
]

FLIPS: list[Cell] = [
    md(
        """
# Flip rates

A *flip* is a disagreement between two outcomes that should agree: two trials of the same
case and condition in one run (**within** a run), or the same work item in two runs
(**between** runs). Identical runs of real agents disagree on about 16 % of items: that noise
floor is what a claimed skill effect has to clear.
"""
    ),
    code(
        """
run: str = ""  # run directory or run id (required)
baseline: str = ""  # a second run, for between-run flips (optional)
runs_dir: str = "runs"  # where run ids are looked up
confidence: float = 0.95  # confidence level
top_n: int = 20  # most unstable cases listed
max_cases: int = 40  # most cases in a heatmap
""",
        "parameters",
    ),
    setup(),
    code(
        """
if not run:
    raise ValueError("set the `run` parameter to a run directory or run id")
rows = evalkit.read_run(run, runs_dir=runs_dir)
base_rows = evalkit.read_run(baseline, runs_dir=runs_dir) if baseline else None
run_label = str(rows["run_id"].iloc[0])
base_label = str(base_rows["run_id"].iloc[0]) if base_rows is not None else ""
within = rk.within_flips(rows, confidence=confidence)
"""
    ),
    md("## Summary"),
    code(
        """
overview = rk.flip_overview(
    rows, base_rows, run_label=run_label, baseline_label=base_label, confidence=confidence
)
display(rk.interval_table(
    overview.rename(columns={"flip_rate": "estimate"}).assign(confidence=confidence),
    ["scope", "condition"], header="flip rate", extra=["n_pairs", "n_flips", "method"],
    table_id="flip-overview",
))
"""
    ),
    md(
        """
## Within-run and between-run flips

Within-run flips measure how much one agent disagrees with itself across trials;
between-run flips how much a rerun of the same matrix changes the outcomes.
"""
    ),
    code(
        """
display(rk.figure_html(
    rk.interval_plot(
        overview.rename(columns={"flip_rate": "estimate"}), label="condition", series="scope",
        title="Flip rate by condition", xlabel="flip rate (whiskers: confidence interval)",
        reference=None, scale="pct",
    ),
    "flips-scope",
    "Flip rate within the run" + (" and between the two runs" if base_rows is not None else "")
    + ", per condition, with confidence intervals.",
))
"""
    ),
    md(
        """
## Flip-rate heatmap

Share of disagreeing trial pairs per case and condition within the run (averaged over
providers when there are several); the most unstable cases first.
"""
    ),
    code(
        """
display(rk.figure_html(
    rk.heatmap(within.by_case, title="Within-run flip rate by case and condition",
               colorbar_label="flip rate (disagreeing trial pairs)", max_rows=max_cases),
    "flip-heatmap",
    "Within-run flip rate per case (rows) and condition (columns).",
))
"""
    ),
    md("## Most unstable cases"),
    code(
        """
display(rk.html_table(
    rk.unstable_cases(within.by_case, top_n),
    formats={"estimate": rk.pct},
    table_id="unstable",
    empty="No case flipped: every case gave the same outcome on every trial.",
))
"""
    ),
    md("## Between runs"),
    code(
        """
if base_rows is None:
    display(rk.note("Pass a second run (`--baseline RUN`) to see between-run flips."))
else:
    between = evalkit.flips(base_rows, rows, confidence=confidence)
    display(rk.figure_html(
        rk.heatmap(between.by_case, title=f"Flip rate between {base_label} and {run_label}",
                   colorbar_label="flip rate (matched items)", max_rows=max_cases),
        "flip-heatmap-between",
        "Share of matched work items whose outcome differs between the two runs.",
    ))
    display(rk.interval_table(
        rk.unstable_cases(between.by_case, top_n), ["case_id", "condition"],
        header="flip rate", extra=["n", "flips"], table_id="unstable-between",
    ))
"""
    ),
]

LIFT: list[Cell] = [
    md(
        """
# Skill lift

How much the skill helps, and where: success under each condition, the lift metrics with
their case-bootstrap confidence intervals, and how well the agent routes to the skill.
"""
    ),
    code(
        """
run: str = ""  # run directory or run id (required)
runs_dir: str = "runs"  # where run ids are looked up
confidence: float = 0.95  # confidence level
n_resamples: int = 2000  # bootstrap replicates
seed: int = 0  # bootstrap seed
max_facets: int = 8  # most panels per figure
""",
        "parameters",
    ),
    setup("from evalkit.analysis import LIFT_METRICS, TRIGGER_METRICS"),
    code(
        """
if not run:
    raise ValueError("set the `run` parameter to a run directory or run id")
rows = evalkit.read_run(run, runs_dir=runs_dir)
lifted = evalkit.lift(rows, n_resamples=n_resamples, confidence=confidence, seed=seed)
"""
    ),
    md("## Success by condition"),
    code(
        """
display(rk.figure_html(
    rk.rate_plot(lifted.success, facet=["provider", "lane"], max_facets=max_facets,
                 title="Success by condition", xlabel="success (mean over cases; bars: CI)"),
    "success",
    "Success per condition, provider and lane, with case-bootstrap confidence intervals.",
))
display(rk.interval_table(lifted.success, ["provider", "lane", "condition"], header="success"))
"""
    ),
    md("## Lift metrics\n" + LIFT_DEFINITIONS),
    code(
        """
display(rk.figure_html(rk.lift_plot(lifted.metrics), "lift",
                       "Lift metrics per provider and lane, with confidence intervals."))
display(rk.metrics_table(lifted.metrics, LIFT_METRICS, table_id="lift-metrics"))
"""
    ),
    md("## Routing"),
    code(
        """
display(rk.metrics_table(lifted.metrics, TRIGGER_METRICS, caption="Trigger metrics",
                         table_id="trigger-metrics"))
display(rk.html_table(rk.trigger_confusion(rows), caption="Trigger confusion matrix (self-load)",
                      table_id="trigger-confusion", empty="no self-load item in this run"))
"""
    ),
    md("## Cases missing a condition"),
    code("display(rk.missing_cases(lifted))"),
]

TREND: list[Cell] = [
    md(
        """
# Trend

Every run of a runs directory, read in one DuckDB query (`union_by_name`, so runs written by
older evalkit versions still line up), placed in the period of its first item. Runs of one
period are pooled; each period's pass rates and lift come from `evalkit.stats` and
`evalkit.analysis`. Dashed lines mark periods where the dataset version changed.
"""
    ),
    code(
        """
runs_dir: str = "runs"  # the runs directory (every RUNS_DIR/*/results.parquet)
period: str = "week"  # "week", "day", "month" or "run"
suite: str = ""  # only this suite (default: every suite)
confidence: float = 0.95  # confidence level
n_resamples: int = 1000  # bootstrap replicates of the lift intervals (per period)
seed: int = 0  # bootstrap seed
""",
        "parameters",
    ),
    setup(package=False),
    code(
        """
history = rk.trend(runs_dir, period=period, suite=suite or None, n_resamples=n_resamples,
                   confidence=confidence, seed=seed)
suites = sorted(history.runs["suite"].astype(str).unique())
"""
    ),
    md("## Runs"),
    code(
        """
display(rk.key_values(rk.describe_trend(history)))
display(rk.html_table(history.runs, table_id="runs"))
"""
    ),
    md("## Pass rate over time"),
    code(
        """
display(rk.figure_html(
    rk.trend_plot(history.overall, series="provider", facet="suite",
                  title=f"Pass rate per {period}, all conditions", ylabel="pass rate",
                  changes=history.changes(), period=period),
    "trend-overall",
    f"Pass rate per {period} and provider (all conditions pooled), with confidence bands.",
))
for number, name in enumerate(suites, start=1):
    part = history.pass_rates[history.pass_rates["suite"] == name]
    display(rk.figure_html(
        rk.trend_plot(part, series="condition", facet="provider",
                      title=f"Pass rate per {period} by condition — suite {name}",
                      ylabel="pass rate", changes=history.changes(name), period=period),
        f"trend-pass-rate-{number}",
        f"Suite {name}: pass rate per {period}, condition and provider, with confidence bands.",
    ))
"""
    ),
    md("## Lift over time"),
    code(
        """
for number, name in enumerate(suites, start=1):
    part = rk.lift_trend(history.lift[history.lift["suite"] == name])
    display(rk.figure_html(
        rk.trend_plot(part, series="metric", facet="provider", percent_points=True,
                      title=f"Lift per {period} — suite {name}", ylabel="difference",
                      changes=history.changes(name), period=period),
        f"trend-lift-{number}",
        f"Suite {name}: realized and oracle lift, routing gap and stale harm per {period}.",
    ))
"""
    ),
    md("## Dataset versions"),
    code(
        """
display(rk.html_table(history.versions, table_id="versions"))
"""
    ),
    md("## Pass rates per period"),
    code(
        """
display(rk.interval_table(
    history.pass_rates, ["suite", "provider", "period", "condition"], header="pass rate",
    table_id="trend-rates", max_rows=400,
))
"""
    ),
]

TUTORIAL: list[Cell] = [
    md(
        """
# evalkit in a notebook

A tour of interactive use: load a run, filter it, get pass rates with intervals, plot them,
and compare two versions of a skill. Every statistic comes from an `evalkit` function that
takes a tidy DataFrame (one row per work item), so anything you can filter with pandas you
can analyse.

The defaults read the small runs committed under `tests/fixtures/runs/`; point `run` and
`baseline` at your own runs (a directory or a run id under `runs/`). With `live = True` the
last section runs the bundled demo suite twice with the simulated agent (a few seconds).
"""
    ),
    code(
        """
run: str = "tests/fixtures/runs/after"  # a run directory or run id
baseline: str = "tests/fixtures/runs/before"  # the run before the skill edit
live: bool = False  # also run the demo suite twice with the simulated agent
suite: str = "cases/demo"  # suite of the live section
scratch: str = ""  # runs directory of the live section (default: a temporary directory)
""",
        "parameters",
    ),
    code(
        """
import tempfile

from IPython.display import display

import evalkit
import evalkit.report as rk
from evalkit.stats import pass_rates
"""
    ),
    md(
        """
## 1. Load a run

`evalkit.read_run` returns the result table: one row per work item (case × condition ×
provider × trial), with the outcome (`passed`, `score`, `status`), routing (`inferred_skill`)
and cost columns.
"""
    ),
    code(
        """
df = evalkit.read_run(run)
df.shape
"""
    ),
    code(
        """
df[["case_id", "lane", "condition", "provider", "trial", "status", "passed", "latency_s"]].head()
"""
    ),
    md(
        """
## 2. Filter with pandas

Nothing special: `query`, boolean masks, `isin`. Errors and timeouts stay in the table (they
count as failures); `status` tells them apart.
"""
    ),
    code(
        """
prompt = df.query("lane == 'prompt'")
with_skill = df[df["condition"].isin(["self-load", "preloaded"])]
len(prompt), len(with_skill), df["status"].value_counts().to_dict()
"""
    ),
    md(
        """
## 3. Pass rates with intervals

`pass_rates` averages the trials of each case first, then takes the mean over cases, with a
confidence interval that treats cases as clusters. The result is a tidy table.
"""
    ),
    code(
        """
rates = pass_rates(prompt, by=["condition"])
rates
"""
    ),
    md(
        """
## 4. Plot

The `evalkit.report` plotting helpers return matplotlib figures with the project's palette
(none grey, self-load blue, preloaded green, stale red) and the intervals drawn;
`figure_html` embeds one in the notebook (`fig.savefig(...)` works too).
"""
    ),
    code(
        """
fig = rk.rate_plot(rates, title="Prompt lane: pass rate by condition")
rk.figure_html(fig, "tutorial-rates", "Prompt-lane pass rate by condition (95% CI).")
"""
    ),
    md(
        """
## 5. Lift

Realized and oracle lift, routing gap, stale harm and the rest, per provider and lane, each
with a case-bootstrap interval.
"""
    ),
    code(
        """
lifted = evalkit.lift(df, n_resamples=2000)
lifted.metrics[["provider", "lane", "metric", "estimate", "ci_low", "ci_high", "n_cases"]]
"""
    ),
    md(
        """
## 6. Compare two versions of a skill

`baseline` was run before the skill edit and `run` after it (in the shell:
`evalkit run SUITE --run-id before`, edit the SKILL.md or pass `--skill NAME=PATH`, then
`evalkit run SUITE --run-id after`). `evalkit.compare` pairs the two runs case by case and
gives the verdict: improved, regressed or inconclusive.
"""
    ),
    code(
        """
result = evalkit.compare(baseline, run)
result.verdict, result.delta, (result.wins, result.losses, result.ties)
"""
    ),
    code(
        """
result.cases.query("verdict != 'inconclusive'")[
    ["case_id", "condition", "baseline_rate", "candidate_rate", "p_adjusted", "verdict"]
]
"""
    ),
    code(
        """
rk.figure_html(rk.forest_plot(result, max_cases=20),
               "tutorial-forest", "Per-case change from the baseline to the candidate.")
"""
    ),
    md(
        """
## 7. How noisy is the agent?

The flip rate within a run (disagreeing trial pairs) is the noise floor a skill effect has to
clear.
"""
    ),
    code(
        """
noise = evalkit.flips(df)
round(noise.flip_rate, 3), (round(noise.ci_low, 3), round(noise.ci_high, 3)), noise.n_pairs
"""
    ),
    md(
        """
## 8. Read a transcript

Each row's `transcript_path` names the shard holding its transcript; `read_transcript` finds
one item's record and `transcript_html` shows it, escaped.
"""
    ),
    code(
        """
item = df[~df["passed"]].iloc[0]
record = rk.read_transcript(run, item["item_key"])
rk.transcript_html(record, title=f"case {item['case_id']} ({item['condition']})")
"""
    ),
    md(
        """
## 9. Live: edit a skill and measure the edit

With `live = True`, the bundled demo suite's prompt lane runs twice with the simulated agent:
once with the suite's `safe-shell` skill, once with its stale variant standing in for a
careless edit (`--skill safe-shell=PATH` on the command line). The second run reuses the
cache for every item whose skill text did not change.
"""
    ),
    code(
        """
if live:
    from pathlib import Path

    from evalkit.runner import RunConfig, SkillOverride

    where = scratch or tempfile.mkdtemp(prefix="evalkit-tutorial-")
    config = dict(runs_dir=where, lanes=("prompt",), trials=2, progress=False, concurrency=2)
    edited = SkillOverride(skill="safe-shell", path=Path(suite) / "skills/safe-shell/stale.md")
    first = evalkit.run(suite, evalkit.RunConfig(run_id="skill-v1", **config))
    second = evalkit.run(suite, RunConfig(run_id="skill-v2", skills=(edited,), **config))
    edit = evalkit.compare(first.run_dir, second.run_dir)
    change = rk.interval(edit.delta.estimate, edit.delta.ci_low, edit.delta.ci_high, "pp")
    display(rk.verdict_banner(
        edit.verdict,
        f"skill v2 vs v1: {change}",
        [f"{second.cache_hits} of {second.items} items reused from the cache"],
    ))
"""
    ),
    md(
        """
## 10. Reviewer-facing reports

The same building blocks make the HTML reports:

```
evalkit report after --baseline before --kind compare -o reports/compare.html
evalkit report after -o reports/run.html          # pass rates, lift, routing, errors
evalkit report runs --kind trend -o reports/trend.html
```
"""
    ),
]

OPTIMIZE: list[Cell] = [
    md(
        """
# Skill optimisation

A hill climb over a skill's text (`evalkit optimize`): each candidate was proposed from failing
*train* cases, evaluated on the *validation* split, and accepted only when the paired gate said
*improved*. The *test* split stayed sealed until the end and was evaluated exactly once, for the
seed skill and the champion: that comparison is the honest number.
"""
    ),
    code(
        """
optimization: str = ""  # the optimisation run directory (holding optimize.json)
""",
        "parameters",
    ),
    setup(package=False),
    code(
        """
opt = rk.load_optimization(optimization)
verdict, headline, details = rk.test_summary(opt)
display(rk.verdict_banner(verdict, headline, details))
display(rk.key_values(rk.optimization_facts(opt)))
"""
    ),
    md("## Validation trajectory"),
    code(
        """
display(rk.figure_html(rk.trajectory_plot(opt), "trajectory",
                       "Validation pass rate of every candidate; the line is the champion."))
display(rk.figure_html(rk.gate_plot(opt), "gate",
                       "Paired validation delta of each evaluated candidate vs its champion, "
                       "with the gate's interval."))
"""
    ),
    md("## Accepts and rejects"),
    code(
        """
display(rk.html_table(opt.history, table_id="history", caption="Every candidate, in order"))
"""
    ),
    md("## Cost"),
    code(
        """
display(rk.figure_html(rk.cost_plot(opt), "cost",
                       "Work items and money spent after each candidate."))
"""
    ),
    md("## Skill diff (seed to champion)"),
    code("display(rk.skill_diff(opt))"),
]

NOTEBOOKS: dict[str, list[Cell]] = {
    "run_report": RUN_REPORT,
    "compare": COMPARE,
    "flips": FLIPS,
    "lift": LIFT,
    "trend": TREND,
    "optimize": OPTIMIZE,
    "tutorial": TUTORIAL,
}


def explicit_imports(cells: list[Cell]) -> list[Cell]:
    """Replace ``rk.NAME`` by ``NAME`` and the alias import by an explicit one."""
    names = sorted({n for kind, src, _ in cells if kind == "code" for n in HELPER.findall(src)})
    if len(names) <= 3:
        statement = f"from evalkit.report import {', '.join(names)}"
    else:
        statement = "from evalkit.report import (\n" + "".join(f"    {n},\n" for n in names) + ")"
    out: list[Cell] = []
    for kind, source, tags in cells:
        if kind == "code":
            source = HELPER.sub(r"\1", source)
            source = source.replace(ALIAS_IMPORT, statement if names else "")
        out.append((kind, source, tags))
    return out


def build(stem: str, cells: list[Cell]) -> nbformat.NotebookNode:
    """A notebook with stable cell ids, explicit imports and no outputs."""
    cells = explicit_imports(cells)
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    for index, (kind, source, tags) in enumerate(cells):
        if kind == "markdown":
            cell = nbformat.v4.new_markdown_cell(source)
        else:
            cell = nbformat.v4.new_code_cell(source)
        cell.id = f"{stem.replace('_', '-')}-{index:02d}"
        if tags:
            cell.metadata["tags"] = list(tags)
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


def main() -> int:
    """Write (or check) every notebook."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a notebook is stale")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    stale = []
    for stem, cells in NOTEBOOKS.items():
        text = nbformat.writes(build(stem, cells)) + "\n"
        path = OUT / f"{stem}.ipynb"
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
            continue
        path.write_text(text, encoding="utf-8")
        print(path)
    if stale:
        print(f"out of date (run scripts/build_notebooks.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
