"""Ablations: which component of a skill does the work, which is dead weight, which hurts.

``ablate(suite, AblationConfig(skill=...))`` removes each component of a skill (its trigger
description, each top-level section of ``SKILL.md``, each ``references/``, ``scripts/`` or
``assets/`` file) from a real copy, runs every copy as a condition beside the full skill and
``none``, and gives each component a verdict paired by case against the full skill
(*necessary*, *harmful* or *no detectable effect* with its minimum detectable effect), with
family-wise error held at ``alpha`` across the components, and its cost in tokens.
"""

__all__ = [
    "SkillComponent",
    "skill_components",
    "AblationConfig",
    "AblationResult",
    "ablate",
    "component_verdicts",
    "read_ablation",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.ablation._components import (
        CHARS_PER_TOKEN as CHARS_PER_TOKEN,
        AblatedCopy as AblatedCopy,
        SkillComponent,
        estimate_tokens as estimate_tokens,
        pick_components as pick_components,
        skill_components,
        write_ablated_copy as write_ablated_copy,
    )
    from evalkit.ablation._config import AblationConfig
    from evalkit.ablation._result import (
        ABLATION_FILE as ABLATION_FILE,
        AblationResult,
        MinimalSkill as MinimalSkill,
        is_ablation as is_ablation,
        read_ablation,
    )
    from evalkit.ablation._sequential import (
        SequentialLook as SequentialLook,
        per_case_contributions as per_case_contributions,
        sequential_look as sequential_look,
        simulate_allocation as simulate_allocation,
    )
    from evalkit.ablation._study import ablate, list_components as list_components
    from evalkit.ablation._verdicts import ComponentVerdict as ComponentVerdict, component_verdicts
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
