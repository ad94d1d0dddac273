"""Skill-lift metrics (seed 002): realized and oracle lift, routing gap, stale harm, and more.

With A = ``none``, B = ``self-load``, C = ``preloaded`` and D = ``stale``
(``docs/architecture.md``):

========================  ==================================================================
realized_lift             success(B) - success(A)
oracle_lift               success(C) - success(A)
routing_gap               success(C) - success(B)
stale_harm                success(D) - success(C)
regression_rate           share of cases passing under A that fail under B or C
unlock_rate               share of cases failing under A that pass under B or C
routing_efficiency        (B - A) / max(eps, C - A)
trigger_precision/...     from ``expected_skill`` vs ``inferred_skill`` under self-load
========================  ==================================================================

Success rates average trials within a case first, so a case with more trials does not weigh
more; the pool over providers averages each provider's rate of a case, so a provider that ran
more trials of it does not weigh more either (``compare``'s weighting). A case "passes" under a
condition (for regression and unlock rates) when at least half its trials pass. Every metric is
computed on the cases that have the conditions it needs; cases missing a condition are listed
in ``missing``, never silently dropped. A condition whose
every item of a group ended in an error or a timeout (a dead server, a refused key) measured
nothing: the metrics and the success rate that involve it are null, with a ``note`` naming the
condition and its dominant error, and ``notes`` lists each such condition. Intervals come
from one joint bootstrap over cases per (provider, lane) group (the same resampled cases for
every metric), with Hesterberg's expanded percentile interval; the differences (the lifts, the
stale harm, the routing gap) are widened as compare's are (to contain the t interval, and to a
Wilson bound where every case moved alike, or the bound of the tied pairs where none moved, so 2
cases never get ``[0, 0]``). Shares (regression
and unlock rate, trigger precision, recall, over- and under-triggering) get the clustered Wilson
interval of a ratio (:func:`evalkit.stats.ratio_wilson`, method ``cluster-wilson``): every
bootstrap replicate of 4 of 4 is 1, Wilson's interval is [0.51, 1]. The per-condition success
rates (one arm each) use the clustered Wilson interval with a few-cluster correction
(:func:`evalkit.stats._proportions.cluster_wilson`): a case bootstrap of a rare pass rate
covers only about 87 % with 20 cases, the clustered Wilson 97 %.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

import numpy as np
import pandas as pd

from evalkit._display import RichDisplay, draw
from evalkit._settings import CONFIDENCE, N_RESAMPLES, RUNS_DIR, SEED
from evalkit.analysis._case_reasons import run_scores
from evalkit.analysis._contrasts import LIFT_CONTRASTS
from evalkit.analysis._evidence import (
    EVIDENCE_COLUMNS,
    INTERVAL_COLUMNS,
    evidence_metrics,
    with_lane_metrics,
)
from evalkit.analysis._lift_causes import FAILURE_CHANGE_COLUMNS, lift_cause_changes
from evalkit.analysis._lift_scope import (
    PoolScope,
    case_rates,
    pool_cells,
    records_loading,
    trigger_absence,
)
from evalkit.analysis._providers import select_providers
from evalkit.analysis._resample import CaseResampler
from evalkit.errors import InputError
from evalkit.results import FailureRecord, errored_conditions, failure_causes, load_results
from evalkit.stats import (
    Interval,
    PairTies,
    as_frame,
    cluster_wilson,
    pair_ties,
    percentile_interval,
    records,
    row_pairs,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure


#: The ``provider`` label of metrics pooled over providers.
POOLED = "pooled"

#: The conditions the lift metrics are defined on, by role.
DEFAULT_ROLES: dict[str, str] = {
    "A": "none",
    "B": "self-load",
    "C": "preloaded",
    "D": "stale",
}

#: Metric names, in report order (exactly as ``docs/architecture.md`` names them).
LiftMetric = Literal[
    "realized_lift",
    "oracle_lift",
    "routing_gap",
    "stale_harm",
    "regression_rate",
    "unlock_rate",
    "routing_efficiency",
]
#: Skill-trigger metric names (rows of ``LiftResult.metrics`` when the run infers skills).
TriggerMetric = Literal[
    "trigger_precision",
    "trigger_recall",
    "trigger_f1",
    "over_trigger_rate",
    "under_trigger_rate",
]
LIFT_METRICS: tuple[LiftMetric, ...] = get_args(LiftMetric)
TRIGGER_METRICS: tuple[TriggerMetric, ...] = get_args(TriggerMetric)
#: Columns of :attr:`LiftResult.metrics`, in order.
LIFT_COLUMNS = ("provider", "lane", "metric", *INTERVAL_COLUMNS)
EPSILON = 0.01
METHOD = "case-bootstrap"

#: Columns of :attr:`LiftResult.notes` (conditions with only errors).
#: Columns of ``LiftResult.failure_causes``.
FAILURE_CAUSE_COLUMNS = ("provider", "condition", "outcome", "cause", "failures", "share")
NOTE_COLUMNS = [
    "provider", "lane", "condition", "roles", "items", "error_class", "count", "message", "note",
]

#: The roles (conditions) each metric is computed from.
_ROLES_OF: dict[str, frozenset[str]] = {
    "realized_lift": frozenset("AB"),
    "oracle_lift": frozenset("AC"),
    "routing_gap": frozenset("BC"),
    "stale_harm": frozenset("CD"),
    "regression_rate": frozenset("ABC"),
    "unlock_rate": frozenset("ABC"),
    "routing_efficiency": frozenset("ABC"),
    **{name: frozenset("B") for name in TRIGGER_METRICS},
}


@dataclass(frozen=True)
class LiftResult(RichDisplay):
    """Lift metrics of one run.

    Attributes:
        run_id: The run (or ``""`` for a DataFrame without ``run_id``).
        metrics: One row per (provider, lane, metric): ``provider, lane, metric, estimate,
            ci_low, ci_high, n_cases, confidence, method``.
        success: One row per (provider, lane, condition): ``provider, lane, condition,
            n_cases, estimate, ci_low, ci_high, confidence, method``.
        missing: Cases lacking a condition: ``provider, lane, case_id, missing``.
        roles: Which condition played A, B, C and D.
        notes: Conditions with only errors, whose metrics are null: ``provider, lane,
            condition, roles, items, error_class, count, message, note``.
        evidence: The evidence lane's metrics (``evidence_completeness``,
            ``report_completeness``, ``taxonomy_usage``) per condition and their lifts, with
            intervals: ``provider, lane, metric, contrast, condition, estimate, ci_low,
            ci_high, n_cases, confidence, method`` (see :mod:`evalkit.analysis._evidence`);
            empty without evidence items.

        pooled: Per lane with several providers, the metrics pooled over providers (the
            ``metrics`` columns, ``provider`` = ``"pooled"``): each case counts once (the
            mean of its providers' rates, so every provider of a case weighs the same however
            many trials it ran, as in ``compare``) and the interval resamples cases, never
            (case, provider) units. Only the
            (provider, case) cells that ran every role condition of the lane are pooled.
        pooled_scope: Per lane with several providers, what the pool counts and leaves out.
        trigger_note: Why the trigger metrics are absent ("" when computed or not wanted).
        failure_changes: Each other condition's failing items by outcome ("did not finish",
            "answered wrong") and primary cause beside the baseline condition's (role A):
            columns ``provider, baseline_condition, condition, outcome, cause, baseline,
            candidate, change``.

    ``metrics`` and ``success`` carry a ``note`` column too: empty, or why the row is null.

    Its figures (matplotlib, drawn by :mod:`evalkit.report` with the condition palette): the
    :meth:`plot` of the metrics and the :meth:`plot_success` of the success rates.
    """

    run_id: str
    metrics: pd.DataFrame
    success: pd.DataFrame
    missing: pd.DataFrame
    roles: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_ROLES))
    notes: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=NOTE_COLUMNS))
    pooled: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=[*LIFT_COLUMNS, "note"])
    )
    evidence: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(EVIDENCE_COLUMNS))
    )
    failure_causes: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(FAILURE_CAUSE_COLUMNS))
    )
    pooled_scope: tuple[PoolScope, ...] = ()
    trigger_note: str = ""
    failure_changes: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(FAILURE_CHANGE_COLUMNS))
    )

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit lift --json`` object.

        ``run_id`` and ``metrics`` as ``docs/architecture.md`` defines them, extended with
        ``success``, ``missing_cases``, ``roles``, ``notes`` (conditions with only errors;
        their metrics are null), ``pooled_metrics`` (the metrics pooled over providers, each
        case once, ``provider`` = ``"pooled"``; empty with one provider) and ``evidence`` (the
        evidence lane's metrics). Extended with ``failure_causes`` (what each provider's and
        condition's failures are made of: failing items by primary cause, each counted once),
        ``pooled_scope`` (per lane with several providers: the providers and (provider, case)
        cells the pool counts, those left out and why; see :class:`PoolScope`) and
        ``trigger_note`` (why the trigger metrics are absent: the data records no skill
        loading; "" otherwise) and ``failure_changes`` (each condition's failing items by
        outcome and cause against the baseline condition's, role A).
        """
        keys = ["provider", "lane", "metric", "estimate", "ci_low", "ci_high", "n_cases"]
        return {
            "run_id": self.run_id,
            "metrics": records(self.metrics[keys]),
            "success": records(self.success),
            "missing_cases": records(self.missing),
            "roles": dict(self.roles),
            "notes": records(self.notes),
            "pooled_metrics": records(self.pooled[keys]),
            "evidence": records(self.evidence),
            "failure_causes": records(self.failure_causes),
            "pooled_scope": [scope.to_dict() for scope in self.pooled_scope],
            "trigger_note": self.trigger_note,
            "failure_changes": records(self.failure_changes),
        }

    def plot(self, *, title: str = "Skill lift") -> Figure:
        """The lift metrics of each provider and lane with their case-bootstrap intervals.

        Args:
            title: Figure title.

        Returns:
            The figure (``evalkit.report.figure_html`` embeds it in a page).
        """
        return cast("Figure", draw(self, "plot", title=title))

    def plot_success(self, *, max_facets: int = 8) -> Figure:
        """The success rate of each condition, one panel per provider and lane.

        Args:
            max_facets: Most panels drawn.

        Returns:
            The figure.
        """
        return cast("Figure", draw(self, "plot_success", max_facets=max_facets))

    def metric(
        self,
        name: LiftMetric | TriggerMetric,
        provider: str | None = None,
        lane: str | None = None,
    ) -> float:
        """Estimate of one metric (the first group matching ``provider``/``lane``)."""
        rows = self.metrics[self.metrics["metric"] == name]
        if provider is not None:
            rows = rows[rows["provider"] == provider]
        if lane is not None:
            rows = rows[rows["lane"] == lane]
        if rows.empty:
            raise KeyError(name)
        return float(rows["estimate"].iloc[0])


