"""The runner: execute a suite's matrix with joblib, all-settled, streaming results to disk."""

__all__ = [
    "DescriptionOverride",
    "RunConfig",
    "RunResult",
    "SkillOverride",
    "run",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.errors import (
        EXIT_NO_SPACE as EXIT_NO_SPACE,
        RunInterrupted as RunInterrupted,
        RunOutOfSpace as RunOutOfSpace,
        RunStopped as RunStopped,
    )
    from evalkit.runner._config import (
        Backend as Backend,
        DescriptionOverride,
        RunConfig,
        SkillOverride,
    )
    from evalkit.runner._execute import (
        ItemOutcome as ItemOutcome,
        ItemTask as ItemTask,
        execute_item as execute_item,
    )
    from evalkit.runner._run import RunResult, run
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
