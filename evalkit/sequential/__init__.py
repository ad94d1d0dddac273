"""Sequential runs: run an edit against its baseline in rounds until the verdict is settled.

:func:`run_until_verdict` (``evalkit run --until-verdict``) runs the two conditions over
rounds of cases drawn in a seeded order, looks after each round with the anytime-valid
comparison of :mod:`evalkit.stats`, and stops at the first settled look or when a budget of
:class:`SequentialConfig` is spent; :func:`plan_run` (``evalkit run --plan``) says beforehand
what a run would cost and whether it can reach a verdict at all; :func:`confirm`
(``evalkit confirm``) reruns the cases a comparison's screen flagged, each side with the skill
texts its run kept, and gives them confirmatory verdicts on the new trials alone. Reading a
finished sequential run back is an analysis (:func:`evalkit.analysis.sequential_compare`).
"""

__all__ = [
    "ConfirmConfig",
    "ConfirmResult",
    "confirm",
    "RunPlan",
    "SequentialConfig",
    "SequentialRun",
    "plan_run",
    "run_until_verdict",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.sequential._config import SequentialConfig
    from evalkit.sequential._confirm import ConfirmConfig, ConfirmResult, confirm
    from evalkit.sequential._loop import run_until_verdict
    from evalkit.sequential._plan import PLAN_POWER as PLAN_POWER, RunPlan, plan_run
    from evalkit.sequential._result import SequentialRun
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
