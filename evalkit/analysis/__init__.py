"""Analysis of runs: compare, lift metrics, flips and their causes, power planning, the CI gate.

Every function here accepts runs (directories or ids under ``runs_dir``) or tidy DataFrames:
runs are read through :mod:`evalkit.results`, and the numbers come from :mod:`evalkit.stats`,
which works on tables only.
"""

__all__ = [
    "CompareMetric",
    "ConfirmPlan",
    "CellExplanation",
    "Explanation",
    "explain",
    "LIFT_METRICS",
    "TRIGGER_METRICS",
    "GatePolicy",
    "GateResult",
    "JudgeCalibration",
    "NextStep",
    "LiftResult",
    "RunComparison",
    "check_judge_calibration",
    "compare",
    "compare_report_metrics",
    "flips",
    "gate",
    "lift",
    "power",
    "sequential_compare",
    "Trend",
    "load_items",
    "trend",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.analysis._calibration import (
        JudgeCalibration,
        JudgeCheck as JudgeCheck,
        JudgedRun as JudgedRun,
        check_judge_calibration,
        judged_run as judged_run,
    )
    from evalkit.analysis._case_reasons import (
        side_line as side_line,
    )
    from evalkit.analysis._compare import compare
    from evalkit.analysis._compare_metrics import (
        CompareMetric,
        CompareSides as CompareSides,
        compare_report_metrics,
    )
    from evalkit.analysis._confirm_allocation import (
        allocate_confirmation as allocate_confirmation,
        pilot_pairs as pilot_pairs,
    )
    from evalkit.analysis._confirm_plan import (
        CONFIRM_MAX_TRIALS as CONFIRM_MAX_TRIALS,
        CasePlan as CasePlan,
        ConfirmPlan,
        FlaggedCase as FlaggedCase,
        flagged_cases as flagged_cases,
        plan_confirmation as plan_confirmation,
        screened_case as screened_case,
        strongest_cases as strongest_cases,
    )
    from evalkit.analysis._flips import flips
    from evalkit.analysis._forensics import CellExplanation, Explanation, explain
    from evalkit.analysis._gate import (
        BudgetCheck as BudgetCheck,
        GatePolicy,
        GateResult,
        gate,
        load_policy as load_policy,
    )
    from evalkit.analysis._lift import (
        DEFAULT_ROLES as DEFAULT_ROLES,
        LIFT_COLUMNS as LIFT_COLUMNS,
        LIFT_METRICS,
        TRIGGER_METRICS,
        LiftMetric as LiftMetric,
        LiftResult,
        TriggerMetric as TriggerMetric,
        lift,
        parse_roles as parse_roles,
    )
    from evalkit.analysis._next_step import (
        cases_past_threshold as cases_past_threshold,
        next_step as next_step,
        run_command_line as run_command_line,
        run_suite_path as run_suite_path,
    )
    from evalkit.analysis._pairwise_gate import (
        PairwiseGateResult as PairwiseGateResult,
        pairwise_gate as pairwise_gate,
    )
    from evalkit.analysis._power import power
    from evalkit.analysis._providers import (
        parse_providers as parse_providers,
        select_providers as select_providers,
    )
    from evalkit.analysis._run_comparison import (
        RunComparison,
        condition_table as condition_table,
        wins_table as wins_table,
    )
    from evalkit.analysis._sequential import (
        agent_cost as agent_cost,
        sequential_compare,
    )
    from evalkit.analysis._step_types import (
        NEXT_STEP_POWER as NEXT_STEP_POWER,
        NextStep,
    )
    from evalkit.analysis._trend import (
        TREND_LIFT_METRICS as TREND_LIFT_METRICS,
        Trend,
        load_items,
        trend,
    )
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