def _metric_row(
    metric: LiftMetric | TriggerMetric, interval: Interval, used: int
) -> dict[str, Any]:
    """One row of the tidy metrics table."""
    return {
        "metric": metric,
        "estimate": interval.estimate,
        "ci_low": interval.ci_low,
        "ci_high": interval.ci_high,
        "n_cases": used,
        "confidence": interval.confidence,
        "method": interval.method,
    }


def _trial_bits(group: pd.DataFrame) -> pd.DataFrame | None:
    """Each case's pass rate per condition and trial (None without a ``trial`` column)."""
    if "trial" not in group.columns:
        return None
    return group.pivot_table(
        index="case_id", columns=["condition", "trial"], values="passed", aggfunc="mean",
        observed=True,
    ).astype(float)


def _contrast_ties(
    bits: pd.DataFrame | None, cases: np.ndarray, high: str | None, low: str | None
) -> PairTies | None:
    """The aligned trial pairs of one contrast over ``cases`` (as ``compare`` counts them).

    ``bits`` is the group's :func:`_trial_bits`, made once for its four contrasts.
    """
    if high is None or low is None or bits is None or not len(cases):
        return None
    trials = sorted({key[1] for key in bits.columns if key[0] in (high, low)})
    frame = bits.reindex(index=cases, columns=pd.MultiIndex.from_product([[low, high], trials]))
    return pair_ties(row_pairs(frame[low].to_numpy(), frame[high].to_numpy()))


