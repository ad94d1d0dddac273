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
# # Label the judge's statements
#
# A sample of the statements the judge graded, for a person to label by hand: read the prompt
# and the answer, click **pass** or **fail** for the statement, then export the CSV and give it
# to `evalkit judge calibrate`. The judge's own verdicts and evidence are not shown, so that
# they cannot sway the labeller. The page works offline, opened straight from disk.

# %% tags=["parameters"]
run: str = "tests/fixtures/judged/run"  # the judged run (names the exported file)
runs_dir: str = "runs"  # where run ids are looked up
labels: str = "tests/fixtures/judged/labels.csv"  # labels CSV written by evalkit judge sample

# %%
from pathlib import Path

from IPython.display import display

from evalkit.report import labelling_page, project_path, read_label_rows

# %%
labels = project_path(labels)
rows = read_label_rows(labels)

# %% [markdown]
# ## Statements to label

# %%
display(labelling_page(rows, run_id=Path(project_path(run)).name))
