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

from evalkit.report import figure_html, html_table, load_optimization, project_path

# %%
if not optimization:
    raise ValueError("set `optimization` to the directory `evalkit optimize` wrote (optimize.json)")
opt = load_optimization(project_path(optimization))
display(opt.banner())
display(opt.facts())

# %% [markdown]
# ## Validation trajectory

# %%
display(figure_html(opt.plot_trajectory(), "trajectory",
                    "Validation objective (pass rate, or trigger F1 for a description) of "
                    "every candidate; the line is the champion."))
display(figure_html(opt.plot_gate(), "gate",
                    "Paired validation delta of each evaluated candidate vs its champion, "
                    "with the gate's interval."))

# %% [markdown]
# ## Accepts and rejects

# %%
display(html_table(opt.history, table_id="history", caption="Every candidate, in order"))

# %% [markdown]
# ## Cost

# %%
display(figure_html(opt.plot_cost(), "cost",
                    "Work items and money spent after each candidate."))

# %% [markdown]
# ## Skill diff (seed to champion)

# %%
display(opt.skill_diff())
