"""The trajectory of a sequential comparison: every look, what it spent, and the fixed design.

A sequential comparison (``evalkit run --until-verdict``, ``evalkit compare --sequential``)
looks after every round of cases with an anytime-valid confidence sequence (see
``docs/statistics.md``). :class:`SequentialTrajectory` holds its looks with the items and the
agent cost spent at each, and the fixed design it is weighed against:

- the **fixed design** runs every case of the comparison once, in full: for a run of
  ``--until-verdict`` every case of its drawing order (the suite's cases after the run's
  filters), otherwise every case compared. Its items are those cases times the items a case
  takes (both conditions x trials x providers, as observed: items / cases drawn at the last
  look); its cost is those items at the cost per item observed (agent cost spent / items at
  the last look; outcomes copied from the cache cost nothing, so a run that reused outcomes
  shows a lower rate);
- the **planned fixed design**, when the bets were tuned for a number of cases
  (``--plan-cases``, the fixed n of ``evalkit power``): that many cases, counted the same way.

Nothing here computes a statistic: estimates, bounds and verdicts are those of the looks.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalkit._settings import ROUND_CASES, RUNS_DIR
from evalkit.analysis import agent_cost, sequential_compare as sequential_compare_runs
from evalkit.report._tables import Fragment, interval, interval_table, pp, usd
from evalkit.results import SequentialRecord, load_manifest
from evalkit.sequential import SequentialRun
from evalkit.stats import CompareOptions, SequentialComparison

if TYPE_CHECKING:
    from evalkit.report._views import ComparisonView

#: Columns of :attr:`SequentialTrajectory.looks`.
LOOK_COLUMNS = (
    "round",
    "n_cases",
    "items",
    "cost_usd",
    "estimate",
    "ci_low",
    "ci_high",
    "verdict",
    "reason",
)


@dataclass(frozen=True)
class SequentialTrajectory:
    """Every look of a sequential comparison, what it spent, and the fixed design.

    Attributes:
        looks: One row per look (:data:`LOOK_COLUMNS`): round, cases observed, items and agent
            cost spent so far (NaN when unknown), estimate, confidence-sequence bounds,
            verdict and ``reason`` (``improved``, ``regressed``, ``futile`` at the look that
            settled, else ``""``).
        baseline: How the baseline is named.
        candidate: How the candidate is named.
        threshold: Practical threshold of "improved" (the futility band is ``(-threshold,
            threshold)``).
        confidence: Level of the confidence sequence.
        method: The interval's method.
        fixed_cases: Cases of the fixed design (see the module docstring).
        items_per_case: Items a case takes (None when no item count is known).
        cost_per_item: Agent cost per item spent (None when no cost is known).
        plan_cases: Cases the bets were tuned for (None: untuned).
        stop_reason: Why the run stopped (a verdict, ``futile`` or a budget; None while it
            goes on or for a comparison that did not settle).
    """

    looks: pd.DataFrame
    baseline: str
    candidate: str
    threshold: float
    confidence: float
    method: str
    fixed_cases: int
    items_per_case: float | None = None
    cost_per_item: float | None = None
    plan_cases: int | None = None
    stop_reason: str | None = None

    @property
    def stop(self) -> int | None:
        """Position (0-based) of the look that settled the comparison, None if none did."""
        settled = np.flatnonzero(self.looks["reason"].astype(str).to_numpy() != "")
        return int(settled[0]) if len(settled) else None

    @property
    def fixed_items(self) -> float | None:
        """Items of the fixed design: its cases times the items a case takes."""
        return _times(self.fixed_cases, self.items_per_case)

    @property
    def fixed_cost_usd(self) -> float | None:
        """Agent cost of the fixed design at the cost per item observed."""
        return _times(self.fixed_items, self.cost_per_item)

    @property
    def planned_items(self) -> float | None:
        """Items of the planned fixed design (``plan_cases``), None without a plan."""
        return _times(self.plan_cases, self.items_per_case)

    @property
    def planned_cost_usd(self) -> float | None:
        """Agent cost of the planned fixed design at the cost per item observed."""
        return _times(self.planned_items, self.cost_per_item)


def _times(count: float | None, factor: float | None) -> float | None:
    return None if count is None or factor is None else float(count) * factor


def _ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator`` when both are finite and the denominator positive."""
    if not (math.isfinite(numerator) and math.isfinite(denominator)) or denominator <= 0:
        return None
    return numerator / denominator


