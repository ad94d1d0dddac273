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
# # Comparison
#
# Did the candidate do better, worse, or can we not tell yet? Cases are paired (and trials line
# up by number); the overall interval is a paired cluster bootstrap over cases, and a case is
# named *regressed* or *improved* only when its change, its trials pooled over its providers,
# reaches the practical threshold and its test says so after correction for the number of cases.

# %% tags=["parameters"]
from evalkit.stats import DEFAULT_RESAMPLES

run: str = "tests/fixtures/runs/after"  # candidate run (directory or run id; default: an example)
baseline: str = ""  # baseline run; empty: compare two conditions of `run`
conditions: str = ""  # no baseline: "A,B" (default none,preloaded); else keep only these
runs_dir: str = "runs"  # where run ids are looked up
metric: str = "passed"  # "passed" (pass rate) or "score"
threshold: float = 0.05  # practical threshold for "improved"
confidence: float = 0.95  # confidence level
n_resamples: int = DEFAULT_RESAMPLES  # bootstrap replicates of the overall interval
seed: int = 0  # bootstrap seed
max_cases: int = 40  # most cases in the forest plot
max_pairs: int = 5  # regressed / improved cases shown with their transcripts
excerpt_chars: int = 900  # characters per transcript excerpt
max_items: int = 500  # most items in the item browser (failing and flipped cases first)
sequential: bool = False  # show the sequential trajectory of a run made without --until-verdict
round_cases: int = 10  # cases per look of that trajectory (a sequential run keeps its own)
providers: str = ""  # "P,Q": keep only these providers (default: every provider)

# %%
from IPython.display import Markdown, display

import evalkit
from evalkit.report import compare_view, compared_conditions, comparison_trajectory, project_path

# %%
run, baseline = project_path(run), project_path(baseline)
runs_dir = project_path(runs_dir)
compared = compared_conditions(run, baseline, conditions, runs_dir=runs_dir)
result = evalkit.compare(
    baseline or run, run if baseline else None, conditions=compared or None, metric=metric,
    threshold=threshold, confidence=confidence, n_resamples=n_resamples, seed=seed,
    runs_dir=runs_dir, providers=providers or None,
)
# the runs' rows and transcripts around the result, for the sections below
view = compare_view(run, baseline, compared, runs_dir=runs_dir, providers=providers,
                    result=result)
labels = (view.baseline_label, view.candidate_label)
trajectory = comparison_trajectory(
    view, sequential=sequential, conditions=conditions, runs_dir=runs_dir,
    round_cases=round_cases,
)

# %% [markdown]
# ## Verdict

# %%
display(view.verdict(trajectory))

# %% [markdown]
# ## Where the change is
#
# An average can sit inside the practical threshold while a few cases dropped by 40 pp. Each
# case is judged once, on all of its trials (its providers pooled as strata), and named
# *regressed* or *improved* when its change reaches the practical threshold and its p-value,
# adjusted across the cases, is below alpha. These are the cases `evalkit compare` names, in
# its text and in `--json` (`regressed_cases`, `improved_cases`, `named_cases`).

# %%
display(view.named_cases())

# %%
settle = view.next_step()
if settle is not None:
    display(Markdown(
        "## What would settle it\n\n"
        "The verdict is inconclusive. Planned from these runs' own variance components at 80 % "
        "power: the cases needed at these trials, the trials needed at these cases, and the "
        "command that would run them (docs/statistics.md, 'Next step')."
    ))
    display(settle)

# %%
if trajectory is not None:
    display(Markdown(
        "## Sequential trajectory\n\n"
        "The comparison looked after every round of cases with an anytime-valid confidence "
        "sequence, valid however often it is looked at, and stops at the first settled look: "
        "*improved* (lower bound above 0 and estimate at least the threshold), *regressed* "
        "(upper bound below 0) or *futile* (the sequence inside the band of plus or minus the "
        "threshold). The lower panel: the items and agent cost spent at each look, against the "
        "fixed design that runs every case once (its items at the cost per item observed)."
    ))
    display(view.sequential(trajectory))

