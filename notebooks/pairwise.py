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
# # Pairwise comparison
#
# Which variant gives the better answers? A judge saw each pair of answers blind (labelled
# only "Response 1" and "Response 2") and in both orders, and picked the better one or a tie;
# a pair whose verdict flipped with the order counts as a tie. Below: the verdict, the
# probability that the candidate wins on a random case with its case-cluster bootstrap
# interval, the judge's position bias, the per-case forest, and the pairs side by side with
# the judge's reasons (flipped and contested pairs first). Answers are shown as text.

# %% tags=["parameters"]
run: str = "tests/fixtures/pairwise/tiny"  # run holding the comparison (the candidate run)
runs_dir: str = "runs"  # where run ids are looked up
comparison: str = ""  # name of the stored comparison (default: the newest)
max_pairs: int = 30  # pairs shown side by side

# %%
from IPython.display import display

from evalkit.report import figure_html, html_table, note, project_path, stored_pairwise

# %%
pairwise = stored_pairwise(project_path(run), project_path(runs_dir), comparison)
display(pairwise.banner())
display(pairwise.cards())
for line in pairwise["notes"]:
    display(note(line, "warn"))

# %% [markdown]
# ## Per-case win share

# %%
display(figure_html(pairwise.plot_forest(), "pairwise-forest",
                    "Share of each case's trials the candidate wins (ties as half), with its "
                    "Wilson interval; 50 % is even. Cases are named only by the Holm-corrected "
                    "exact tests."))
display(html_table(pairwise.cases,
                   columns=["case_id", "n_trials", "wins", "losses", "ties", "win_share",
                            "p_adjusted", "verdict"],
                   caption="Per case: exact binomial test on decisive trials, Holm-corrected",
                   table_id="pairwise-cases"))

# %% [markdown]
# ## Ranking

# %%
display(pairwise.ranking())

# %% [markdown]
# ## Pairs side by side

# %%
display(pairwise.pairs(max_pairs=max_pairs))
