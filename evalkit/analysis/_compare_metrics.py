"""The metrics of the compare report: one plugin kind, computed by ``evalkit.compare``.

A :class:`CompareMetric` is a name, a label, a description and a ``compute(sides)`` that
returns one value from the two compared sides (:class:`CompareSides`: each side's compared
rows and the comparison). ``evalkit.compare`` computes every metric of the kind
``compare_metric`` (:func:`compare_report_metrics`) into the comparison's ``report_metrics``, which
``evalkit compare --json`` carries under ``"report_metrics"`` and the compare report shows in
its "Further metrics" table (the report's cell calls :func:`compare_report_metrics` on the
sides it shows); so a new metric is one entry here (a built-in) or one
``evalkit.register("compare_metric", NAME, metric)`` / ``compare_metric.NAME`` entry point
(docs/architecture.md, "Adding a metric to the compare report").
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evalkit._registry import Registry, import_attribute, not_an_instance
from evalkit.stats import PairedComparison


@dataclass(frozen=True)
class CompareSides:
    """What a compare-report metric is computed from.

    Attributes:
        baseline: The baseline's compared rows (result columns; two conditions of one run:
            the baseline condition's rows).
        candidate: The candidate's compared rows, likewise.
        comparison: The comparison itself (verdict, interval, per-case table).
    """

    baseline: pd.DataFrame
    candidate: pd.DataFrame
    comparison: PairedComparison


#: A metric's value: a number, a word, or None when the sides cannot say.
MetricValue = float | int | str | None


@dataclass(frozen=True)
class CompareMetric:
    """One metric of the compare report.

    Attributes:
        name: Its key in ``report_metrics`` (an identifier).
        label: What the report's table calls it.
        compute: ``compute(sides) -> value`` (:class:`CompareSides` in; a number, a word or
            None out), or ``"package.module:function"`` imported on first use.
        description: One line saying what it is, shown beside it.
    """

    name: str
    label: str
    compute: Callable[[CompareSides], MetricValue] | str
    description: str = ""

    def value(self, sides: CompareSides) -> MetricValue:
        """The metric computed on ``sides`` (NaN becomes None)."""
        compute = self.compute
        if isinstance(compute, str):
            compute = import_attribute(compute, f"compare metric {self.name}")
        found = compute(sides)
        if isinstance(found, float) and not math.isfinite(found):
            return None
        return found


def cost_per_item_change(sides: CompareSides) -> float | None:
    """Mean agent cost per item, candidate minus baseline (None without costs on a side)."""
    means = [
        float(pd.to_numeric(rows["cost_usd"], errors="coerce").mean())
        if "cost_usd" in rows else math.nan
        for rows in (sides.baseline, sides.candidate)
    ]
    change = means[1] - means[0]
    return change if math.isfinite(change) else None


def _a_compare_metric(found: Any, spec: str, name: str) -> CompareMetric:
    """A :class:`CompareMetric`, named as it is registered."""
    if not isinstance(found, CompareMetric):
        raise not_an_instance(
            found, spec, f"compare metric {name}", "an evalkit.analysis.CompareMetric"
        )
    return found if found.name == name else dataclasses.replace(found, name=name)


#: The built-in metrics, in the order the report lists them.
BUILTIN_COMPARE_METRICS: Mapping[str, CompareMetric] = {
    "cost_per_item_change": CompareMetric(
        "cost_per_item_change", "cost per item (USD), change",
        "evalkit.analysis._compare_metrics:cost_per_item_change",
        "mean agent cost per item of the candidate minus the baseline's",
    ),
}

#: Every compare-report metric by name (registered, built-in, installed).
COMPARE_METRICS: Registry[CompareMetric] = Registry(
    kind="compare_metric",
    option="compare metric",
    field="compare_metric",
    builtins=BUILTIN_COMPARE_METRICS,
    validate=_a_compare_metric,
    bases=(CompareMetric,),
)


def compare_report_metrics(
    comparison: PairedComparison, baseline: pd.DataFrame, candidate: pd.DataFrame
) -> tuple[dict[str, Any], ...]:
    """Every compare-report metric on the two sides, in :meth:`Registry.names` order.

    Args:
        comparison: The comparison.
        baseline: The baseline's compared rows.
        candidate: The candidate's compared rows.

    Returns:
        One ``{"name", "label", "value", "description"}`` per metric.
    """
    sides = CompareSides(baseline, candidate, comparison)
    found = []
    for name in COMPARE_METRICS.names():
        metric = COMPARE_METRICS.get(name)
        found.append({"name": metric.name, "label": metric.label,
                      "value": metric.value(sides), "description": metric.description})
    return tuple(found)
