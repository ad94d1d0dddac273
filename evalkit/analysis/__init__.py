"""Analysis of runs: lift metrics, flips, power planning, the CI gate, and imports."""

from evalkit.analysis._flips import flips
from evalkit.analysis._gate import BudgetCheck, GatePolicy, GateResult, gate, load_policy
from evalkit.analysis._lift import DEFAULT_ROLES, LIFT_METRICS, TRIGGER_METRICS, LiftResult, lift
from evalkit.analysis._power import power

__all__ = [
    "DEFAULT_ROLES",
    "LIFT_METRICS",
    "TRIGGER_METRICS",
    "BudgetCheck",
    "GatePolicy",
    "GateResult",
    "LiftResult",
    "flips",
    "gate",
    "lift",
    "load_policy",
    "power",
]
