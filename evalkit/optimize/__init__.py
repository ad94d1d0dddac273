"""Hill-climb a skill against a validation gate with a sealed test split."""

__all__ = [
    "OptimizeConfig",
    "OptimizeResult",
    "OptimizeState",
    "Optimizer",
    "OptimizerContext",
    "Proposal",
    "optimize",
    "read_state",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.errors import SealError as SealError, TamperError as TamperError
    from evalkit.optimize._config import OptimizeConfig
    from evalkit.optimize._description import (
        DESCRIPTION_FILE as DESCRIPTION_FILE,
        MAX_DESCRIPTION_CHARS as MAX_DESCRIPTION_CHARS,
        validate_description as validate_description,
    )
    from evalkit.optimize._loop import OptimizeResult, optimize
    from evalkit.optimize._optimizer_registry import (
        OptimizerFactory as OptimizerFactory,
        load_optimizer as load_optimizer,
        optimizer_names as optimizer_names,
    )
    from evalkit.optimize._optimizers import (
        CallableOptimizer as CallableOptimizer,
        CommandOptimizer as CommandOptimizer,
        Optimizer,
        OptimizerContext,
        Proposal,
        ProviderOptimizer as ProviderOptimizer,
    )
    from evalkit.optimize._splits import (
        Splits as Splits,
        assign_splits as assign_splits,
    )
    from evalkit.optimize._state import (
        SEED_ID as SEED_ID,
        STATE_FILE as STATE_FILE,
        STATE_VERSION as STATE_VERSION,
        Decision as Decision,
        OptimizeState,
        OptimizeStatus as OptimizeStatus,
        OptimizeTarget as OptimizeTarget,
        TestResult as TestResult,
        TriggerRates as TriggerRates,
        has_state as has_state,
        read_state,
        write_state as write_state,
    )
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
