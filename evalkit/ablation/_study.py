"""``ablate``: run a skill's ablated copies as conditions and say which part does the work.

The study directory ``runs_dir/<id>/`` holds ``skills/full/`` and one ``skills/<condition>/``
per ablated copy (real copies, each tree-hashed into the runs' manifests), the runs
(``study/``, or ``round-01/``, ``round-02/``... of a sequential study, and ``holdout/`` for
``--minimal``), and ``ablation.json``, the result.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit._paths import safe_run_id
from evalkit.ablation._components import (
    AblatedCopy,
    SkillComponent,
    estimate_tokens,
    pick_components,
    skill_components,
    write_ablated_copy,
)
from evalkit.ablation._config import AblationConfig
from evalkit.ablation._cost import add_costs, mean_input_tokens
from evalkit.ablation._result import AblationResult, MinimalSkill
from evalkit.ablation._sequential import (
    NEGLIGIBLE,
    per_case_contributions,
    sequential_look,
)
from evalkit.ablation._verdicts import VERDICT_COLUMNS, component_verdicts
from evalkit.cases import Condition, Suite, VariantFiles, load_suite
from evalkit.errors import ConfigError
from evalkit.results import (
    AblatedComponentRecord,
    AblationRecord,
    load_manifest,
    read_run,
    write_manifest,
)
from evalkit.runner import run
from evalkit.stats import CompareOptions, case_order, compare_tables

SKILLS_DIR = "skills"
MINIMAL_CONDITION = "ablate-minimal"


@dataclass(frozen=True)
class _Plan:
    suite: Suite
    full: str
    picked: list[SkillComponent]
    copies: dict[str, AblatedCopy]  # component id -> copy
    full_copy: AblatedCopy
    study_dir: Path


def list_components(suite: str | os.PathLike[str] | Suite, skill: str) -> list[SkillComponent]:
    """The components of a suite skill with their sizes (``evalkit ablate --list``).

    Raises:
        ConfigError: No such skill.
    """
    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    return skill_components(loaded, skill)


def _with_copy(suite: Suite, skill: str, variant: str, copy: AblatedCopy) -> Suite:
    files = VariantFiles(
        copy.description,
        copy.path if copy.has_resources else None,
        copy.resources_hash if copy.has_resources else "",
    )
    return suite.with_variant(skill, variant, copy.text, files)


def check_copies_size(loaded: Suite, config: AblationConfig, picked: list[SkillComponent]) -> int:
    """The bytes the study's skill copies need; refuse before writing when past the quota.

    Each copy holds the skill's resource files (links are never followed) but the one removed
    and its ``SKILL.md``: the full copy and one per picked component.

    Raises:
        ConfigError: The copies would need more than ``config.copies_quota_bytes``.
    """
    texts = loaded.skills[config.skill]
    sizes: dict[str, int] = {}
    if texts.resources is not None:
        for path in texts.resources.rglob("*"):
            if path.is_file() and not path.is_symlink():
                sizes[path.relative_to(texts.resources).as_posix()] = path.stat().st_size
    skill_text = len(texts.texts.get("canonical", "").encode("utf-8"))
    full = sum(size for name, size in sizes.items() if name != "SKILL.md") + skill_text
    needed = full + sum(
        full - (sizes.get(c.title, 0) if c.kind == "file" else 0) for c in picked
    )
    if needed > config.copies_quota_bytes:
        raise ConfigError(
            f"ablating skill '{config.skill}' writes {len(picked) + 1} copies of it needing "
            f"{needed:,} bytes, more than the {config.copies_quota_bytes:,} allowed "
            "(--copies-quota, AblationConfig.copies_quota_bytes); ablate fewer components "
            "(--component ID ...), move large references out of the skill, or raise the quota"
        )
    return needed


def _plan(loaded: Suite, config: AblationConfig, study_dir: Path) -> _Plan:
    components = skill_components(loaded, config.skill)
    if len(components) < 2:
        raise ConfigError(
            f"skill '{config.skill}' has one component ({components[0].id}): an ablation "
            "removes one part and keeps the rest, so there is nothing to compare; split its "
            "SKILL.md into sections with Markdown headings, or add references/ files"
        )
    picked = pick_components(components, config.components)
    check_copies_size(loaded, config, picked)
    skills_dir = study_dir / SKILLS_DIR
    full_copy = write_ablated_copy(loaded, config.skill, [], skills_dir / "full")
    suite, copies, conditions = loaded, {}, {}
    for component in picked:
        copy = write_ablated_copy(
            loaded, config.skill, [component], skills_dir / component.condition
        )
        copies[component.id] = copy
        suite = _with_copy(suite, config.skill, component.condition, copy)
        conditions[component.condition] = Condition(
            mode=config.mode,
            variant=component.condition,
            description=f"{config.skill} without {component.id}",
        )
    return _Plan(
        suite.with_conditions(conditions),
        config.mode,
        picked,
        copies,
        full_copy,
        study_dir,
    )


def _run_round(
    suite: Suite,
    config: AblationConfig,
    plan: _Plan,
    conditions: tuple[str, ...],
    run_id: str,
    **kwargs: Any,
) -> Path:
    """Run ``conditions`` of ``suite`` under the study's settings; the run's directory."""
    settings = config.run.model_copy(
        update={
            "seed": config.seed,
            "runs_dir": plan.study_dir,
            "conditions": conditions,
            "run_id": run_id,
            **kwargs,
        }
    )
    return Path(run(suite, settings).run_dir)


def _study_splits(config: AblationConfig) -> tuple[str, ...]:
    if not config.minimal:
        return config.run.splits
    if config.run.splits and config.run.splits != ("dev",):
        raise ConfigError(
            "--minimal chooses the smaller skill on the dev split and verifies it on holdout; "
            "drop --split (or pass --split dev)"
        )
    return ("dev",)


def _record(plan: _Plan, config: AblationConfig) -> AblationRecord:
    return AblationRecord(
        skill=config.skill,
        full_condition=plan.full,
        full_tree_hash=plan.full_copy.tree_hash,
        components=[
            AblatedComponentRecord(
                component=c.id,
                condition=c.condition,
                tree_hash=plan.copies[c.id].tree_hash,
                path=str(plan.copies[c.id].path.relative_to(plan.study_dir)),
                tokens=c.tokens,
            )
            for c in plan.picked
        ],
    )


def _stamp(run_dir: Path, record: AblationRecord) -> None:
    """Add the ablation record (copies and tree hashes) to a run's manifest."""
    manifest = load_manifest(run_dir)
    if manifest is not None:
        write_manifest(run_dir, manifest.model_copy(update={"ablation": record}))


