"""The command-line flag of each library parameter, for errors the library raises about them.

Library errors name a parameter (``round_cases must be at least 1``); where the command line
passes a flag's value to that parameter, its messages name the flag instead
(``--round-cases must be at least 1``), as a user of the command line knows it.
"""

from __future__ import annotations

#: Library parameter -> the flag that sets it.
FLAGS: dict[str, str] = {
    "adaptive_trials": "--adaptive-trials",
    "confidence": "--confidence",
    "futility_beta": "--futility-beta",
    "max_items": "--max-items",
    "max_rounds": "--max-rounds",
    "max_usd": "--max-usd",
    "plan_cases": "--plan-cases",
    "plan_effect": "--plan-effect",
    "round_cases": "--round-cases",
    "stage_two_probability": "--stage-two-probability",
    "threshold": "--threshold",
}
