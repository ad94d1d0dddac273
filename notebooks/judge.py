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
# # Judge calibration
#
# Can the judge's verdicts be trusted? Its stored calibration against human labels
# (`evalkit judge calibrate`): raw agreement, Cohen's kappa with its confidence interval against
# the suite's `judge.min_kappa`, the confusion matrix, agreement per statement, and every
# disagreement with the judge's evidence and the transcript. Then the pass rate of each judged
# statement. Model output below is shown as text.

# %% tags=["parameters"]
run: str = "tests/fixtures/judged/run"  # judged run directory or run id (default: an example)
runs_dir: str = "runs"  # where run ids are looked up
confidence: float = 0.95  # confidence level of the pass-rate intervals
max_disagreements: int = 20  # disagreements shown with their transcripts

# %%
from IPython.display import display

from evalkit.report import (
    agreement_table,
    calibration_facts,
    calibration_note,
    confusion_plot,
    disagreements_html,
    figure_html,
    interval_table,
    note,
    project_path,
    run_overview,
    stored_calibrations,
)

# %%
overview = run_overview(project_path(run), runs_dir=project_path(runs_dir), confidence=confidence)
run_dir = overview.run_dir
check = overview.judge_calibration
calibrations = stored_calibrations(run_dir)
min_kappa = {tuple(c.judge.values()): c.min_kappa for c in check.judges} if check else {}

# %% [markdown]
# ## Is the judge calibrated?

# %%
display(calibration_note(check))

# %% [markdown]
# ## Agreement with human labels

# %%
if not calibrations:
    display(note("No calibration stored for this run's judge: label a sample (evalkit judge "
                 "sample, or the labels report) and run evalkit judge calibrate.", "warn"))
for calibration in calibrations:
    display(calibration_facts(calibration,
                              min_kappa=min_kappa.get(tuple(calibration["judge"].values()))))
    display(figure_html(confusion_plot(calibration), "judge-confusion",
                        "Confusion matrix: judge verdict (rows) against the human label "
                        "(columns)."))
    display(agreement_table(calibration))

# %% [markdown]
# ## Disagreements

# %%
for calibration in calibrations:
    display(disagreements_html(calibration, run_dir, max_items=max_disagreements))

# %% [markdown]
# ## Pass rate per judged statement

# %%
display(interval_table(overview.expectation_pass_rates(), ["expectation", "condition"],
                       header="pass rate", table_id="expectation-pass-rates",
                       empty="no judged statement"))
