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
from evalkit.report import (
    calibration_note,
    case_keys,
    case_named_column,
    case_pairs,
    cause_changes,
    compare_view,
    compared_conditions,
    comparison_calibration,
    comparison_statements,
    comparison_trajectory,
    evidence_bundles,
    expectation_pass_rates,
    explanation_fragment,
    figure_html,
    html_table,
    interval_table,
    item_browser,
    key_values,
    looks_table,
    named_case_columns,
    named_case_table,
    named_cases_section,
    next_step_facts,
    no_named_case_note,
    note,
    paired_excerpts,
    paired_rows,
    pp,
    project_path,
    provider_section,
    run_scores,
    sequential_plot,
    stat_cards,
    trajectory_facts,
    verdict_banner,
    verdict_lines,
    wins_note,
)
from evalkit.stats import unmatched_lines

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
headline, details = verdict_lines(view)
if trajectory is not None:
    details.append(
        f"sequential verdict: {trajectory_facts(trajectory)['sequential verdict']}; the "
        "interval above is the fixed-design one over the cases run, valid for one look at a "
        "number of cases fixed in advance (see Sequential trajectory)"
    )
display(verdict_banner(result.verdict, headline, details))
display(stat_cards([
    ("wins", str(result.wins), "cases where the candidate does better"),
    ("losses", str(result.losses), "cases where it does worse"),
    ("ties", str(result.ties), "cases with no change"),
    ("named cases", f"{len(result.regressed_cases)} / {len(result.improved_cases)}",
     "regressed / improved after correction"),
]))

# %% [markdown]
# ## Where the change is
#
# An average can sit inside the practical threshold while a few cases dropped by 40 pp. Each
# case is judged once, on all of its trials (its providers pooled as strata), and named
# *regressed* or *improved* when its change reaches the practical threshold and its p-value,
# adjusted across the cases, is below alpha. These are the cases `evalkit compare` names, in
# its text and in `--json` (`regressed_cases`, `improved_cases`, `named_cases`).

# %%
display(named_cases_section(result.stats))

# %%
settle = next_step_facts(result)
if settle is not None:
    display(Markdown(
        "## What would settle it\n\n"
        "The verdict is inconclusive. Planned from these runs' own variance components at 80 % "
        "power: the cases needed at these trials, the trials needed at these cases, and the "
        "command that would run them (docs/statistics.md, 'Next step')."
    ))
    display(key_values(settle))

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
    display(key_values(trajectory_facts(trajectory)))
    display(figure_html(
        sequential_plot(trajectory),
        "sequential",
        "Estimate and confidence sequence after each look, with the stopping boundaries and "
        "the settling look marked; below, items and agent cost spent against the fixed design.",
    ))
    display(looks_table(trajectory))

# %% [markdown]
# ## By condition
#
# Between two runs every condition is compared on its own, over its cases: an edit to a skill
# changes the conditions that show it. Item pairs whose two sides are one sample (an outcome
# reused from the cache, or a deterministic provider rerun with the same seed) are left out as
# no evidence and counted as reused.

# %%
display(interval_table(
    result.condition_table(), ["condition"], kind="pp", header="change",
    extra=["verdict", "n_cases", "reused_items"], table_id="by-condition",
    empty="Two conditions of one run are compared: see the verdict above.",
))

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
display(provider_section(result.stats))

# %% [markdown]
# ## Per-case changes
#
# Each row is one case (in one condition): the change in its pass rate from the baseline to the
# candidate, with the case's own interval. Dotted lines mark the practical threshold.

# %%
display(figure_html(
    result.plot_forest(max_cases=max_cases),
    "forest",
    f"Per-case change from {labels[0]} to {labels[1]}, with per-case confidence intervals.",
))

# %% [markdown]
# ## Wins, losses and ties

# %%
display(html_table(result.wins_table(), caption="By condition", table_id="wins"))
if wins_note(result.stats):
    display(note(wins_note(result.stats)))

# %% [markdown]
# ## What the failures are made of
#
# Failing items of each side counted by their primary cause (see the run report), and the
# change: whether the candidate's items did not finish (a timeout, a limit, a cancellation, a
# sandbox kill, an error) or answered wrong, and whether it fails more for routing (the skill
# not loaded) or for execution (missing patterns, the verifier).

# %%
paired_baseline, paired_candidate = paired_rows(view)
display(cause_changes(
    paired_baseline, run_scores(view.baseline_run), paired_candidate,
    run_scores(view.candidate_run), labels=labels,
))
if len(paired_baseline) < len(view.baseline_rows) or len(paired_candidate) < len(
    view.candidate_rows
):
    display(note(
        "Counted over the units both sides ran: the unmatched items (see below) are left out, "
        "so a provider that ran only one side adds no failures to either column."
    ))

# %% [markdown]
# ## Regressed cases
#
# The named regressed cases (above), each with a baseline item that passed and a candidate item
# that failed, side by side.

# %%
cases = result.case_table()
named = named_case_table(result.stats)
regressed = named[named["verdict"] == "regressed"]
display(interval_table(
    regressed, named_case_columns(result.stats), kind="pp", header="change",
    extra=["baseline_rate", "candidate_rate", "n_baseline", "n_candidate", "p_adjusted"],
    table_id="regressed",
    empty=no_named_case_note(result.stats) or "No case is named regressed.",
))
display(paired_excerpts(
    case_pairs(view, "regressed", max_pairs),
    baseline_run=view.baseline_run, candidate_run=view.candidate_run,
    baseline_rows=view.baseline_rows, candidate_rows=view.candidate_rows,
    labels=labels, max_chars=excerpt_chars,
))

