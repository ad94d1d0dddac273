"""Statistics for evalkit: intervals, paired comparisons, flip rates, verdicts, power, agreement.

Every function accepts tidy DataFrames (``case_id, condition, trial, passed``; ``score`` where
relevant), never paths: reading runs is the job of :mod:`evalkit.results`, and the run-level
functions of :mod:`evalkit.analysis` (``compare``, ``flips``, ``lift``, ``power``) accept runs.
Results are tidy DataFrames or small result objects with ``ci_low``/``ci_high``. Randomness is
explicit (``seed``). See ``docs/architecture.md``, "Metrics and verdicts".

Besides the statistics, other evalkit packages use :func:`as_frame` (validation of a result
table), :func:`records` (JSON rows of a frame), :func:`percentile_interval` and
:func:`case_delta_interval` (the interval of a mean per-case difference, shared by ``compare``
and ``lift``).
"""

__all__ = [
    "CompareOptions",
    "DEFAULT_RESAMPLES",
    "FlipRate",
    "NeymanAllocation",
    "PairedComparison",
    "PowerDesign",
    "PowerResult",
    "QUICK_RESAMPLES",
    "bradley_terry",
    "cluster_bootstrap",
    "clustered_se",
    "cohens_kappa",
    "compare_tables",
    "confidence_sequence",
    "equivalence_cases",
    "estimate_variance_components",
    "flip_rate_between",
    "flip_rate_within",
    "headroom_model",
    "mean_ci",
    "minimum_detectable_effect",
    "paired_bootstrap_delta",
    "paired_compare",
    "pairwise_stats",
    "pass_rates",
    "proportion_ci",
    "ratio_wilson",
    "required_cases",
    "required_trials",
    "sequential_compare_tables",
    "simulate_allocation",
    "simulate_power",
    "simulate_sequential",
    "unmatched_lines",
    "verdict",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.stats._adaptive import (
        AdaptiveTrials as AdaptiveTrials,
        adaptive_case_estimates as adaptive_case_estimates,
        stage_two_decisions as stage_two_decisions,
        stage_two_draw as stage_two_draw,
    )
    from evalkit.stats._adaptive_power import AdaptivePlan as AdaptivePlan
    from evalkit.stats._agreement import Kappa as Kappa, cohens_kappa
    from evalkit.stats._allocation import (
        NeymanAllocation,
        allocation_probabilities as allocation_probabilities,
        draw_round as draw_round,
        weighted_increments as weighted_increments,
    )
    from evalkit.stats._allocation_compare import (
        ALLOCATION_METHOD as ALLOCATION_METHOD,
        allocated_compare_tables as allocated_compare_tables,
    )
    from evalkit.stats._allocation_replay import (
        AllocationPlan as AllocationPlan,
        allocation_plan as allocation_plan,
    )
    from evalkit.stats._allocation_simulation import (
        AllocationSimulation as AllocationSimulation,
        simulate_allocation,
    )
    from evalkit.stats._bootstrap import (
        case_delta_interval as case_delta_interval,
        cluster_bootstrap,
        paired_bootstrap_delta,
        percentile_interval as percentile_interval,
    )
    from evalkit.stats._bradley_terry import BradleyTerry as BradleyTerry, bradley_terry
    from evalkit.stats._case_confirm import (
        TrialsPlan as TrialsPlan,
        confirm_case_table as confirm_case_table,
        fisher_power as fisher_power,
        trials_to_confirm as trials_to_confirm,
    )
    from evalkit.stats._case_summary import correction_words as correction_words
    from evalkit.stats._compare import compare_tables
    from evalkit.stats._delta_interval import (
        discordance_bound as discordance_bound,
        tied_pairs_behind as tied_pairs_behind,
        tied_pairs_needed as tied_pairs_needed,
        tied_pairs_of as tied_pairs_of,
    )
    from evalkit.stats._equivalence import (
        equivalence as equivalence,
        equivalence_cases,
        equivalence_power as equivalence_power,
    )
    from evalkit.stats._flips import FlipRate, flip_rate_between, flip_rate_within
    from evalkit.stats._frame import (
        as_frame as as_frame,
        json_ready as json_ready,
        records as records,
    )
    from evalkit.stats._heterogeneity import (
        Heterogeneity as Heterogeneity,
        heterogeneity as heterogeneity,
    )
    from evalkit.stats._interval import Interval as Interval
    from evalkit.stats._matched import MatchedRates as MatchedRates, matched_rates as matched_rates
    from evalkit.stats._mcnemar import McNemarResult as McNemarResult
    from evalkit.stats._means import clustered_se, mean_ci
    from evalkit.stats._options import CompareOptions
    from evalkit.stats._paired import PairedComparison, paired_compare
    from evalkit.stats._pairwise import (
        DEFAULT_PAIRWISE_THRESHOLD as DEFAULT_PAIRWISE_THRESHOLD,
        PairwiseStats as PairwiseStats,
        SignTest as SignTest,
        pairwise_stats,
    )
    from evalkit.stats._plan_model import PlanModel as PlanModel, headroom_model
    from evalkit.stats._power import (
        DEFAULT_CONCENTRATION as DEFAULT_CONCENTRATION,
        PowerDesign,
        PowerResult,
        minimum_detectable_effect,
        required_cases,
    )
    from evalkit.stats._power_trials import required_trials
    from evalkit.stats._proportions import (
        cluster_wilson as cluster_wilson,
        pass_rates,
        proportion_ci,
        ratio_wilson,
    )
    from evalkit.stats._providers import (
        provider_summary as provider_summary,
        provider_table as provider_table,
    )
    from evalkit.stats._reuse import (
        ReuseSplit as ReuseSplit,
        one_sample as one_sample,
        reused_note as reused_note,
        split_reused as split_reused,
    )
    from evalkit.stats._row_family import family_columns as family_columns
    from evalkit.stats._sequential import (
        FUTILE_PLANNED as FUTILE_PLANNED,
        FUTILITY_BETA as FUTILITY_BETA,
        SEQUENTIAL_METHOD as SEQUENTIAL_METHOD,
        ConfidenceSequence as ConfidenceSequence,
        Look as Look,
        RunningConfidenceSequence as RunningConfidenceSequence,
        case_order as case_order,
        confidence_sequence,
        futility_log_wealth as futility_log_wealth,
        sequential_verdict as sequential_verdict,
    )
    from evalkit.stats._sequential_compare import (
        SequentialComparison as SequentialComparison,
        sequential_compare_tables,
    )
    from evalkit.stats._sequential_power import SequentialPlan as SequentialPlan
    from evalkit.stats._sequential_simulation import (
        simulate_sequential,
    )
    from evalkit.stats._settings import (
        DEFAULT_RESAMPLES,
        DEFAULT_THRESHOLD as DEFAULT_THRESHOLD,
        QUICK_RESAMPLES,
        check_threshold as check_threshold,
        threshold_field as threshold_field,
    )
    from evalkit.stats._signflip import minimum_cases as minimum_cases
    from evalkit.stats._simulate import simulate_power
    from evalkit.stats._ties import (
        PairTies as PairTies,
        pair_ties as pair_ties,
        row_pairs as row_pairs,
    )
    from evalkit.stats._types import (
        CORRECTIONS as CORRECTIONS,
        METRICS as METRICS,
        VERDICTS as VERDICTS,
        Correction as Correction,
        Metric as Metric,
        Verdict as Verdict,
    )
    from evalkit.stats._unmatched import (
        left_out_text as left_out_text,
        unmatched_lines,
        unmatched_summary as unmatched_summary,
    )
    from evalkit.stats._variance import (
        VarianceComponents as VarianceComponents,
        estimate_variance_components,
    )
    from evalkit.stats._verdicts import (
        adjust_pvalues as adjust_pvalues,
        holm as holm,
        verdict,
    )
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