def _fixed(plan: _Plan, config: AblationConfig, splits: tuple[str, ...]) -> list[Path]:
    conditions = ("none", plan.full, *(c.condition for c in plan.picked))
    return [
        _run_round(plan.suite, config, plan, conditions, "study", splits=splits,
                   case_ids=config.run.case_ids)
    ]


def _sequential(
    plan: _Plan, config: AblationConfig, splits: tuple[str, ...]
) -> tuple[list[Path], pd.DataFrame, list[str]]:
    cases = plan.suite.select(
        case_ids=config.run.case_ids, lanes=config.run.lanes, tags=config.run.tags, splits=splits
    )
    order = case_order([c.id for c in cases], config.seed)
    m = len(plan.picked)
    undecided = [c.condition for c in plan.picked]
    frames: list[pd.DataFrame] = []
    runs: list[Path] = []
    looks: dict[str, Any] = {}
    done = 0
    while undecided and done < len(order):
        batch = tuple(order[done : done + config.batch])
        conditions = (("none",) if done == 0 else ()) + (plan.full, *undecided)
        runs.append(
            _run_round(
                plan.suite, config, plan, conditions, f"round-{len(runs) + 1:02d}", case_ids=batch
            )
        )
        frames.append(read_run(runs[-1]))
        done += len(batch)
        frame = pd.concat(frames, ignore_index=True)
        for component in plan.picked:
            if component.condition not in undecided:
                continue
            contributions = per_case_contributions(frame, plan.full, component.condition, order)
            looks[component.id] = sequential_look(
                component.id, contributions, alpha=config.alpha, m=m, threshold=config.threshold
            )
            if looks[component.id].verdict != "undecided":
                undecided.remove(component.condition)
    return runs, pd.concat(frames, ignore_index=True), _sequential_rows(plan, looks, config)


