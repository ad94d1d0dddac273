# ---
# jupyter:
#   jupytext:
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Run report
#
# What happened in one run: pass rates with confidence intervals, the lift the skill brings,
# how the agent routed to its skills, what failed and why. Intervals and metrics come from
# `evalkit.stats` and `evalkit.analysis`; cases are the clusters (trials of a case are averaged
# first). Model output below is shown as text.

# %% tags=["parameters"]
from evalkit.stats import DEFAULT_RESAMPLES

run: str = "tests/fixtures/runs/after"  # run directory or run id (default: an example run)
runs_dir: str = "runs"  # where run ids are looked up
confidence: float = 0.95  # confidence level of every interval
n_resamples: int = DEFAULT_RESAMPLES  # bootstrap replicates of the lift intervals (as evalkit lift)
seed: int = 0  # bootstrap seed
top_n: int = 10  # rows of the slowest and most expensive tables
max_transcripts: int = 6  # failing transcript excerpts shown
excerpt_chars: int = 1200  # characters per transcript excerpt
max_facets: int = 8  # most panels per figure (providers, lanes)
max_items: int = 500  # most items in the item browser (failing and flipped cases first)

# %%
from IPython.display import display

import evalkit
from evalkit.analysis import LIFT_METRICS, TRIGGER_METRICS
from evalkit.errors import InputError
from evalkit.report import (
    calibration_note,
    evidence_bundles,
    excerpts,
    failure_summary,
    figure_html,
    html_table,
    interval_table,
    item_browser,
    key_values,
    metrics_table,
    missing_cases,
    note,
    pct,
    project_path,
    run_overview,
    seconds,
    usd,
)

# %%
run, runs_dir = project_path(run), project_path(runs_dir)
overview = run_overview(run, runs_dir=runs_dir, confidence=confidence)
rows = overview.rows

# %% [markdown]
# ## Summary

# %%
display(overview.summary())
display(overview.facts())

# %% [markdown]
# ## Pass rates
#
# The pass rate of a group is the mean over its cases of each case's pass rate; errors and
# timeouts count as failures. Whiskers are confidence intervals with cases as clusters.
#
# ### By condition

# %%
by_condition = overview.pass_rates(["condition"])
display(figure_html(
    overview.plot_pass_rates(["condition"]),
    "pass-rate-condition",
    "Pass rate by condition, with confidence intervals (cases as clusters).",
))
display(interval_table(
    by_condition, ["condition"], header="pass rate", table_id="rates-condition"
))
display(overview.matched_rates())

# %% [markdown]
# ### By provider and condition

# %%
by_provider = overview.pass_rates(["provider", "condition"])
display(figure_html(
    overview.plot_pass_rates(["provider", "condition"],
                             title="Pass rate by provider and condition", max_facets=max_facets),
    "pass-rate-provider",
    "Pass rate per provider and condition, with confidence intervals.",
))
display(interval_table(by_provider, ["provider", "condition"], header="pass rate"))

# %% [markdown]
# ### By lane and condition

# %%
by_lane = overview.pass_rates(["lane", "condition"])
display(figure_html(
    overview.plot_pass_rates(["lane", "condition"], title="Pass rate by lane and condition",
                             max_facets=max_facets),
    "pass-rate-lane",
    "Pass rate per lane (prompt, execution, evidence) and condition, with confidence intervals.",
))
display(interval_table(by_lane, ["lane", "condition"], header="pass rate"))

# %% [markdown]
# ## Skill lift
#
# | metric | definition (A = none, B = self-load, C = preloaded, D = stale) |
# |---|---|
# | realized lift | success(B) − success(A): what the skill brings when the agent must find it |
# | oracle lift | success(C) − success(A): what it brings when it is injected up front |
# | routing gap | success(C) − success(B): what is lost because the agent does not load it |
# | stale harm | success(D) − success(C): what an old or wrong version of the skill costs |
# | regression rate | share of cases passing under A that fail under B or C |
# | unlock rate | share of cases failing under A that pass under B or C |
# | routing efficiency | (B − A) / max(ε, C − A) |
#
# Each metric has a case-bootstrap confidence interval (cases resampled jointly for every
# metric of a provider and lane); a case missing a condition is listed, never silently dropped.

# %%
lifted = None
try:
    lifted = evalkit.lift(rows, n_resamples=n_resamples, confidence=confidence, seed=seed)
except InputError as exc:
    display(note(f"No lift metric for this run: {exc}", "warn"))
