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
# # Skill lift
#
# How much the skill helps, and where: success under each condition, the lift metrics with
# their case-bootstrap confidence intervals, and how well the agent routes to the skill.

# %% tags=["parameters"]
from evalkit.stats import DEFAULT_RESAMPLES

run: str = "tests/fixtures/runs/after"  # run directory or run id (default: an example run)
runs_dir: str = "runs"  # where run ids are looked up
confidence: float = 0.95  # confidence level
n_resamples: int = DEFAULT_RESAMPLES  # bootstrap replicates (evalkit lift's default)
seed: int = 0  # bootstrap seed
max_facets: int = 8  # most panels per figure
roles: str = ""  # renamed conditions as evalkit lift --roles takes them; empty: standard

# %%
from IPython.display import display

import evalkit
from evalkit.analysis import LIFT_METRICS, TRIGGER_METRICS
from evalkit.report import (
    failure_changes_table,
    failure_summary,
    figure_html,
    html_table,
    interval_table,
    metrics_table,
    missing_cases,
    project_path,
    run_overview,
)

# %%
run, runs_dir = project_path(run), project_path(runs_dir)
overview = run_overview(run, runs_dir=runs_dir, confidence=confidence)
rows = overview.rows
lifted = evalkit.lift(
    rows, roles=roles or None, n_resamples=n_resamples, confidence=confidence, seed=seed
)

# %% [markdown]
# ## Success by condition

# %%
display(figure_html(
    lifted.plot_success(max_facets=max_facets),
    "success",
    "Success per condition, provider and lane, with case-bootstrap confidence intervals.",
))
display(interval_table(lifted.success, ["provider", "lane", "condition"], header="success"))

# %% [markdown]
# ## Lift metrics
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
display(figure_html(lifted.plot(), "lift",
                    "Lift metrics per provider and lane, with confidence intervals."))
display(metrics_table(lifted.metrics, LIFT_METRICS, table_id="lift-metrics"))

# %% [markdown]
# ## Routing

# %%
display(metrics_table(lifted.metrics, TRIGGER_METRICS, caption="Trigger metrics",
                      table_id="trigger-metrics"))
display(html_table(overview.trigger_confusion, caption="Trigger confusion matrix (self-load)",
                   table_id="trigger-confusion", empty="no self-load item in this run"))

# %% [markdown]
# ## What the failures are made of
#
# Every failing item counted once, under its primary cause (what stopped it before it finished:
# a timeout, a limit, a cancellation, a sandbox kill or an error; else the skill not loaded
# where loading was up to the agent, a gate such as the verifier, then the other failing
# components): did a condition's items not finish, or did they answer wrong, and was that
# routing or execution? Then each condition against the baseline (A), cause by cause.

# %%
display(failure_summary(rows, None, causes=lifted.failure_causes))
display(failure_changes_table(lifted.failure_changes))

# %% [markdown]
# ## Cases missing a condition

# %%
display(missing_cases(lifted))