def _sequential_rows(plan: _Plan, looks: dict[str, Any], config: AblationConfig) -> Any:
    rows = []
    m = len(plan.picked)
    for component in plan.picked:
        look = looks[component.id]
        settled = look.verdict if look.verdict in ("necessary", "harmful") else ""
        rows.append(
            {
                "component": component.id,
                "condition": component.condition,
                "n_cases": look.n_cases,
                "estimate": look.estimate,
                "ci_low": look.ci_low,
                "ci_high": look.ci_high,
                "confidence": 1 - config.alpha / m,
                "p_value": math.nan,
                "p_holm": math.nan,
                "verdict": settled or "no detectable effect",
                # the sequence excludes every larger contribution
                "mde": config.threshold
                if look.verdict == NEGLIGIBLE
                else max(abs(look.ci_low), abs(look.ci_high)),
                "hurt_cases": "",
                "helped_cases": "",
                "method": "betting confidence sequence per component, Bonferroni alpha/m",
            }
        )
    return rows


def _skill_effect(frame: pd.DataFrame, full: str, config: AblationConfig) -> dict[str, Any]:
    result = compare_tables(
        frame[frame["condition"].isin(("none", full))],
        conditions=("none", full),
        options=CompareOptions(
            threshold=config.threshold, n_resamples=config.n_resamples, seed=config.seed,
        ),
    )
    return {
        "estimate": float(result.delta.estimate),
        "ci_low": float(result.delta.ci_low),
        "ci_high": float(result.delta.ci_high),
        "n_cases": int(result.n_cases),
        "verdict": result.verdict,
    }


def _minimal(
    plan: _Plan, config: AblationConfig, table: pd.DataFrame
) -> tuple[MinimalSkill | None, str]:
    """Write and verify the smaller skill; (None, why) when nothing can be removed."""
    shown_small = (table["verdict"] == "harmful") | (
        (table["verdict"] == "no detectable effect") & (table["ci_high"] < config.threshold)
    )
    removed_ids = list(table.loc[shown_small, "component"])
    if not removed_ids:
        return None, (
            "--minimal: no component was shown to contribute less than the threshold "
            f"({config.threshold:g}) or to be harmful, so none can be removed on this evidence"
        )
    removed = [c for c in plan.picked if c.id in removed_ids]
    copy = write_ablated_copy(
        plan.suite, config.skill, removed, plan.study_dir / SKILLS_DIR / "minimal"
    )
    suite = _with_copy(plan.suite, config.skill, MINIMAL_CONDITION, copy).with_conditions(
        {
            MINIMAL_CONDITION: Condition(
                mode=config.mode, variant=MINIMAL_CONDITION, description="the minimal skill"
            )
        }
    )
    holdout = _run_round(
        suite,
        config,
        plan,
        (plan.full, MINIMAL_CONDITION),
        "holdout",
        splits=("holdout",),
        case_ids=config.run.case_ids,
    )
    frame = read_run(holdout)
    check = compare_tables(
        frame,
        conditions=(plan.full, MINIMAL_CONDITION),
        options=CompareOptions(
            threshold=config.threshold, n_resamples=config.n_resamples, seed=config.seed,
        ),
    )
    low = float(check.delta.ci_low)
    verified = low > -config.threshold
    confidence = float(check.delta.confidence)
    note = (
        f"verified on holdout: the minimal skill is within {config.threshold:g} of the full "
        f"skill ({confidence:.0%} interval of minimal - full from {low:+.3f})"
        if verified
        else f"not verified on holdout: minimal - full could be as low as {low:+.3f}, beyond "
        f"the threshold -{config.threshold:g}; keep the full skill or collect more cases"
    )
    return (
        MinimalSkill(
            removed=tuple(removed_ids),
            path=str(copy.path),
            tree_hash=copy.tree_hash,
            tokens_saved=sum(c.tokens for c in removed),
            split="holdout",
            n_cases=int(check.n_cases),
            estimate=float(check.delta.estimate),
            ci_low=low,
            ci_high=float(check.delta.ci_high),
            confidence=confidence,
            verified=verified,
            note=note,
        ),
        "",
    )


