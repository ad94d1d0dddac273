"""Work items and the run matrix: cases x conditions x providers x trials."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalkit._keys import build_item_key
from evalkit.cases import Suite, stable_hash
from evalkit.errors import PlanError
from evalkit.scorers import EVIDENCE_SCORER_VERSION, SCORER_VERSION


@dataclass(frozen=True)
class ProviderSpec:
    """A provider as the plan sees it.

    Attributes:
        name: Registry name.
        model: Model identifier.
        settings: Every setting, as passed to the factory.
        outcome_settings: The settings that can change an outcome (hashed).
    """

    name: str
    model: str
    settings: tuple[tuple[str, Any], ...]
    outcome_settings: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class WorkItem:
    """One (lane, case, condition, provider, trial).

    Attributes:
        key: ``lane:case_id:condition:provider:trial`` with each part escaped
            (:func:`item_key`), unique in a plan.
        lane: The case's lane.
        case_id: Case id.
        condition: Condition name.
        provider: Provider name.
        trial: Trial index, from 0.
        seed: The item's seed, spawned from the run seed and the key.
        skill_hash: Hash of the skill text the condition exposes for the case.
        item_hash: Content address of everything that can change the outcome.
    """

    key: str
    lane: str
    case_id: str
    condition: str
    provider: str
    trial: int
    seed: int
    skill_hash: str
    item_hash: str


def item_key(lane: str, case_id: str, condition: str, provider: str, trial: int) -> str:
    """The stable key of a work item (see :func:`evalkit._keys.build_item_key`).

    Each part is escaped (``%`` as ``%25``, ``:`` as ``%3A``), so the key is injective in its
    parts; :func:`parse_item_key` reads it back.

    Examples:
        >>> item_key("prompt", "blind-sleep", "none", "simulated", 2)
        'prompt:blind-sleep:none:simulated:2'
        >>> item_key("prompt", "q1:x", "m", "simulated", 0) != item_key(
        ...     "prompt", "q1", "x:m", "simulated", 0)
        True
    """
    return build_item_key(lane, case_id, condition, provider, trial)


def item_seed(run_seed: int, key: str) -> int:
    """Seed of one item, spawned from the run's ``SeedSequence`` with the key as spawn key.

    Depends only on the run seed and the key, so it is the same whatever the concurrency,
    backend, or the subset of items run.

    Examples:
        >>> item_seed(0, "prompt:a:none:simulated:0") == item_seed(0, "prompt:a:none:simulated:0")
        True
    """
    spawn_key = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")
    sequence = np.random.SeedSequence(run_seed, spawn_key=(spawn_key,))
    return int(sequence.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def build_plan(
    suite: Suite,
    *,
    case_ids: Sequence[str],
    conditions: Sequence[str],
    providers: Sequence[ProviderSpec],
    trials: int,
    seed: int,
    pass_threshold: float,
    case_trials: Mapping[str, int] | None = None,
) -> list[WorkItem]:
    """Enumerate the work items of a run, sorted by key.

    Args:
        suite: The loaded suite.
        case_ids: Cases to run.
        conditions: Conditions to run.
        providers: Providers to run.
        trials: Trials per (case, condition, provider).
        seed: Run seed.
        pass_threshold: The suite's pass threshold (it changes outcomes, so it is hashed).
        case_trials: Trials of particular cases, over ``trials`` (adaptive trials run some
            cases' first trials only). An item's key and hash do not depend on it, so a case
            given more trials later keeps its finished items.

    Returns:
        The work items, sorted by key.

    Raises:
        PlanError: Two items share a key (e.g. a provider listed twice).
    """
    items: dict[str, WorkItem] = {}
    anti = stable_hash([r.model_dump(mode="json") for r in suite.spec.anti_patterns])
    for case_id in case_ids:
        case = suite.case(case_id)
        case_hash = suite.case_hashes[case.id]
        for condition in conditions:
            skill_hash = suite.skill_hash(case, condition)
            for spec in providers:
                for trial in range((case_trials or {}).get(case.id, trials)):
                    key = item_key(case.lane, case.id, condition, spec.name, trial)
                    if key in items:
                        raise PlanError(f"duplicate work item key '{key}' in the plan")
                    s = item_seed(seed, key)
                    content = {
                        "case": case_hash,
                        "skill": skill_hash,
                        "provider": spec.name,
                        "model": spec.model,
                        "settings": list(spec.outcome_settings),
                        "scorer": SCORER_VERSION,
                        "threshold": pass_threshold,
                        "anti_patterns": anti,
                        "trial": trial,
                        "seed": s,
                    }
                    if case.lane == "evidence":
                        # artifact validators replaced the existence check: outcomes cached
                        # before them are not reused (other lanes keep their hashes)
                        content["evidence_scorer"] = EVIDENCE_SCORER_VERSION
                    items[key] = WorkItem(
                        key=key,
                        lane=case.lane,
                        case_id=case.id,
                        condition=condition,
                        provider=spec.name,
                        trial=trial,
                        seed=s,
                        skill_hash=skill_hash,
                        item_hash=stable_hash(content),
                    )
    return [items[k] for k in sorted(items)]
