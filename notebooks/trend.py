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
# # Trend
#
# Every run of a runs directory, read in one DuckDB query (`union_by_name`, so runs written by
# older evalkit versions still line up), placed in the period of its own start (its manifest;
# rows served from the cache never move a run). Runs of one period are pooled unless they
# measured different skill texts: the period is then split where the text changed. Texts are
# compared over the conditions and cases both runs ran, so a run killed part-way (fewer cases)
# or a run of other conditions is no change. Each
# period's pass rates and lift come from `evalkit.stats` and `evalkit.analysis`. Dashed lines
# mark periods where the dataset version or a skill text changed. A run that did not finish
# (manifest status partial) counts with the items it has and is marked partial.

# %% tags=["parameters"]
from evalkit.stats import QUICK_RESAMPLES

runs_dir: str = "tests/fixtures/runs"  # every RUNS_DIR/*/results.parquet (default: examples)
period: str = "week"  # "week", "day", "month" or "run"
suite: str = ""  # only this suite (default: every suite)
confidence: float = 0.95  # confidence level
n_resamples: int = QUICK_RESAMPLES  # bootstrap replicates of the lift intervals (per period)
seed: int = 0  # bootstrap seed

# %%
from IPython.display import display

from evalkit.analysis import trend
from evalkit.report import (
    describe_trend,
    figure_html,
    html_table,
    interval_table,
    key_values,
    note,
    project_path,
    trend_runs_table,
)

# %%
history = trend(project_path(runs_dir), period=period, suite=suite or None,
                n_resamples=n_resamples, confidence=confidence, seed=seed)

# %% [markdown]
# ## Runs

# %%
display(key_values(describe_trend(history)))
if history.partial:
    display(note(
        "Partial runs (interrupted, crashed or still running) are included with the items "
        f"they finished and marked partial in the status column: {', '.join(history.partial)}.",
        kind="warn",
    ))
if history.runs["skill_changed"].any():
    changed = history.runs.loc[history.runs["skill_changed"], "run_dir"].astype(str)
    display(note(
        "A skill text changed (see skill_texts; dashed lines on the plots) in the runs: "
        f"{', '.join(changed)}. Runs of one period with different skill texts are not pooled.",
        kind="warn",
    ))
display(html_table(trend_runs_table(history), table_id="runs", max_rows=None))

# %% [markdown]
# ## Pass rate over time

# %%
display(figure_html(
    history.plot_overall(),
    "trend-overall",
    f"Pass rate per {period} and provider (all conditions pooled), with confidence bands.",
))
for number, name in enumerate(history.suites, start=1):
    display(figure_html(
        history.plot_pass_rates(name),
        f"trend-pass-rate-{number}",
        f"Suite {name}: pass rate per {period}, condition and provider, with confidence bands.",
    ))

# %% [markdown]
# ## Lift over time

# %%
for number, name in enumerate(history.suites, start=1):
    display(figure_html(
        history.plot_lift(name),
        f"trend-lift-{number}",
        f"Suite {name}: realized and oracle lift, routing gap and stale harm per {period}.",
    ))

# %% [markdown]
# ## Dataset versions

# %%
display(html_table(history.versions, table_id="versions"))

# %% [markdown]
# ## Pass rates per period

# %%
display(interval_table(
    history.pass_rates, ["suite", "provider", "period", "condition"], header="pass rate",
    table_id="trend-rates", max_rows=400,
))