def _rows(table: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): v for k, v in row.items()} for row in table.to_dict("records")]


def ablate(suite: str | os.PathLike[str] | Suite, config: AblationConfig) -> AblationResult:
    """Which part of the skill does the work? Run its ablations and give verdicts and costs.

    Every component (or those in ``config.components``) is removed from a real copy of the
    skill, and each copy runs as a condition beside the full skill and ``none``. The verdicts
    are paired by case against the full skill with family-wise error ``alpha`` (see
    :mod:`evalkit.ablation`); with ``sequential`` each component stops at its own verdict.

    Args:
        suite: A suite directory or a loaded suite.
        config: The study's options.

    Returns:
        The :class:`AblationResult` (also written to ``<study>/ablation.json``).

    Raises:
        evalkit.errors.ConfigError: Unknown skill or component, a one-component skill, a
            study directory that exists, or ``--minimal`` without dev and holdout cases.
    """
    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    run_id = safe_run_id(config.run.run_id or datetime.now().strftime("ablate-%Y%m%d-%H%M%S"))
    study_dir = Path(config.run.runs_dir) / run_id
    if study_dir.exists():
        raise ConfigError(
            f"the study directory '{study_dir}' exists; pass another --run-id (an ablation "
            "study cannot be resumed)"
        )
    splits = _study_splits(config)
    if config.minimal:
        for split in ("dev", "holdout"):
            if not loaded.select(case_ids=config.run.case_ids, splits=(split,)):
                raise ConfigError(
                    f"--minimal needs cases of split '{split}' (chosen on dev, verified on "
                    f"holdout); suite '{loaded.name}' has none: set 'split: {split}' on some"
                )
    skill_components(loaded, config.skill)  # unknown skill: fail before writing anything
    plan = _plan(loaded, config, study_dir)
    record = _record(plan, config)
    ablations = {c.id: c.condition for c in plan.picked}
    if config.sequential:
        runs, frame, rows = _sequential(plan, config, splits)
        table = pd.DataFrame(rows).loc[:, list(VERDICT_COLUMNS)]
    else:
        runs = _fixed(plan, config, splits)
        frame = read_run(runs[0])
        table = component_verdicts(
            frame,
            plan.full,
            ablations,
            alpha=config.alpha,
            n_resamples=config.n_resamples,
            seed=config.seed,
        )
    for run_dir in runs:
        _stamp(run_dir, record)
    table = add_costs(table, {c.id: c.tokens for c in plan.picked}, frame, plan.full)
    by_id = {c.id: c for c in plan.picked}
    table.insert(1, "kind", [by_id[c].kind for c in table["component"]])
    table.insert(2, "title", [by_id[c].title for c in table["component"]])
    table["tree_hash"] = [plan.copies[c].tree_hash for c in table["component"]]
    overhead = mean_input_tokens(frame, plan.full) - mean_input_tokens(frame, "none")
    if not np.isfinite(overhead):
        overhead = float(estimate_tokens(plan.full_copy.text))
    n_cases = frame["case_id"].nunique()
    trials = int(frame.groupby(["case_id", "condition"]).size().max())
    notes = [
        f"{row['component']}: no verdict after {row['n_cases']} cases; contributions beyond "
        f"+-{row['mde']:.2f} are excluded"
        for row in _rows(table)
        if config.sequential
        and row["verdict"] == "no detectable effect"
        and row["mde"] > config.threshold
    ]
    minimal = None
    if config.minimal:
        minimal, why = _minimal(plan, config, table)
        if why:
            notes.append(why)
        if minimal is not None:
            _stamp(Path(minimal.path).parents[1] / "holdout", record)
    result = AblationResult(
        study_dir=study_dir,
        skill=config.skill,
        mode=config.mode,
        full_condition=plan.full,
        design="sequential" if config.sequential else "fixed",
        alpha=config.alpha,
        threshold=config.threshold,
        components=table,
        skill_effect=_skill_effect(frame, plan.full, config),
        overhead_tokens=float(overhead),
        items=len(frame),
        fixed_items=n_cases * trials * (2 + len(plan.picked)),
        runs=tuple(str(r) for r in runs),
        minimal=minimal,
        notes=tuple(notes),
    )
    result.write()
    return result