# %% [markdown]
# ## By condition
#
# Between two runs every condition is compared on its own, over its cases: an edit to a skill
# changes the conditions that show it. Item pairs whose two sides are one sample (an outcome
# reused from the cache, or a deterministic provider rerun with the same seed) are left out as
# no evidence and counted as reused.

# %%
display(view.by_condition())

# %% [markdown]
# ## By provider
#
# With several providers (models, harnesses) answering the same cases, each gets its own
# verdict over its cases (p-values Holm-adjusted across providers), and the overall figure
# above pools them with each case counted once (its per-provider changes averaged; interval
# and tests clustered by case). Does the skill help some providers more than others? The
# interaction test, the between-provider spread (tau, I2) and the prediction interval for a
# new provider answer it (docs/statistics.md, "Several providers").

# %%
display(view.providers())

# %% [markdown]
# ## Per-case changes
#
# Each row is one case (in one condition): the change in its pass rate from the baseline to the
# candidate, with the case's own interval. Dotted lines mark the practical threshold.

# %%
display(view.forest(max_cases=max_cases))

# %% [markdown]
# ## Wins, losses and ties

# %%
display(view.wins())

# %% [markdown]
# ## What the failures are made of
#
# Failing items of each side counted by their primary cause (see the run report), and the
# change: whether the candidate's items did not finish (a timeout, a limit, a cancellation, a
# sandbox kill, an error) or answered wrong, and whether it fails more for routing (the skill
# not loaded) or for execution (missing patterns, the verifier).

# %%
display(view.failure_causes())

# %% [markdown]
# ## Regressed cases
#
# The named regressed cases (above), each with a baseline item that passed and a candidate item
# that failed, side by side.

# %%
display(view.regressed(max_pairs=max_pairs, max_chars=excerpt_chars))

# %% [markdown]
# ### Why they regressed
#
# For each regressed case (at most `max_pairs`): its trials in both runs with each one's reason,
# what separates the failing trials from the passing ones, and a passing and a failing
# transcript aligned at their first divergence (`evalkit explain CANDIDATE --case ID --baseline
# BASELINE`). In a comparison of two conditions of one run, the candidate condition's own
# trials are explained.

# %%
display(view.why_regressed(max_pairs=max_pairs))

# %% [markdown]
# ## Improved cases

# %%
display(view.improved(max_pairs=max_pairs, max_chars=excerpt_chars))

# %% [markdown]
# ## All cases

# %%
display(view.all_cases())

# %% [markdown]
# ## Unmatched items

# %%
display(view.unmatched())

# %% [markdown]
# ## Judged expectations
#
# Whether the judge behind the judged expectations is calibrated against human labels (a
# verdict that rests on an uncalibrated judge is flagged, and `evalkit gate` refuses it), and
# the pass rate of each judged statement on both sides.

# %%
display(view.judged_expectations())

# %% [markdown]
# ## Evidence bundles
#
# What the evidence-lane items of each side left for a reviewer: every required artifact with
# its status and reason, the manifest's entries with pass/fail, the images that validated and
# the notes as text (failing items first; half the page's bundle budget per side).

# %%
display(view.evidence_bundles())

# %% [markdown]
# ## Browse items
#
# The items of both sides in one table (the `run` column tells them apart), searchable and
# filterable; click a row to read its whole transcript. In a large comparison the table keeps
# whole cases up to `max_items` items, cases whose items both pass and fail
# first, then cases that never pass.

# %%
display(view.item_browser(max_items=max_items, seed=seed))

# %% [markdown]
# ## Further metrics
#
# Other figures computed on the same two sides, each with what it is (`evalkit compare --json`
# carries them as `report_metrics`).

# %%
display(view.further_metrics())

# %% [markdown]
# ## About this report

# %%
display(view.about())
