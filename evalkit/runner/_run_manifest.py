"""What a run records about itself: its manifest, its clock, and whether a resume may grow it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from evalkit._git import git_sha
from evalkit._redact import redact_settings
from evalkit._version import __version__
from evalkit.cases import SkillTexts, stable_hash
from evalkit.errors import ConfigError
from evalkit.results import (
    RESULTS_FILE,
    ConditionRecord,
    FailureRecord,
    Manifest,
    ProviderRecord,
    RunFilters,
    RunStatus,
)
from evalkit.runner._config import RunConfig
from evalkit.runner._prepare import Prepared


def now() -> datetime:
    """The current UTC time: the runner's one clock (tests replace it to place runs in time)."""
    return datetime.now(UTC)


def run_manifest(
    prep: Prepared,
    config: RunConfig,
    run_id: str,
    status: RunStatus,
    counts: dict[str, int],
    failure: FailureRecord | None = None,
) -> Manifest:
    """The run's manifest in its current state (written at the start, the end and a stop)."""
    suite = prep.suite
    conditions = {}
    for name in prep.conditions:
        cond = suite.conditions[name]
        hashes = {
            skill: stable_hash(texts.texts.get(cond.variant, ""))
            for skill, texts in sorted(suite.skills.items())
            if cond.mode != "none"
        }
        record = ConditionRecord(mode=cond.mode, variant=cond.variant, skill_hashes=hashes)
        if cond.mode == "self-load":  # what the agent's skill index showed
            record.descriptions = {
                skill: texts.description for skill, texts in sorted(suite.skills.items())
            }
            record.bootstrap_hashes = {
                skill: stable_hash(_bootstrap(texts, cond.variant))
                for skill, texts in sorted(suite.skills.items())
            }
        conditions[name] = record
    return Manifest(
        run_id=run_id,
        created_at=now().isoformat(timespec="seconds"),
        evalkit_version=__version__,
        suite=suite.name,
        suite_path=str(suite.root),
        suite_git_sha=git_sha(suite.root),
        dataset_version=suite.dataset_version,
        conditions=conditions,
        providers=[
            ProviderRecord(
                name=prep.info.name,
                model=prep.info.model,
                version=prep.info.version,
                settings=redact_settings(dict(prep.settings)),
            )
        ],
        trials=prep.trials,
        seed=prep.seed,
        concurrency=config.concurrency,
        backend=config.backend,
        filters=RunFilters(
            lanes=list(config.lanes),
            cases=list(config.case_ids),
            tags=list(config.tags),
            splits=list(config.splits),
        ),
        plan_hash=stable_hash([i.item_hash for i in prep.items]),
        skill_texts=sorted({stable_hash(text) for text in exposed_texts(prep)}),
        command_line=config.command_line,
        status=status,
        counts=counts,
        **({"failure": failure} if failure is not None else {}),
        **({"judge": prep.judge.record()} if prep.judge is not None else {}),
        **prep.carried,
    )


def exposed_texts(prep: Prepared) -> list[str]:
    """Every skill text the run's conditions expose: each variant's, and self-load bootstraps.

    These are the texts of the manifest's ``skill_hashes`` and ``bootstrap_hashes``, which the
    run keeps in its ``skills/`` directory (:func:`evalkit.cases.store_skill_texts`).
    """
    suite = prep.suite
    texts: list[str] = []
    for name in prep.conditions:
        cond = suite.conditions[name]
        if cond.mode == "none":
            continue
        for _, skill in sorted(suite.skills.items()):
            texts.append(skill.texts.get(cond.variant, ""))
            if cond.mode == "self-load":
                texts.append(_bootstrap(skill, cond.variant))
    return list(dict.fromkeys(texts))


def _bootstrap(skill: SkillTexts, variant: str) -> str:
    """What self-load showed of ``skill`` under ``variant`` before it was loaded."""
    files = skill.variant_files.get(variant)
    if files is not None and files.bootstrap is not None:
        return files.bootstrap
    return skill.texts.get("bootstrap", "")


def check_extension(prep: Prepared, run_dir: Path, run_id: str) -> None:
    """Refuse to extend a run whose finished items are not items of the new, larger plan.

    Raises:
        ConfigError: A finished item is absent from the plan or has another item hash.
    """
    from evalkit.results import RESULT_SCHEMA, read_table

    planned = {item.key: item.item_hash for item in prep.items}
    finished = read_table(run_dir, RESULTS_FILE, RESULT_SCHEMA).select(["item_key", "item_hash"])
    for key, item_hash in zip(
        finished.column("item_key").to_pylist(),
        finished.column("item_hash").to_pylist(),
        strict=True,
    ):
        if planned.get(key) != item_hash:
            raise ConfigError(
                f"--resume: run '{run_id}' cannot grow into this plan: its finished item "
                f"{key!r} is not an item of it (other suite, options or seed); start a new run "
                "instead"
            )
