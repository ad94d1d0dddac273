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
# # evalkit in a notebook
#
# A tour of interactive use: load a run, filter it, get pass rates with intervals, plot them,
# and compare two versions of a skill. Every statistic comes from an `evalkit` function that
# takes a tidy DataFrame (one row per work item), so anything you can filter with pandas you
# can analyse.
#
# By default the notebook first draws its own data: the bundled demo suite's prompt lane, run
# twice with the simulated agent (a few seconds), once with the suite's `safe-shell` skill
# (`baseline`) and once with its stale variant standing in for a careless edit (`run`). Point
# `run` and `baseline` at your own runs instead (a directory or a run id under `runs/`).
# Relative paths are read from the project root, as on the command line, although Jupyter runs
# the notebook in `notebooks/`. With `live = True` the last section shows the same two runs
# made step by step.

# %% tags=["parameters"]
run: str = ""  # a run directory or run id (default: the demo's prompt lane after an edit)
baseline: str = ""  # the run before the skill edit (default: the demo's prompt lane)
runs_dir: str = "runs"  # where run ids are looked up
live: bool = False  # also run the demo suite twice with the simulated agent
suite: str = "cases/demo"  # suite of the live section
scratch: str = ""  # runs directory of the live section (default: a temporary directory)

# %%
import tempfile
from pathlib import Path

from IPython.display import display

import evalkit
from evalkit.report import (
    figure_html,
    forest_plot,
    interval,
    project_path,
    rate_plot,
    run_overview,
    transcript_html,
    verdict_banner,
)
from evalkit.results import read_transcript
from evalkit.runner import RunConfig, SkillOverride
from evalkit.stats import pass_rates

runs_dir, suite = project_path(runs_dir), project_path(suite)
if not run or not baseline:  # draw the tutorial's own data: two small simulated runs
    drawn = scratch or tempfile.mkdtemp(prefix="evalkit-tutorial-")
    demo = RunConfig(run_id="before", runs_dir=drawn, lanes=("prompt",), trials=3,
                     progress=False, concurrency=4)
    stale = SkillOverride(skill="safe-shell", path=Path(suite) / "skills/safe-shell/stale.md")
    baseline = str(evalkit.run(suite, demo).run_dir)
    run = str(evalkit.run(suite, demo.model_copy(update={"run_id": "after",
                                                         "skills": (stale,)})).run_dir)
run, baseline = project_path(run), project_path(baseline)

# %% [markdown]
# ## 1. Load a run
#
# `evalkit.read_run` returns the result table: one row per work item (case × condition ×
# provider × trial), with the outcome (`passed`, `score`, `status`), routing (`inferred_skill`)
# and cost columns.

# %%
df = evalkit.read_run(run, runs_dir=runs_dir)
df.shape

# %%
df[["case_id", "lane", "condition", "provider", "trial", "status", "passed", "latency_s"]].head()

# %% [markdown]
# ## 2. Filter with pandas
#
# Nothing special: `query`, boolean masks, `isin`. Errors and timeouts stay in the table (they
# count as failures); `status` tells them apart.

# %%
prompt = df.query("lane == 'prompt'")
with_skill = df[df["condition"].isin(["self-load", "preloaded"])]
len(prompt), len(with_skill), df["status"].value_counts().to_dict()

# %% [markdown]
# ## 3. Pass rates with intervals
#
# `pass_rates` averages the trials of each case first, then takes the mean over cases, with a
# confidence interval that treats cases as clusters. The result is a tidy table.

# %%
rates = pass_rates(prompt, by=["condition"])
rates

# %% [markdown]
# ## 4. Plot
#
# The `evalkit.report` plotting helpers return matplotlib figures with the project's palette
# (none grey, self-load blue, preloaded green, stale red) and the intervals drawn;
# `figure_html` embeds one in the notebook (`fig.savefig(...)` works too).

# %%
fig = rate_plot(rates, title="Prompt lane: pass rate by condition")
figure_html(fig, "tutorial-rates", "Prompt-lane pass rate by condition (95% CI).")

# %% [markdown]
# ## 5. Lift
#
# Realized and oracle lift, routing gap, stale harm and the rest, per provider and lane, each
# with a case-bootstrap interval.

# %%
lifted = evalkit.lift(df)
lifted.metrics[["provider", "lane", "metric", "estimate", "ci_low", "ci_high", "n_cases"]]

# %% [markdown]
# Every result object of evalkit has a rich display: as the last expression of a cell it shows
# a verdict banner, a compact table and its plot (here the lift, headlined by the largest
# provider/lane group).

