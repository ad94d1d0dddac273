"""Hill-climb a skill against a validation gate with a sealed test split."""

from evalkit.optimize._guard import SealError, TamperError
from evalkit.optimize._loop import OptimizeConfig, OptimizeResult, optimize
from evalkit.optimize._optimizers import (
    CallableOptimizer,
    CommandOptimizer,
    Optimizer,
    OptimizerContext,
    Proposal,
    ProviderOptimizer,
    load_optimizer,
)
from evalkit.optimize._splits import Splits, assign_splits

__all__ = [
    "CallableOptimizer",
    "CommandOptimizer",
    "OptimizeConfig",
    "OptimizeResult",
    "Optimizer",
    "OptimizerContext",
    "Proposal",
    "ProviderOptimizer",
    "SealError",
    "Splits",
    "TamperError",
    "assign_splits",
    "load_optimizer",
    "optimize",
]