# %% [markdown]
# ### Why they regressed
#
# For each regressed case (at most `max_pairs`): its trials in both runs with each one's reason,
# what separates the failing trials from the passing ones, and a passing and a failing
# transcript aligned at their first divergence (`evalkit explain CANDIDATE --case ID --baseline
# BASELINE`). In a comparison of two conditions of one run, the candidate condition's own
# trials are explained.

# %%
for case in regressed.head(max_pairs).to_dict("records"):
    if view.mode == "runs":
        why = evalkit.explain(
            view.candidate_run, case["case_id"], baseline=view.baseline_run,
            condition=case.get("condition"),
        )
    else:
        candidate_condition = view.conditions[1] if view.conditions else None
        why = evalkit.explain(view.candidate_run, case["case_id"], condition=candidate_condition)
    display(explanation_fragment(why))
if regressed.empty:
    display(note("No case is named regressed: nothing to explain."))

# %% [markdown]
# ## Improved cases

# %%
improved = named[named["verdict"] == "improved"]
display(interval_table(
    improved, named_case_columns(result.stats), kind="pp", header="change",
    extra=["baseline_rate", "candidate_rate", "n_baseline", "n_candidate", "p_adjusted"],
    table_id="improved",
    empty=no_named_case_note(result.stats) or "No case is named improved.",
))
display(paired_excerpts(
    case_pairs(view, "improved", max_pairs),
    baseline_run=view.baseline_run, candidate_run=view.candidate_run,
    baseline_rows=view.baseline_rows, candidate_rows=view.candidate_rows,
    labels=labels, max_chars=excerpt_chars,
))

# %% [markdown]
# ## All cases

# %%
display(note(
    f"One row per case in each condition and provider. Each row's interval is its own "
    f"({confidence:.0%}, unadjusted); its verdict needs its p-value after {result.correction} "
    f"correction across the {len(cases)} rows to be at most {result.alpha:g}, so a row whose "
    "interval excludes 0 can stay inconclusive (decided_by says which applied). The named "
    "cases above pool a case's providers into one row (case_named)."
))
display(interval_table(
    cases.assign(case_named=case_named_column(result.stats)).sort_values("estimate", kind="stable"),
    case_keys(result.cases), kind="pp", header="change",
    extra=["n_baseline", "n_candidate", "p_value", "p_adjusted", "verdict", "decided_by",
           "case_named"],
    table_id="all-cases",
))

# %% [markdown]
# ## Unmatched items

# %%
for line in unmatched_lines(result, listed=" (listed below)"):
    display(note(line.strip()))
display(html_table(
    result.unmatched, table_id="unmatched",
    empty="Every case and condition is present on both sides.",
))

# %% [markdown]
# ## Judged expectations
#
# Whether the judge behind the judged expectations is calibrated against human labels (a
# verdict that rests on an uncalibrated judge is flagged, and `evalkit gate` refuses it), and
# the pass rate of each judged statement on both sides.

# %%
display(calibration_note(comparison_calibration(view)))
display(interval_table(
    expectation_pass_rates(comparison_statements(view), by=["run", "condition"],
                           confidence=confidence),
    ["expectation", "run", "condition"], header="pass rate",
    table_id="expectation-pass-rates", empty="no judged statement on either side",
))

# %% [markdown]
# ## Evidence bundles
#
# What the evidence-lane items of each side left for a reviewer: every required artifact with
# its status and reason, the manifest's entries with pass/fail, the images that validated and
# the notes as text (failing items first; half the page's bundle budget per side).

# %%
for label, side_run, side_rows in (
    (labels[0], view.baseline_run, view.baseline_rows),
    (labels[1], view.candidate_run, view.candidate_rows),
):
    display(note(f"{label}: evidence bundles"))
    display(evidence_bundles(side_run, side_rows, runs_dir=runs_dir, max_items=6,
                             max_embed_bytes=1_000_000))

# %% [markdown]
# ## Browse items
#
# The items of both sides in one table (the `run` column tells them apart), searchable and
# filterable; click a row to read its whole transcript. In a large comparison the table keeps
# whole cases up to `max_items` items, cases whose items both pass and fail
# first, then cases that never pass.

# %%
display(item_browser(
    view.candidate_run, view.candidate_rows, baseline=view.baseline_run,
    baseline_rows=view.baseline_rows, labels=labels, runs_dir=runs_dir, max_items=max_items,
    seed=seed,
))

# %% [markdown]
# ## Further metrics
#
# Other figures computed on the same two sides, each with what it is (`evalkit compare --json`
# carries them as `report_metrics`).

# %%
import pandas as pd

display(html_table(
    pd.DataFrame(list(result.report_metrics), columns=["label", "value", "description"]),
    columns={"label": "metric", "value": "value", "description": "what it is"},
    table_id="report-metrics", empty="No further metric is registered.",
))

# %% [markdown]
# ## About this report

# %%
display(key_values({
    "baseline": labels[0],
    "candidate": labels[1],
    "metric": result.metric,
    "overall interval": f"{result.delta.method}, {n_resamples:,} resamples, seed {seed}",
    "per-case tests": f"exact tests, {result.correction} correction, alpha {result.alpha:g}",
    "named cases": f"pooled case rows (CMH or Fisher), {result.case_correction} across cases, "
                   f"alpha {result.alpha:g}",
    "practical threshold": pp(result.threshold),
    "evalkit": evalkit.__version__,
}))