def sequential_trajectory(
    source: SequentialRecord | SequentialRun | SequentialComparison,
    rows: pd.DataFrame | None = None,
    *,
    labels: tuple[str, str] | None = None,
    plan_cases: int | None = None,
) -> SequentialTrajectory:
    """The trajectory of a sequential run or comparison.

    Args:
        source: A run's ``sequential`` record (its manifest's, with the items and cost it
            spent at each look), a :class:`~evalkit.sequential.SequentialRun`, or a
            :class:`~evalkit.stats.SequentialComparison` (looks without spending; give its
            ``rows`` to count the items and cost of the cases observed at each look).
        rows: Result rows of both compared arms (comparisons only).
        labels: ``(baseline, candidate)`` names (default: the record's conditions, or the
            comparison's labels).
        plan_cases: Cases the bets were tuned for (comparisons only; a record carries its
            own).

    Returns:
        The :class:`SequentialTrajectory`.
    """
    if isinstance(source, SequentialRun):
        return _from_record(source.record, labels)
    if isinstance(source, SequentialRecord):
        return _from_record(source, labels)
    return _from_comparison(source, rows, labels, plan_cases)


def _from_record(
    record: SequentialRecord, labels: tuple[str, str] | None
) -> SequentialTrajectory:
    looks = pd.DataFrame(
        [look.model_dump() for look in record.looks], columns=list(LOOK_COLUMNS)
    ).astype({"items": float, "cost_usd": float, "estimate": float, "ci_low": float,
              "ci_high": float})
    items_per_case = cost_per_item = None
    if len(looks):
        last = looks.iloc[-1]
        drawn = min(int(last["round"]) * record.round_cases, len(record.order))
        items_per_case = _ratio(float(last["items"]), float(drawn))
        cost_per_item = _ratio(float(last["cost_usd"]), float(last["items"]))
    baseline, candidate = labels or (record.baseline, record.candidate)
    return SequentialTrajectory(
        looks=looks,
        baseline=baseline,
        candidate=candidate,
        threshold=record.threshold,
        confidence=record.confidence,
        method=record.method,
        fixed_cases=len(record.order),
        items_per_case=items_per_case,
        cost_per_item=cost_per_item,
        plan_cases=record.plan_cases,
        stop_reason=record.stop_reason,
    )


def _from_comparison(
    result: SequentialComparison,
    rows: pd.DataFrame | None,
    labels: tuple[str, str] | None,
    plan_cases: int | None,
) -> SequentialTrajectory:
    compared = set(result.cases["case_id"].astype(str)) if len(result.cases) else set()
    observed = [case for case in result.order if case in compared]
    records: list[dict[str, Any]] = []
    for position, look in enumerate(result.looks, start=1):
        items = cost = float("nan")
        if rows is not None:
            spent = rows[rows["case_id"].astype(str).isin(observed[: look.n_cases])]
            items = float(len(spent))
            cost_spent = agent_cost(spent)
            cost = float("nan") if cost_spent is None else cost_spent
        records.append(
            {"round": position, "items": items, "cost_usd": cost}
            | {key: value for key, value in look.to_dict().items() if key != "settled"}
        )
    looks = pd.DataFrame(records, columns=list(LOOK_COLUMNS)).astype(
        {"items": float, "cost_usd": float}
    )
    items_per_case = cost_per_item = None
    if len(looks):
        last = looks.iloc[-1]
        items_per_case = _ratio(float(last["items"]), float(last["n_cases"]))
        cost_per_item = _ratio(float(last["cost_usd"]), float(last["items"]))
    baseline, candidate = labels or (result.baseline_label, result.candidate_label)
    return SequentialTrajectory(
        looks=looks,
        baseline=baseline,
        candidate=candidate,
        threshold=result.threshold,
        confidence=result.delta.confidence,
        method=result.method,
        fixed_cases=len(result.order),
        items_per_case=items_per_case,
        cost_per_item=cost_per_item,
        plan_cases=plan_cases,
        stop_reason=(result.looks[-1].reason or None) if result.looks else None,
    )