# %%
lifted

# %% [markdown]
# A result holds its tables and draws its own figures: `lifted.success` is the success rate of
# each condition, `lifted.plot()` the lift metrics and `lifted.plot_success()` the success rates
# (matplotlib figures, as `rate_plot`'s above).

# %%
figure_html(lifted.plot_success(), "tutorial-success",
            "Success per condition, provider and lane (95% CI).")

# %% [markdown]
# ## 6. Compare two versions of a skill
#
# `baseline` was run before the skill edit and `run` after it (in the shell:
# `evalkit run SUITE --run-id before`, edit the SKILL.md or pass `--skill NAME=PATH`, then
# `evalkit run SUITE --run-id after`). `evalkit.compare` pairs the two runs case by case and
# gives the verdict: improved, regressed or inconclusive.

# %%
result = evalkit.compare(baseline, run, runs_dir=runs_dir)
result  # the rich display: verdict banner (with the next step when inconclusive), cases, forest

# %%
result.cases.query("verdict != 'inconclusive'")[
    ["case_id", "condition", "baseline_rate", "candidate_rate", "p_adjusted", "verdict"]
]

# %%
figure_html(forest_plot(result, max_cases=20),
            "tutorial-forest", "Per-case change from the baseline to the candidate.")

# %% [markdown]
# ## 7. How noisy is the agent?
#
# The flip rate within a run (disagreeing trial pairs) is the noise floor a skill effect has to
# clear.

# %%
noise = evalkit.flips(df)
noise  # flip rate with its interval, the most unstable cases, the heatmap

# %%
noise.unstable_cases(5)[["case_id", "condition", "n_trials", "flips", "estimate"]]

# %% [markdown]
# ## 7b. How many cases would settle it?
#
# `evalkit.power` plans from this run's own variances: here the cases needed to detect a
# +15 pp change between the `none` and `preloaded` conditions at the run's trials.

# %%
evalkit.power(effect=0.15, from_run=run, conditions=["none", "preloaded"], runs_dir=runs_dir)

# %% [markdown]
# A whole run as one display: pass rates with intervals, a plot and the item browser. The
# overview also answers the run report's questions: `pass_rates(by)` and `plot_pass_rates(by)`,
# `errors`, `outcomes(by)`, `top_items(column, n)`, `failing_items(n)`, `trigger_confusion`.

# %%
overview = run_overview(run, runs_dir=runs_dir, max_items=50)
overview

# %%
overview.outcomes("condition")

# %% [markdown]
# ## 8. Read a transcript
#
# Each row's `transcript_path` names the shard holding its transcript; `read_transcript` finds
# one item's record and `transcript_html` shows it, escaped.

# %%
item = df[~df["passed"]].iloc[0]
record = read_transcript(run, item["item_key"], runs_dir=runs_dir)
transcript_html(record, title=f"case {item['case_id']} ({item['condition']})")

# %% [markdown]
# ## 9. Live: edit a skill and measure the edit
#
# With `live = True`, the bundled demo suite's prompt lane runs twice with the simulated agent:
# once with the suite's `safe-shell` skill, once with its stale variant standing in for a
# careless edit (`--skill safe-shell=PATH` on the command line). The second run reuses the
# cache for every item whose skill text did not change.

# %%
if live:
    where = scratch or tempfile.mkdtemp(prefix="evalkit-tutorial-")
    edited = SkillOverride(skill="safe-shell", path=Path(suite) / "skills/safe-shell/stale.md")
    before_edit = RunConfig(
        run_id="skill-v1", runs_dir=where, lanes=("prompt",), trials=2, progress=False,
        concurrency=2,
    )
    first = evalkit.run(suite, before_edit)
    second = evalkit.run(
        suite, before_edit.model_copy(update={"run_id": "skill-v2", "skills": (edited,)})
    )
    edit = evalkit.compare(first.run_dir, second.run_dir)
    change = interval(edit.delta.estimate, edit.delta.ci_low, edit.delta.ci_high, "pp")
    display(verdict_banner(
        edit.verdict,
        f"skill v2 vs v1: {change}",
        [f"{second.cache_hits} of {second.items} items reused from the cache"],
    ))

# %% [markdown]
# ## 10. Reviewer-facing reports
#
# The same building blocks make the HTML reports:
#
# ```
# evalkit report after --baseline before --kind compare -o reports/compare.html
# evalkit report after -o reports/run.html          # pass rates, lift, routing, errors
# evalkit report runs --kind trend -o reports/trend.html
# ```
