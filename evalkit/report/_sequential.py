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
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit.analysis import agent_cost
from evalkit.report._tables import Fragment, interval, interval_table, pp, usd
from evalkit.results import SequentialRecord
from evalkit.sequential import SequentialRun
from evalkit.stats import SequentialComparison

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

    :meth:`facts` says what it settled and spent, :meth:`looks_table` lists every look, and
    :func:`~evalkit.report.sequential_plot` draws it (the compare report shows the three
    through :meth:`~evalkit.report.ComparisonView.sequential`).

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

    def facts(self) -> dict[str, Any]:
        """Key facts: what it compared, the sequential verdict, what it spent, the designs.

        Returns:
            ``{label: text}``: the sequential verdict and where it settled, what was spent, the
            fixed design (and the planned one), the interval's method and the threshold.
        """
        looks = self.looks
        stop = self.stop
        if looks.empty:
            verdict = "no look taken yet"
        elif stop is not None:
            look = looks.iloc[stop]
            verdict = (
                f"{look['reason']} at look {int(look['round'])} ({int(look['n_cases'])} cases): "
                + interval(look["estimate"], look["ci_low"], look["ci_high"], "pp")
            )
        else:
            reason = f" ({self.stop_reason})" if self.stop_reason else ""
            verdict = f"not settled after {int(looks['n_cases'].iloc[-1])} cases{reason}"
        last = looks.iloc[-1] if len(looks) else None
        spent = None
        if last is not None:
            spent = _spending(int(last["n_cases"]), last["items"], last["cost_usd"]) + _share(
                last["items"], self.fixed_items
            )
        planned = None
        if self.plan_cases is not None:
            planned = _spending(
                self.plan_cases, self.planned_items, self.planned_cost_usd
            )
        return {
            "comparison": f"{self.candidate} vs {self.baseline}",
            "sequential verdict": verdict,
            "looks": len(looks),
            "spent": spent,
            "fixed design (every case once)": _spending(
                self.fixed_cases, self.fixed_items, self.fixed_cost_usd
            ),
            "planned fixed design (--plan-cases)": planned,
            "interval": f"{self.confidence:.0%} {self.method}",
            "practical threshold": pp(self.threshold),
        }

    def looks_table(self, *, table_id: str | None = "looks") -> Fragment:
        """Every look as a table: cases, items and cost spent, estimate with its sequence, verdict.

        Args:
            table_id: ``id`` of the table.

        Returns:
            The escaped table.
        """
        looks = self.looks.assign(confidence=self.confidence)
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


def _count(value: Any) -> str:
    return "n/a" if value is None or not math.isfinite(float(value)) else f"{float(value):,.0f}"


def _share(part: Any, whole: float | None) -> str:
    ratio = None if whole is None or part is None else _ratio(float(part), whole)
    return "" if ratio is None else f" ({ratio:.0%} of the fixed design)"


def _spending(cases: int, items: Any, cost: Any) -> str:
    """``N cases, M items, $C``: what a run spent or a design would spend."""
    return f"{cases} cases, {_count(items)} items, {usd(cost)}"
