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
# # Ablation: which part of the skill does the work?
#
# Each component of the skill (its trigger description, each top-level section of `SKILL.md`,
# each `references/`, `scripts/` or `assets/` file) was removed from a real copy of the skill,
# and each copy ran as a condition beside the full skill. A component's *contribution* is the
# full skill's pass rate minus the copy's, paired by case. *Necessary* and *harmful* verdicts
# hold a family-wise error of alpha across the components; *no detectable effect* comes with
# the smallest effect the study could have shown, so dead weight is never claimed beyond it.

# %% tags=["parameters"]
study: str = "tests/fixtures/ablation/study"  # ablation study directory (holding ablation.json)

# %%
from IPython.display import display

from evalkit.ablation import read_ablation
from evalkit.report import (
    ablation_banner,
    ablation_cost_table,
    ablation_facts,
    ablation_verdict_table,
    figure_html,
    minimal_summary,
    project_path,
)

# %%
if not study:
    raise ValueError("set `study` to the directory `evalkit ablate` wrote (ablation.json)")
result = read_ablation(project_path(study))
display(ablation_banner(result))
display(ablation_facts(result))

# %% [markdown]
# ## Contributions

# %%
display(figure_html(result.plot(), "ablation",
                    "Full skill minus the skill without each component, with simultaneous "
                    "intervals; dotted lines at the threshold."))
display(ablation_verdict_table(result))

# %% [markdown]
# ## Cost

# %%
display(ablation_cost_table(result))

# %% [markdown]
# ## The minimal skill

# %%
display(minimal_summary(result))
