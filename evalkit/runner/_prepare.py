"""Before a run starts: the suite with its overrides, the provider, the plan and the judge."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.cases import Suite
from evalkit.errors import ConfigError
from evalkit.judge import (
    Judge,
    check_judge_provider,
    check_judgeable,
    make_judge,
    resolve_judge_spec,
)
from evalkit.matrix import ProviderSpec, WorkItem, build_plan
from evalkit.providers import ProviderInfo, canonical_settings, create_provider
from evalkit.runner._config import RunConfig


def apply_overrides(suite: Suite, config: RunConfig) -> Suite:
    """The suite with the command line's skill texts and descriptions in place."""
    for override in config.skills:
        path = Path(override.path)
        if not path.is_file():
            raise ConfigError(f"--skill {override.skill}={path}: file not found")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--skill {override.skill}={path}: cannot read text: {exc}") from None
        suite = suite.with_skill_text(override.skill, text, override.variant)
    for described in config.descriptions:
        suite = suite.with_skill_description(described.skill, described.text)
    return suite


@dataclass(frozen=True)
class Prepared:
    """The validated plan of a run: suite (with overrides), provider, conditions, items, judge."""

    suite: Suite
    provider_name: str
    settings: tuple[tuple[str, Any], ...]
    info: ProviderInfo
    conditions: tuple[str, ...]
    trials: int
    seed: int
    items: list[WorkItem]
    deterministic: bool = False
    judge: Judge | None = None
    carried: dict[str, Any] = field(default_factory=dict)
    """Manifest keys a resumed run keeps from its previous manifest (``sequential``,
    ``started_at``)."""


def prepare_judge(suite: Suite, config: RunConfig, cases: list[Any]) -> Judge | None:
    """The judge of the planned cases' expectations (None when no planned case is judged)."""
    spec = resolve_judge_spec(
        suite.spec.judge, config.judge_provider, config.judge_model, config.judge_options
    )
    check_judge_provider(spec)  # a judge that is no provider plugin is refused, judged or not
    if suite.spec.pairwise is not None:
        check_judge_provider(suite.spec.pairwise.judge)
    judged = [case for case in cases if case.is_judged]
    if not judged:
        return None
    judge = None if spec is None else make_judge(
        spec,
        config.runs_dir,
        use_cache=config.use_cache,
        retries=config.retries,
        retry_backoff_s=config.retry_backoff_s,
    )
    check_judgeable(judge, judged)
    return judge


def prepare(suite: Suite, config: RunConfig) -> Prepared:
    """Validate the options against the suite and build the plan (nothing is written)."""
    suite = apply_overrides(suite, config)
    defaults = suite.spec.defaults
    provider_name = config.provider or defaults.provider
    settings = dict(suite.spec.providers.get(provider_name, {}))
    settings.update(config.provider_options)
    if config.model:
        settings["model"] = config.model
    provider = create_provider(provider_name, settings)
    info = provider.info()
    conditions = config.conditions or defaults.conditions
    cases = suite.select(
        case_ids=config.case_ids, lanes=config.lanes, tags=config.tags, splits=config.splits,
        conditions=conditions,
    )
    for case in cases:
        for name in conditions:
            suite.exposure(case, name)  # raises ConfigError on a missing skill variant
    judge = prepare_judge(suite, config, list(cases))
    trials = config.trials or defaults.trials
    seed = config.seed if config.seed is not None else defaults.seed
    outcome = tuple(sorted(provider.outcome_settings().items()))
    # validated once here; workers rebuild the provider from this canonical JSON form
    canonical = canonical_settings(provider, settings)
    spec = ProviderSpec(provider_name, info.model, tuple(sorted(canonical.items())), outcome)
    items = build_plan(
        suite,
        case_ids=[c.id for c in cases],
        conditions=conditions,
        providers=[spec],
        trials=trials,
        seed=seed,
        pass_threshold=defaults.pass_threshold,
        case_trials=config.case_trials,
    )
    return Prepared(
        suite,
        provider_name,
        spec.settings,
        info,
        tuple(conditions),
        trials,
        seed,
        items,
        deterministic=bool(getattr(provider, "deterministic", False)),
        judge=judge,
    )


def base_row(item: WorkItem, prep: Prepared, run_id: str) -> dict[str, Any]:
    """The columns of an item's row that come from the plan, not from its outcome."""
    case = prep.suite.case(item.case_id)
    return {
        "run_id": run_id,
        "item_key": item.key,
        "item_hash": item.item_hash,
        "suite": prep.suite.name,
        "dataset_version": prep.suite.dataset_version,
        "lane": item.lane,
        "case_id": item.case_id,
        "category": case.category,
        "split": case.split,
        "tags": ",".join(sorted(case.tags)),
        "expected_skill": case.expected_skill,
        "condition": item.condition,
        "skill_hash": item.skill_hash,
        "provider": item.provider,
        "model": prep.info.model,
        "provider_version": prep.info.version,
        "trial": item.trial,
        "seed": item.seed,
        "cache_hit": False,
        "transcript_path": None,
        "origin_run_id": run_id,
        "provider_deterministic": prep.deterministic,
    }