def comparison_trajectory(
    view: ComparisonView,
    *,
    sequential: bool = False,
    conditions: str = "",
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    round_cases: int = ROUND_CASES.default,
    plan_cases: int | None = None,
) -> SequentialTrajectory | None:
    """The trajectory a compare report shows, or None when it shows none.

    Two conditions of a run of ``evalkit run --until-verdict`` (the conditions of its
    ``sequential`` record, metric ``passed``) give the looks the run took, as its manifest
    records them. Otherwise, with ``sequential``, the comparison is looked at as
    ``evalkit compare --sequential`` looks at it (:func:`evalkit.analysis.sequential_compare`,
    with the options the view's comparison was decided with) and each look's items and cost
    are counted from the compared rows.

    Args:
        view: The comparison of the report (:func:`~evalkit.report.compare_view`).
        sequential: Look sequentially at a comparison that is not a sequential run's.
        conditions: The report's ``conditions`` filter between two runs (``"A,B"``).
        runs_dir: Where run ids are looked up.
        round_cases: Cases per look.
        plan_cases: The planned number of cases (None: every case of the comparison).

    Returns:
        The :class:`SequentialTrajectory`, or None (not a sequential run, not asked for).
    """
    settings = view.comparison.options or CompareOptions()
    labels = (view.baseline_label, view.candidate_label)
    if view.mode == "conditions" and settings.metric == "passed":
        manifest = load_manifest(view.candidate_run)
        record = manifest.sequential if manifest is not None else None
        if record is not None and view.conditions == (record.baseline, record.candidate):
            return sequential_trajectory(record, labels=labels)
    if not sequential:
        return None
    if view.mode == "conditions":
        result = sequential_compare_runs(
            view.candidate_run, conditions=view.conditions, runs_dir=runs_dir,
            options=settings, round_cases=round_cases, plan_cases=plan_cases,
        )
    else:
        wanted = [c.strip() for c in conditions.split(",") if c.strip()]
        result = sequential_compare_runs(
            view.baseline_run,
            view.candidate_run,
            conditions=wanted or None,
            runs_dir=runs_dir,
            options=settings,
            round_cases=round_cases,
            plan_cases=plan_cases,
        )
    rows = pd.concat([view.baseline_rows, view.candidate_rows], ignore_index=True)
    return sequential_trajectory(result, rows, labels=labels, plan_cases=plan_cases)


def _count(value: Any) -> str:
    return "n/a" if value is None or not math.isfinite(float(value)) else f"{float(value):,.0f}"


def _share(part: Any, whole: float | None) -> str:
    ratio = None if whole is None or part is None else _ratio(float(part), whole)
    return "" if ratio is None else f" ({ratio:.0%} of the fixed design)"


def _spending(cases: int, items: Any, cost: Any) -> str:
    """``N cases, M items, $C``: what a run spent or a design would spend."""
    return f"{cases} cases, {_count(items)} items, {usd(cost)}"


def trajectory_facts(trajectory: SequentialTrajectory) -> dict[str, Any]:
    """Key facts of a trajectory for :func:`~evalkit.report.key_values`.

    Args:
        trajectory: The trajectory.

    Returns:
        ``{label: text}``: the sequential verdict and where it settled, what was spent, the
        fixed design (and the planned one), the interval's method and the threshold.
    """
    looks = trajectory.looks
    stop = trajectory.stop
    if looks.empty:
        verdict = "no look taken yet"
    elif stop is not None:
        look = looks.iloc[stop]
        verdict = (
            f"{look['reason']} at look {int(look['round'])} ({int(look['n_cases'])} cases): "
            + interval(look["estimate"], look["ci_low"], look["ci_high"], "pp")
        )
    else:
        reason = f" ({trajectory.stop_reason})" if trajectory.stop_reason else ""
        verdict = f"not settled after {int(looks['n_cases'].iloc[-1])} cases{reason}"
    last = looks.iloc[-1] if len(looks) else None
    spent = None
    if last is not None:
        spent = _spending(int(last["n_cases"]), last["items"], last["cost_usd"]) + _share(
            last["items"], trajectory.fixed_items
        )
    planned = None
    if trajectory.plan_cases is not None:
        planned = _spending(
            trajectory.plan_cases, trajectory.planned_items, trajectory.planned_cost_usd
        )
    return {
        "comparison": f"{trajectory.candidate} vs {trajectory.baseline}",
        "sequential verdict": verdict,
        "looks": len(looks),
        "spent": spent,
        "fixed design (every case once)": _spending(
            trajectory.fixed_cases, trajectory.fixed_items, trajectory.fixed_cost_usd
        ),
        "planned fixed design (--plan-cases)": planned,
        "interval": f"{trajectory.confidence:.0%} {trajectory.method}",
        "practical threshold": pp(trajectory.threshold),
    }


def looks_table(trajectory: SequentialTrajectory, *, table_id: str | None = "looks") -> Fragment:
    """Every look as a table: cases, items and cost spent, estimate with its sequence, verdict.

    Args:
        trajectory: The trajectory.
        table_id: ``id`` of the table.

    Returns:
        The escaped table.
    """
    looks = trajectory.looks.assign(confidence=trajectory.confidence)
    return interval_table(
        looks,
        ["round", "n_cases"],
        kind="pp",
        header="estimate and confidence sequence",
        extra=["items", "cost_usd", "verdict", "reason"],
        formats={"items": _count, "cost_usd": usd},
        caption="Every look",
        table_id=table_id,
        empty="No look taken yet.",
    )
