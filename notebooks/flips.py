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
# # Flip rates
#
# A *flip* is a disagreement between two outcomes that should agree: two trials of the same
# case and condition in one run (**within** a run), or the same work item in two runs
# (**between** runs). Identical runs of real agents disagree on about 16 % of items: that noise
# floor is what a claimed skill effect has to clear.

# %% tags=["parameters"]
run: str = "tests/fixtures/runs/after"  # run directory or run id (default: an example run)
baseline: str = ""  # a second run, for between-run flips (optional)
runs_dir: str = "runs"  # where run ids are looked up
confidence: float = 0.95  # confidence level
top_n: int = 20  # most unstable cases listed
max_cases: int = 40  # most cases in a heatmap
max_pairs: int = 5  # flipped cases shown with two transcripts side by side
excerpt_chars: int = 900  # characters per transcript excerpt
max_explained: int = 5  # most unstable cases explained (what separates passes from failures)

# %%
from IPython.display import display

import evalkit
from evalkit.report import (
    explanation_fragment,
    figure_html,
    flip_overview,
    flip_pairs,
    html_table,
    interval_plot,
    interval_table,
    note,
    pct,
    project_path,
    within_flips,
)

# %%
run, baseline = project_path(run), project_path(baseline)
runs_dir = project_path(runs_dir)
rows = evalkit.read_run(run, runs_dir=runs_dir)
base_rows = evalkit.read_run(baseline, runs_dir=runs_dir) if baseline else None
run_label = str(rows["run_id"].iloc[0])
base_label = str(base_rows["run_id"].iloc[0]) if base_rows is not None else ""
within = within_flips(rows, confidence=confidence)

# %% [markdown]
# ## Summary

# %%
overview = flip_overview(
    rows, base_rows, run_label=run_label, baseline_label=base_label, confidence=confidence
)
display(interval_table(
    overview.rename(columns={"flip_rate": "estimate"}).assign(confidence=confidence),
    ["scope", "condition"], header="flip rate",
    extra=["n_pairs", "n_flips", "reused_items", "method"],
    table_id="flip-overview",
))

# %% [markdown]
# ## Within-run and between-run flips
#
# Within-run flips measure how much one agent disagrees with itself across trials;
# between-run flips how much a rerun of the same matrix changes the outcomes.

# %%
display(figure_html(
    interval_plot(
        overview.rename(columns={"flip_rate": "estimate"}), label="condition", series="scope",
        title="Flip rate by condition", xlabel="flip rate (whiskers: confidence interval)",
        reference=None, scale="pct",
    ),
    "flips-scope",
    "Flip rate within the run" + (" and between the two runs" if base_rows is not None else "")
    + ", per condition, with confidence intervals.",
))

# %% [markdown]
# ## Flip-rate heatmap
#
# Share of disagreeing trial pairs per case and condition within the run (averaged over
# providers when there are several); the most unstable cases first.

# %%
display(figure_html(
    within.plot_heatmap(title="Within-run flip rate by case and condition",
                        colorbar_label="flip rate (disagreeing trial pairs)", max_rows=max_cases),
    "flip-heatmap",
    "Within-run flip rate per case (rows) and condition (columns).",
))

# %% [markdown]
# ## Most unstable cases

# %%
display(html_table(
    within.unstable_cases(top_n),
    formats={"estimate": pct},
    table_id="unstable",
    empty="No case flipped: every case gave the same outcome on every trial.",
))

# %% [markdown]
# ## Why they flip
#
# For the most unstable cases: their trials side by side with each one's reason, what separates
# the failing trials from the passing ones (the skill loaded or not, the status or error, a
# tool called or not, a component failing), and a passing and a failing transcript aligned at
# their first divergence: the first step of another kind (a skill load, a tool call, an
# answer), or the first answer that differs when the steps are the same (`evalkit.explain`,
# `evalkit explain RUN --case ID`).

# %%
explained = within.unstable_cases(max_explained)
if explained.empty:
    display(note("No case flipped within the run: nothing to explain."))
for group in explained.to_dict("records"):
    display(explanation_fragment(evalkit.explain(
        rows, group["case_id"], condition=group.get("condition"), provider=group.get("provider"),
    )))

# %% [markdown]
# ## Between runs

# %%
if base_rows is None:
    display(note("Pass a second run (`--baseline RUN`) to see between-run flips."))
else:
    between = evalkit.flips(base_rows, rows, confidence=confidence)
    display(figure_html(
        between.plot_heatmap(title=f"Flip rate between {base_label} and {run_label}",
                             colorbar_label="flip rate (matched items)", max_rows=max_cases),
        "flip-heatmap-between",
        "Share of matched work items whose outcome differs between the two runs.",
    ))
    display(interval_table(
        between.unstable_cases(top_n),
        [c for c in ("lane", "case_id", "condition", "provider") if c in between.by_case],
        header="flip rate", extra=["n", "flips"], table_id="unstable-between",
    ))

# %% [markdown]
# ## Flipped items side by side
#
# The same case twice: a trial that passed next to one that failed (within the run), and the
# same work item in the two runs when a baseline is given. Tool calls and skill loads are
# marked, so a different route through the task stands out.
#
# ### Within the run

# %%
display(flip_pairs(run, rows, runs_dir=runs_dir, max_pairs=max_pairs, max_chars=excerpt_chars))

# %% [markdown]
# ### Between the runs

# %%
if base_rows is None:
    display(note("Pass a second run (`--baseline RUN`) to see the same items in both runs."))
else:
    display(flip_pairs(
        run, rows, baseline=baseline, baseline_rows=base_rows, labels=(base_label, run_label),
        runs_dir=runs_dir, max_pairs=max_pairs, max_chars=excerpt_chars,
    ))
