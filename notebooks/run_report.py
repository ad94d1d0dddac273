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
from evalkit.errors import InputError
from evalkit.report import note, project_path, run_overview

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
display(overview.rates(["condition"]))

# %% [markdown]
# ### By provider and condition

# %%
display(overview.rates(["provider", "condition"], max_facets=max_facets))

# %% [markdown]
# ### By lane and condition

# %%
display(overview.rates(["lane", "condition"], max_facets=max_facets))

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
    display(overview.lift_metrics(lifted))

# %% [markdown]
# ## Routing
#
# Under **self-load** the agent decides whether to load a skill. Rows: the skill a case expects
# (`none`: it should load none); columns: the skill the agent loaded, read from its transcript.

# %%
display(overview.routing(lifted))

# %% [markdown]
# ## Judged expectations
#
# The pass rate of each statement a judge graded, and whether that judge is calibrated against
# human labels (`evalkit judge calibrate`; the judge report shows the calibration itself).

# %%
display(overview.judged_expectations())

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
display(overview.failure_causes(lifted))

# %% [markdown]
# ## Errors and timeouts
#
# An error or a timeout is a row of its own (all-settled runs), counted as a failure in the pass
# rates above.

# %%
display(overview.errors_table())

# %% [markdown]
# ## Slowest items

# %%
display(overview.slowest(top_n))

# %% [markdown]
# ## Most expensive items

# %%
display(overview.costliest(top_n))

# %% [markdown]
# ## Failing transcripts
#
# Excerpts of failing items, one per case first (wrong answers before errors and timeouts): why
# the item failed (each failing component with its detail, or the error), the prompt, then the
# last events of the transcript.

# %%
display(overview.failing_transcripts(max_transcripts, max_chars=excerpt_chars))

# %% [markdown]
# ## Evidence bundles
#
# What each evidence-lane item left for a reviewer: every required artifact with its status
# (validated, missing or invalid) and the reason, the manifest's entries with pass/fail, the
# images that validated, and the notes as text. An item passes only when its task's verifier
# passes and its bundle validates. Failing items come first.

# %%
display(overview.evidence_bundles())

# %% [markdown]
# ## Browse items
#
# Every work item, searchable and filterable by condition, status, outcome and primary cause,
# with why it passed or failed (its reason, clipped in the table); click a row to read its whole
# reason and transcript (tool calls and skill loads marked). In a large run the table keeps
# whole cases up to `max_items` items, cases whose items both pass and fail
# first, then cases that never pass.

# %%
display(overview.item_browser(max_items=max_items, seed=seed))

# %% [markdown]
# ## About this report

# %%
display(overview.about(n_resamples=n_resamples, seed=seed))
