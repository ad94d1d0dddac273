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
# # Skill optimisation
#
# A hill climb over a skill's text, or over its trigger description (`evalkit optimize
# --target description`, whose objective is trigger F1): each candidate was proposed from failing
# (or mis-routed) *train* cases, evaluated on the *validation* split, and accepted only when the
# paired gate said *improved*. The *test* split stayed sealed until the end and was evaluated
# exactly once, for the seed and the champion: that comparison is the honest number.

# %% tags=["parameters"]
optimization: str = "tests/fixtures/optimize/opt"  # optimize.json dir (default: committed example)

# %%
from IPython.display import display

from evalkit.report import (
    cost_plot,
    figure_html,
    gate_plot,
    html_table,
    key_values,
    load_optimization,
    optimization_facts,
    project_path,
    skill_diff,
    test_summary,
    trajectory_plot,
    verdict_banner,
)

# %%
if not optimization:
    raise ValueError("set `optimization` to the directory `evalkit optimize` wrote (optimize.json)")
opt = load_optimization(project_path(optimization))
verdict, headline, details = test_summary(opt)
display(verdict_banner(verdict, headline, details))
display(key_values(optimization_facts(opt)))

# %% [markdown]
# ## Validation trajectory

# %%
display(figure_html(trajectory_plot(opt), "trajectory",
                       "Validation objective (pass rate, or trigger F1 for a description) of "
                       "every candidate; the line is the champion."))
display(figure_html(gate_plot(opt), "gate",
                       "Paired validation delta of each evaluated candidate vs its champion, "
                       "with the gate's interval."))

# %% [markdown]
# ## Accepts and rejects

# %%
display(html_table(opt.history, table_id="history", caption="Every candidate, in order"))

# %% [markdown]
# ## Cost

# %%
display(figure_html(cost_plot(opt), "cost",
                       "Work items and money spent after each candidate."))

# %% [markdown]
# ## Skill diff (seed to champion)

# %%
display(skill_diff(opt))