def _group_metrics(
    group: pd.DataFrame,
    roles: Mapping[str, str],
    resampler_seed: int | None,
    n_resamples: int,
    confidence: float,
    *,
    delta_seed: int | None,
    providers_alike: bool = False,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    rates = case_rates(group, providers_alike=providers_alike)
    present = [c for c in roles.values() if c in rates.columns]
    cases = rates.index.to_numpy()
    resampler = CaseResampler(len(cases), n_resamples, resampler_seed)
    rows: list[dict[str, Any]] = []
    success: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []

    def col(role: str) -> np.ndarray:
        name = roles[role]
        if name not in rates.columns:
            return np.full(len(cases), np.nan)
        return rates[name].to_numpy(dtype=float)

    def add_share(metric: LiftMetric | TriggerMetric, num: np.ndarray, den: np.ndarray) -> None:
        interval, used = resampler.share(num, den, confidence)
        rows.append(_metric_row(metric, interval, used))

    values = {role: col(role) for role in roles}
    trials = group.pivot_table(
        index="case_id", columns="condition", values="passed", aggfunc="count", observed=True
    )
    for condition in present:
        v = rates[condition].to_numpy(dtype=float)
        mask = ~np.isnan(v)
        interval = cluster_wilson(
            v[mask], int(trials[condition].sum()), confidence, small_sample=True
        )
        success.append(
            {
                "condition": condition,
                "n_cases": int(mask.sum()),
                "estimate": interval.estimate,
                "ci_low": interval.ci_low,
                "ci_high": interval.ci_high,
                "confidence": confidence,
                "method": interval.method,
            }
        )
    for case_id, row in rates.iterrows():
        lacking = [c for c in present if np.isnan(row[c])]
        if lacking:
            missing.append({"case_id": case_id, "missing": ",".join(lacking)})

    bits = _trial_bits(group)
    for metric, (hi, lo) in LIFT_CONTRASTS.items():
        delta = values[hi] - values[lo]
        mask = ~np.isnan(delta)
        # compare's seed, not the group's: the same differences print compare's interval
        ties = _contrast_ties(bits, cases[mask], roles.get(hi), roles.get(lo))
        interval = resampler.delta(np.nan_to_num(delta), mask, confidence, METHOD, seed=delta_seed,
                                   ties=ties)
        rows.append(_metric_row(metric, interval, int(mask.sum())))

    a, b, c = values["A"], values["B"], values["C"]
    with_skill = np.fmin(b, c)  # fail under B *or* C -> the worse of the two
    best_skill = np.fmax(b, c)  # pass under B *or* C -> the better of the two
    have = ~np.isnan(a) & ~(np.isnan(b) & np.isnan(c))
    a_pass = (a >= 0.5) & have
    a_fail = (a < 0.5) & have
    regressed = a_pass & (np.nan_to_num(with_skill, nan=1.0) < 0.5)
    unlocked = a_fail & (np.nan_to_num(best_skill, nan=0.0) >= 0.5)
    add_share("regression_rate", regressed.astype(float), a_pass.astype(float))
    add_share("unlock_rate", unlocked.astype(float), a_fail.astype(float))

    mask = ~np.isnan(a) & ~np.isnan(b) & ~np.isnan(c)
    num_b = np.where(mask, b - a, 0.0)
    num_c = np.where(mask, c - a, 0.0)
    den = mask.astype(float)
    used = int(mask.sum())
    if used:
        estimate = float(num_b.sum() / used) / max(EPSILON, float(num_c.sum() / used))
        boot = resampler.replicates(num_b, den) / np.maximum(
            EPSILON, resampler.replicates(num_c, den)
        )
        boot = boot[np.isfinite(boot)]
        interval = _efficiency_bounds(
            percentile_interval(boot, estimate, used, confidence, METHOD), rows
        )
        rows.append(_metric_row("routing_efficiency", interval, used))
    else:
        nan = float("nan")
        empty = Interval(nan, nan, nan, confidence, METHOD)
        rows.append(_metric_row("routing_efficiency", empty, 0))

    rows += _trigger_metrics(group, roles, cases, resampler, confidence)
    return rows, success, missing


def _efficiency_bounds(interval: Interval, rows: list[dict[str, Any]]) -> Interval:
    """Keep a zero-width routing efficiency interval from claiming certainty.

    Where every case moved alike, each replicate of realized / oracle lift is the same
    number. The ratio of the two lifts' own bounds then brackets it when the oracle lift is
    surely positive; otherwise the ratio is unbounded and the bounds are NaN (not known).
    """
    if not (interval.ci_high - interval.ci_low <= 1e-12):
        return interval
    lifts = {row["metric"]: row for row in rows}
    realized, oracle = lifts.get("realized_lift"), lifts.get("oracle_lift")
    if realized is None or oracle is None or not float(oracle["ci_low"]) > 0:
        return interval._replace(ci_low=float("nan"), ci_high=float("nan"))
    low = float(realized["ci_low"]) / float(oracle["ci_high"])
    high = float(realized["ci_high"]) / float(oracle["ci_low"])
    return interval._replace(
        ci_low=min(low, interval.estimate), ci_high=max(high, interval.estimate)
    )


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def _at_least_bounds(interval: Interval, precision: Interval, recall: Interval) -> Interval:
    """Widen the F1 bootstrap interval to the F1 of the precision and recall bounds.

    F1 grows with precision and with recall, so F1(lower bounds) and F1(upper bounds) bracket
    it whenever both Wilson intervals do; with few cases the bootstrap of F1 collapses (every
    replicate of two cases can give the same F1) where these bounds do not.
    """
    bounds = (precision.ci_low, recall.ci_low, precision.ci_high, recall.ci_high)
    if not all(np.isfinite(b) for b in bounds) or not np.isfinite(interval.estimate):
        return interval
    low = _f1(precision.ci_low, recall.ci_low)
    high = _f1(precision.ci_high, recall.ci_high)
    if np.isfinite(interval.ci_low):
        low, high = min(low, interval.ci_low), max(high, interval.ci_high)
    return interval._replace(
        ci_low=min(low, interval.estimate), ci_high=max(high, interval.estimate)
    )


def _trigger_metrics(
    group: pd.DataFrame,
    roles: Mapping[str, str],
    cases: np.ndarray,
    resampler: CaseResampler,
    confidence: float,
) -> list[dict[str, Any]]:
    if not {"expected_skill", "inferred_skill"} <= set(group.columns):
        return []
    items = group[group["condition"] == roles["B"]]
    if items.empty or not records_loading(items):
        return []
    expected = items["expected_skill"].fillna("none").astype(str)
    inferred = items["inferred_skill"].fillna("none").astype(str)
    should = expected != "none"
    fired = inferred != "none"
    frame = pd.DataFrame(
        {
            "case_id": items["case_id"].to_numpy(),
            "tp": (should & fired & (inferred == expected)).to_numpy(float),
            "fp": (fired & (~should | (inferred != expected))).to_numpy(float),
            "fn": (should & (inferred != expected)).to_numpy(float),
            "should": should.to_numpy(float),
            "under": (should & ~fired).to_numpy(float),
            "should_not": (~should).to_numpy(float),
            "over": (~should & fired).to_numpy(float),
        }
    )
    per_case = frame.groupby("case_id").sum().reindex(cases, fill_value=0.0)
    get = {name: per_case[name].to_numpy(float) for name in per_case.columns}
    out = []

    precision, n_p = resampler.share(get["tp"], get["tp"] + get["fp"], confidence)
    recall, n_r = resampler.share(get["tp"], get["tp"] + get["fn"], confidence)
    out.append(_metric_row("trigger_precision", precision, n_p))
    out.append(_metric_row("trigger_recall", recall, n_r))
    p_boot = resampler.replicates(get["tp"], get["tp"] + get["fp"])
    r_boot = resampler.replicates(get["tp"], get["tp"] + get["fn"])
    with np.errstate(invalid="ignore", divide="ignore"):
        f1_boot = 2 * p_boot * r_boot / (p_boot + r_boot)
    p, r = precision.estimate, recall.estimate
    f1 = 2 * p * r / (p + r) if p + r > 0 else float("nan")
    f1_boot = f1_boot[np.isfinite(f1_boot)]
    used = int(np.count_nonzero(get["should"] + get["fp"]))
    f1_interval = _at_least_bounds(
        percentile_interval(f1_boot, f1, used, confidence, METHOD), precision, recall
    )
    out.append(_metric_row("trigger_f1", f1_interval, used))
    over, n_o = resampler.share(get["over"], get["should_not"], confidence)
    under, n_u = resampler.share(get["under"], get["should"], confidence)
    out.append(_metric_row("over_trigger_rate", over, n_o))
    out.append(_metric_row("under_trigger_rate", under, n_u))
    return out


def parse_roles(text: str | Mapping[str, str] | None) -> dict[str, str]:
    """Read a role assignment such as ``"none=A,self-load=B,preloaded=C,stale=D"``.

    Each comma-separated item names a condition and the role it plays (``CONDITION=ROLE``);
    ``ROLE=CONDITION`` is accepted too. Roles are A (baseline), B (self-load), C (oracle) and
    D (stale); roles left out keep their default condition. A mapping is taken as
    ``{role: condition}`` and checked the same way.

    Args:
        text: The assignment (e.g. the value of ``--roles``), a mapping, or None/empty.

    Returns:
        ``{role: condition}`` for the roles given (empty when nothing was given).

    Raises:
        InputError: An item is not ``NAME=ROLE``, a role is unknown or given twice.

    Examples:
        >>> parse_roles("baseline=A,with-skill=B")
        {'A': 'baseline', 'B': 'with-skill'}
        >>> parse_roles("C=oracle")
        {'C': 'oracle'}
    """
    if text is None or (isinstance(text, str) and not text.strip()):
        return {}
    if not isinstance(text, str):
        pairs = [(str(role), str(condition)) for role, condition in text.items()]
    else:
        pairs = []
        for item in (part.strip() for part in text.split(",") if part.strip()):
            left, sep, right = (x.strip() for x in item.partition("="))
            if not sep or not left or not right:
                raise InputError(
                    f"roles: '{item}' is not CONDITION=ROLE; write e.g. "
                    "--roles none=A,self-load=B,preloaded=C,stale=D"
                )
            pairs.append((right, left) if right in DEFAULT_ROLES else (left, right))
    out: dict[str, str] = {}
    for role, condition in pairs:
        if role not in DEFAULT_ROLES:
            raise InputError(
                f"roles: '{role}' is not a role; the roles are A (baseline), B (self-load), "
                f"C (oracle) and D (stale), e.g. --roles {condition}=A"
            )
        if role in out:
            raise InputError(f"roles: role {role} is given twice ('{out[role]}', '{condition}')")
        out[role] = condition
    return out


def _error_note(condition: str, record: FailureRecord) -> str:
    """Why a condition's metrics are null.

    Examples:
        >>> record = FailureRecord(scope="condition", groups=["none"], items=4,
        ...                        error_class="auth", count=4, message="HTTP 401")
        >>> _error_note("none", record)
        "condition 'none' has only errors (4 items; auth x4: HTTP 401)"
    """
    return (
        f"condition '{condition}' has only errors ({record.items} items; "
        f"{record.error_class} x{record.count}: {record.message})"
    )


def _null_errored(
    rows: list[dict[str, Any]],
    success: list[dict[str, Any]],
    errored: Mapping[str, FailureRecord],
    roles: Mapping[str, str],
) -> None:
    """Null the metrics and success rates that involve a condition with only errors."""
    notes = {c: _error_note(c, r) for c, r in errored.items()}
    for row in rows:
        involved = [roles[r] for r in sorted(_ROLES_OF.get(row["metric"], ())) if r in roles]
        said = [notes[c] for c in dict.fromkeys(involved) if c in notes]
        row["note"] = "; ".join(said)
        if said:
            row.update(estimate=np.nan, ci_low=np.nan, ci_high=np.nan, n_cases=0)
    for row in success:
        row["note"] = notes.get(row["condition"], "")
        if row["note"]:
            row.update(estimate=np.nan, ci_low=np.nan, ci_high=np.nan)


def _failure_causes(
    rows: pd.DataFrame,
    data: pd.DataFrame | str | os.PathLike[str],
    runs_dir: str | os.PathLike[str],
) -> pd.DataFrame:
    """Failing items by primary cause per provider and condition (``LiftResult``)."""
    causes = failure_causes(rows.assign(provider=rows.get("provider", "")),
                            run_scores(data, runs_dir), by=["provider", "condition"])
    return causes.reindex(columns=list(FAILURE_CAUSE_COLUMNS))


def lift(
    data: pd.DataFrame | str | os.PathLike[str],
    *,
    roles: Mapping[str, str] | str | None = None,
    n_resamples: int = N_RESAMPLES.default,
    confidence: float = CONFIDENCE.default,
    seed: int | None = SEED.default,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    providers: str | Sequence[str] | None = None,
) -> LiftResult:
    """Skill-lift metrics per provider and lane, each with a case-bootstrap CI.

    Args:
        data: A run directory or run id, or a tidy DataFrame with at least ``case_id,
            condition, passed`` (``trial``, ``provider``, ``lane``, ``expected_skill`` and
            ``inferred_skill`` are used when present).
        roles: Which condition plays A (baseline), B (self-load), C (oracle) and D (stale);
            default ``none``, ``self-load``, ``preloaded``, ``stale``. A mapping
            ``{role: condition}`` or text such as ``"none=A,self-load=B"``
            (:func:`parse_roles`).
        n_resamples: Bootstrap replicates.
        confidence: Confidence level.
        seed: Bootstrap seed (same seed, same intervals).
        runs_dir: Where run ids are looked up.
        providers: Keep only these providers (``"P,Q"`` or a sequence; default all). With
            several, ``pooled`` has the metrics over all of them, each case once.

    Returns:
        A :class:`LiftResult`; ``.metrics`` has columns ``provider, lane, metric, estimate,
        ci_low, ci_high, n_cases, confidence, method``.

    Raises:
        InputError: Missing columns or none of the role conditions present.

    Examples:
        >>> df = pd.DataFrame({
        ...     "case_id": ["a", "b", "c", "d"] * 2,
        ...     "condition": ["none"] * 4 + ["preloaded"] * 4,
        ...     "passed": [True, False, False, False, True, True, True, False],
        ... })
        >>> result = lift(df, n_resamples=1000)
        >>> result.metric("oracle_lift")
        0.5
    """
    roles = {**DEFAULT_ROLES, **parse_roles(roles)}
    selected = select_providers(load_results(data, runs_dir), providers, "data")
    frame = as_frame(selected, what="data")
    if not set(roles.values()) & set(frame["condition"]):
        raise InputError(
            f"none of the conditions {sorted(roles.values())} is in the data "
            f"(found: {sorted(frame['condition'].unique())}); map yours with roles= "
            "(CLI: --roles CONDITION=A,CONDITION=B,...)"
        )
    run_id = ""
    if "run_id" in frame.columns and frame["run_id"].notna().any():
        run_id = str(frame["run_id"].dropna().iloc[0])
    for column, default in (("provider", "unknown"), ("lane", "prompt")):
        if column not in frame.columns:
            frame[column] = default
        frame[column] = frame[column].fillna(default).astype(str)
    metrics, success, missing, notes = [], [], [], []
    for index, ((provider, lane), group) in enumerate(
        frame.groupby(["provider", "lane"], sort=True)
    ):
        group_seed = None if seed is None else seed + index
        rows, succ, miss = _group_metrics(
            group, roles, group_seed, n_resamples, confidence, delta_seed=seed
        )
        errored = {c: r for c, r in errored_conditions(group).items() if c in roles.values()}
        _null_errored(rows, succ, errored, roles)
        keys = {"provider": provider, "lane": lane}
        metrics += [keys | r for r in rows]
        success += [keys | s for s in succ]
        missing += [keys | m for m in miss]
        notes += [
            keys | {
                "condition": condition,
                "roles": ",".join(r for r, c in sorted(roles.items()) if c == condition),
                "items": record.items,
                "error_class": record.error_class,
                "count": record.count,
                "message": record.message,
                "note": _error_note(condition, record),
            }
            for condition, record in errored.items()
        ]
    pooled, scopes = [], []
    for index, (lane, group) in enumerate(frame.groupby("lane", sort=True)):
        if group["provider"].nunique() < 2:
            continue
        cells, scope = pool_cells(group, roles, str(lane))
        scopes.append(scope)
        if cells["provider"].nunique() < 2:
            continue  # one provider left: its own metrics are the pool
        group_seed = None if seed is None else seed + 10_000 + index
        rows, _, _ = _group_metrics(
            cells, roles, group_seed, n_resamples, confidence, delta_seed=seed,
            providers_alike=True,
        )
        pooled += [{"provider": POOLED, "lane": lane} | r for r in rows]
    evidence = pd.DataFrame(columns=list(EVIDENCE_COLUMNS))
    if "evidence" in set(frame["lane"]):
        evidence = evidence_metrics(
            with_lane_metrics(data, runs_dir),
            roles,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
    causes = _failure_causes(selected, data, runs_dir)
    return LiftResult(
        run_id=run_id,
        pooled=pd.DataFrame(pooled, columns=[*LIFT_COLUMNS, "note"]),
        evidence=evidence,
        metrics=pd.DataFrame(metrics, columns=[*LIFT_COLUMNS, "note"]),
        success=pd.DataFrame(
            success,
            columns=[
                "provider",
                "lane",
                "condition",
                "n_cases",
                "estimate",
                "ci_low",
                "ci_high",
                "confidence",
                "method",
                "note",
            ],
        ),
        missing=pd.DataFrame(missing, columns=["provider", "lane", "case_id", "missing"]),
        roles=roles,
        notes=pd.DataFrame(notes, columns=NOTE_COLUMNS),
        failure_causes=causes,
        pooled_scope=tuple(scopes),
        trigger_note=trigger_absence(frame, roles),
        failure_changes=lift_cause_changes(causes, roles["A"]),
    )