if lifted is not None:
    display(figure_html(
        lifted.plot(),
        "lift",
        "Lift metrics per provider and lane, with case-bootstrap confidence intervals.",
    ))
    display(metrics_table(lifted.metrics, LIFT_METRICS, table_id="lift-metrics"))
    display(missing_cases(lifted))

# %% [markdown]
# ## Routing
#
# Under **self-load** the agent decides whether to load a skill. Rows: the skill a case expects
# (`none`: it should load none); columns: the skill the agent loaded, read from its transcript.

# %%
display(html_table(
    overview.trigger_confusion,
    caption="Trigger confusion matrix (items under self-load)",
    table_id="trigger-confusion",
    empty="no self-load item in this run",
))
if lifted is not None:
    display(metrics_table(lifted.metrics, TRIGGER_METRICS, caption="Trigger metrics"))

# %% [markdown]
# ## Judged expectations
#
# The pass rate of each statement a judge graded, and whether that judge is calibrated against
# human labels (`evalkit judge calibrate`; the judge report shows the calibration itself).

# %%
display(calibration_note(overview.judge_calibration))
display(interval_table(
    overview.expectation_pass_rates(),
    ["expectation", "condition"], header="pass rate", table_id="expectation-pass-rates",
    empty="no judged statement in this run",
))

# %% [markdown]
# ## What the failures are made of
#
# Every failing item counted once, under its primary cause: the error or timeout; else the
# skill the agent did not load (or loaded wrongly) where loading was up to it; else a gate
# (verifier, required evidence, an error-severity anti-pattern); else the other failing
# components (missing expected pattern, forbidden pattern, workflow, judged statement); else a
# score below the pass threshold. Whether an edit moved routing or execution reads off one
# line: in the bars, blues are routing, warm colours execution, greys errors. Each item below
# (transcripts, browser) carries its whole reason line.

# %%
display(failure_summary(
    rows, overview.scores, causes=lifted.failure_causes if lifted is not None else None,
    plot=True,
))

# %% [markdown]
# ## Errors and timeouts
#
# An error or a timeout is a row of its own (all-settled runs), counted as a failure in the pass
# rates above.

# %%
display(html_table(
    overview.errors,
    formats={"share": pct},
    caption="By status and error class",
    table_id="errors",
    empty="No error and no timeout: every item finished.",
))
display(html_table(overview.outcomes("condition"), caption="Outcomes by condition"))
display(html_table(overview.outcomes("provider"), caption="Outcomes by provider"))

# %% [markdown]
# ## Slowest items

# %%
display(html_table(
    overview.top_items("latency_s", top_n),
    formats={"latency_s": seconds, "cost_usd": usd},
    table_id="slowest",
))

# %% [markdown]
# ## Most expensive items

# %%
display(html_table(
    overview.top_items("cost_usd", top_n),
    formats={"latency_s": seconds, "cost_usd": usd},
    table_id="costliest",
))

# %% [markdown]
# ## Failing transcripts
#
# Excerpts of failing items, one per case first (wrong answers before errors and timeouts): why
# the item failed (each failing component with its detail, or the error), the prompt, then the
# last events of the transcript.

# %%
display(excerpts(
    run, overview.failing_items(max_transcripts), runs_dir=runs_dir, rows=rows,
    max_chars=excerpt_chars, empty="No failing item.",
))

# %% [markdown]
# ## Evidence bundles
#
# What each evidence-lane item left for a reviewer: every required artifact with its status
# (validated, missing or invalid) and the reason, the manifest's entries with pass/fail, the
# images that validated, and the notes as text. An item passes only when its task's verifier
# passes and its bundle validates. Failing items come first.

# %%
display(evidence_bundles(run, rows, runs_dir=runs_dir))

# %% [markdown]
# ## Browse items
#
# Every work item, searchable and filterable by condition, status, outcome and primary cause,
# with why it passed or failed (its reason, clipped in the table); click a row to read its whole
# reason and transcript (tool calls and skill loads marked). In a large run the table keeps
# whole cases up to `max_items` items, cases whose items both pass and fail
# first, then cases that never pass.

# %%
display(item_browser(run, rows, runs_dir=runs_dir, max_items=max_items, seed=seed))

# %% [markdown]
# ## About this report

# %%
display(key_values({
    "confidence level": f"{confidence:.0%}",
    "pass-rate intervals": ", ".join(sorted(set(by_condition["method"]))),
    "lift intervals": f"case bootstrap, {n_resamples:,} resamples, seed {seed}",
    "evalkit": evalkit.__version__,
}))
