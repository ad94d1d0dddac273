"""Analysis of runs: lift metrics, flips, power planning, the CI gate, and imports."""

from evalkit.analysis._flips import flips
from evalkit.analysis._gate import BudgetCheck, GatePolicy, GateResult, gate, load_policy
from evalkit.analysis._import import IMPORT_FORMATS, ImportResult, import_results
from evalkit.analysis._lift import (
    DEFAULT_ROLES,
    LIFT_METRICS,
    TRIGGER_METRICS,
    LiftResult,
    lift,
    parse_roles,
)
from evalkit.analysis._power import power

__all__ = [
    "DEFAULT_ROLES",
    "IMPORT_FORMATS",
    "LIFT_METRICS",
    "TRIGGER_METRICS",
    "BudgetCheck",
    "GatePolicy",
    "GateResult",
    "ImportResult",
    "LiftResult",
    "flips",
    "gate",
    "import_results",
    "lift",
    "load_policy",
    "parse_roles",
    "power",
]
