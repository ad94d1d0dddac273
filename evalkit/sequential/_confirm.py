"""``evalkit confirm``: rerun the cases a comparison's screen flagged, and confirm them.

A comparison's per-case rows are a screen at a false discovery rate: they say which cases
seem to have moved. :func:`confirm` is the follow-up experiment that settles them. It reruns
only those cases (or the ones named), each side with the skill texts its run kept
(``skills/<hash>/SKILL.md``), with a fresh seed, at the trials each case's exact test needs for
the effect the screen saw (capped, priced before anything is spent, within a budget of items),
and gives confirmatory verdicts computed on the new trials alone, Holm-corrected over the
cases confirmed. The screening data is not counted twice.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from secrets import token_hex
from typing import Any

import pandas as pd
from pydantic import Field

from evalkit._options import Options
from evalkit._plain import plain_fields
from evalkit._registry import plugin_names
from evalkit._settings import ALPHA, POWER, THRESHOLD, Alpha, Power, Threshold
from evalkit.analysis import (
    CONFIRM_MAX_TRIALS,
    ConfirmPlan,
    FlaggedCase,
    allocate_confirmation,
    compare,
    flagged_cases,
    pilot_pairs,
    plan_confirmation,
    screened_case,
    strongest_cases,
)
from evalkit.cases import Condition, Suite, VariantFiles, load_skill_text, load_suite, stable_hash
from evalkit.errors import ConfigError, InputError
from evalkit.results import (
    SKILLS_DIR,
    ConditionRecord,
    Manifest,
    load_manifest,
    load_results,
    read_run,
    resolve_run_dir,
    write_manifest,
)
from evalkit.runner import RunConfig, run
from evalkit.stats import confirm_case_table, records

#: The two conditions of a confirmation run: each side's stored skill texts.
BASELINE, CANDIDATE = "baseline", "candidate"


class ConfirmConfig(Options):
    """What a confirmation confirms and how (``evalkit confirm``'s own options).

    How its run runs (provider, seed, concurrency, runs directory, run id, progress) is the
    :class:`~evalkit.runner.RunConfig` passed beside it.
    """


    conditions: tuple[str, ...] | None = None
    """One run: ``(baseline, candidate)`` conditions; two runs: the one condition compared
    (default: the one both runs hold)."""
    case_ids: tuple[str, ...] = ()
    """Confirm these cases instead of the ones the screen flags."""
    budget: int | None = Field(default=None, ge=1)
    """Items the confirmation may run at most (the weakest-screened cases are dropped)."""
    alpha: Alpha = ALPHA.default
    """Family-wise level of the confirmatory verdicts (and the screen's false discovery
    rate)."""
    power: Power = POWER.default
    """Power each case is planned for."""
    max_trials: int = Field(default=CONFIRM_MAX_TRIALS, ge=2)
    """Cap on the trials per side of one case."""
    threshold: Threshold = THRESHOLD.default
    """Practical threshold of "improved"."""
    dry_run: bool = False
    """Plan and price only: run nothing."""
    allocate_trials: bool = True
    """Spread the plan's items over its cases by their pilot spread (the screen's pairs), with
    :class:`~evalkit.stats.NeymanAllocation` (:func:`~evalkit.analysis.allocate_confirmation`);
    False: every case at the trials of its own power plan."""


@dataclass(frozen=True)
class ConfirmResult:
    """A confirmation: its plan, and (unless a dry run) its run and confirmatory verdicts.

    Attributes:
        baseline: The baseline run (and condition), as the screen labelled it.
        candidate: The candidate run (and condition).
        screen: Every case the screen flagged (or ``--case`` named), strongest first.
        plan: The cases rerun with their trials, the cases the budget dropped, the price.
        provider: The provider the confirmation runs (or ran) with.
        seed: Its fresh seed (neither screened run's).
        run_id: The confirmation run (None: a dry run, or nothing to confirm).
        run_dir: Its directory.
        items: Items it ran (0 for a dry run).
        cases: One row per confirmed case (``case_id, n_baseline, n_candidate,
            baseline_rate, candidate_rate, estimate, ci_low, ci_high, p_value, p_adjusted,
            verdict``): Fisher per case on the new trials alone, Holm over these cases.
        notes: What it could not do as asked, or why nothing ran.
    """

    baseline: str
    candidate: str
    screen: tuple[FlaggedCase, ...]
    plan: ConfirmPlan
    provider: str
    seed: int
    run_id: str | None = None
    run_dir: Path | None = None
    items: int = 0
    cases: pd.DataFrame = field(default_factory=pd.DataFrame)
    notes: tuple[str, ...] = ()

    def named(self, verdict: str) -> list[dict[str, Any]]:
        """The confirmed cases with ``verdict``: id, estimate, interval, Holm p and trials."""
        if self.cases.empty:
            return []
        rows = self.cases[self.cases["verdict"] == verdict]
        keep = ["case_id", "estimate", "ci_low", "ci_high", "p_adjusted", "n_baseline",
                "n_candidate"]  # fmt: skip
        return records(rows[keep])

    @property
    def regressed_cases(self) -> list[dict[str, Any]]:
        """Cases confirmed regressed."""
        return self.named("regressed")

    @property
    def improved_cases(self) -> list[dict[str, Any]]:
        """Cases confirmed improved."""
        return self.named("improved")

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit confirm --json`` object."""
        out = plain_fields(self)
        out["screen"] = [c.to_dict() for c in self.screen]
        out["cases"] = records(self.cases) if not self.cases.empty else []
        out["regressed_cases"] = self.regressed_cases
        out["improved_cases"] = self.improved_cases
        out["planned_items"] = self.plan.items
        out["correction"] = "holm"
        return out


def confirm(
    baseline: str | os.PathLike[str],
    candidate: str | os.PathLike[str] | None,
    suite: str | os.PathLike[str] | Suite,
    config: RunConfig | None = None,
    options: ConfirmConfig | None = None,
    approve: Callable[[ConfirmResult], bool] | None = None,
) -> ConfirmResult:
    """Rerun the cases a comparison flags, both sides' stored skill texts, and confirm them.

    Args:
        baseline: The baseline run (directory or run id under ``config.runs_dir``).
        candidate: The candidate run; None to confirm two conditions of ``baseline``
            (``options.conditions = (A, B)``).
        suite: The suite the runs ran (the user names it: the cases, their checks and the
            judge come from it, never from run data).
        config: How the confirmation run runs: ``provider`` (default: the screened runs' own
            when it is a registered provider name), ``provider_options``, ``seed`` (default: a
            fresh one), ``concurrency``, ``runs_dir``, ``run_id``, ``progress``. Its
            conditions, cases and trials are the plan's.
        options: What is confirmed and how (:class:`ConfirmConfig`).
        approve: Called with the planned and priced (not yet run) result before anything is
            spent; nothing runs unless it returns True (None: approved). ``evalkit confirm``
            prints the plan there and asks, unless ``--yes``.

    Returns:
        The plan and, unless ``options.dry_run``, the confirmation run and its verdicts.

    Raises:
        InputError: A run or the suite is bad, a run lacks its stored skill texts or they were
            tampered with, the suite's cases are not the ones the runs ran, or a named case
            is not in the comparison (exit 2).
    """
    config = config or RunConfig()
    options = options or ConfirmConfig()
    runs_dir = config.runs_dir
    base_dir = resolve_run_dir(baseline, runs_dir)
    cand_dir = base_dir if candidate is None else resolve_run_dir(candidate, runs_dir)
    base_cond, cand_cond, compared = _sides(base_dir, cand_dir, candidate is None, options)
    screen_result = compare(
        base_dir, None if candidate is None else cand_dir, conditions=compared,
        threshold=options.threshold, alpha=options.alpha, runs_dir=runs_dir,
    ).stats  # fmt: skip
    if options.case_ids:
        named = [screened_case(screen_result, c, options.alpha)
                 for c in dict.fromkeys(options.case_ids)]  # fmt: skip
        screen = tuple(sorted(named, key=lambda c: (c.p_value, c.case_id)))
    else:
        screen = flagged_cases(screen_result, options.alpha)
    base_rows, cand_rows = _screened_sides(base_dir, cand_dir, base_cond, cand_cond)
    rows = pd.concat([base_rows, cand_rows], ignore_index=True)
    plan = plan_confirmation(
        screen, rows, alpha=options.alpha, power=options.power, max_trials=options.max_trials,
        threshold=options.threshold, budget=options.budget, concurrency=config.concurrency,
    )  # fmt: skip
    if options.allocate_trials:
        pairs, differed = pilot_pairs(base_rows, cand_rows, [c.case_id for c in plan.cases])
        plan = allocate_confirmation(plan, pairs, differed, threshold=options.threshold)
    manifests = (_manifest(base_dir), _manifest(cand_dir))
    provider = _provider(config.provider, manifests)
    run_id = config.run_id or datetime.now().strftime("%Y%m%d-%H%M%S-confirm-") + token_hex(2)
    seed = config.seed if config.seed is not None else _fresh_seed(manifests, plan, run_id)
    if seed in {m.seed for m in manifests}:
        raise ConfigError(
            f"--seed {seed} is a screened run's seed; a confirmation draws fresh trials: "
            "leave --seed out (a fresh one is derived) or pass another"
        )
    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    sides = (
        (BASELINE, base_dir, manifests[0], base_cond),
        (CANDIDATE, cand_dir, manifests[1], cand_cond),
    )
    confirm_suite = _with_stored_texts(loaded, sides)
    labels = (screen_result.baseline_label, screen_result.candidate_label)
    result = ConfirmResult(
        baseline=labels[0], candidate=labels[1], screen=screen, plan=plan, provider=provider,
        seed=seed, notes=plan.notes,
    )  # fmt: skip
    if not plan.cases:
        why = "no case fits the budget"
        if not screen:
            strongest = strongest_cases(screen_result, alpha=options.alpha)
            why = "the screen flags no case" + (
                "; its strongest: "
                + ", ".join(f"{c.case_id} ({c.estimate * 100:+.1f} pp, p {c.p_value:.2g})"
                            for c in strongest)
                + ": name them with --case to confirm them anyway"
                if strongest else ""
            )  # fmt: skip
        return _with_note(result, f"nothing to confirm: {why}")
    if options.dry_run:
        return result
    if approve is not None and not approve(result):
        return _with_note(result, "not run: the plan was not approved")
    run_config = config.model_copy(
        update={
            "provider": provider,
            "conditions": (BASELINE, CANDIDATE),
            "case_ids": tuple(c.case_id for c in plan.cases),
            "lanes": (), "tags": (), "splits": (),
            "trials": max(c.trials for c in plan.cases),
            "case_trials": {c.case_id: c.trials for c in plan.cases},
            "seed": seed,
            "run_id": run_id,
            "skills": (), "descriptions": (),
        }
    )  # fmt: skip
    ran = run(confirm_suite, run_config)
    _record(ran.run_dir, result, base_dir, cand_dir, base_cond, cand_cond)
    table = confirm_case_table(
        read_run(ran.run_dir), baseline=BASELINE, candidate=CANDIDATE,
        alpha=options.alpha, threshold=options.threshold,
    )  # fmt: skip
    return ConfirmResult(
        **{**_shallow(result), "run_id": ran.run_id, "run_dir": Path(ran.run_dir),
           "items": ran.items, "cases": table}
    )  # fmt: skip


def _shallow(result: ConfirmResult) -> dict[str, Any]:
    return {f: getattr(result, f) for f in result.__dataclass_fields__}


def _with_note(result: ConfirmResult, note: str) -> ConfirmResult:
    return ConfirmResult(**{**_shallow(result), "notes": (*result.notes, note)})


def _manifest(run_dir: Path) -> Manifest:
    manifest = load_manifest(run_dir)
    if manifest is None:
        raise InputError(f"{run_dir}: no manifest.json: confirm reruns runs made by evalkit run")
    return manifest


def _sides(
    base_dir: Path, cand_dir: Path, one_run: bool, options: ConfirmConfig
) -> tuple[str, str, tuple[str, ...]]:
    """The baseline and candidate conditions, and the ``conditions`` of the screen."""
    chosen = options.conditions or ()
    if one_run:
        if len(chosen) != 2:
            raise ConfigError(
                "--conditions: one run needs two conditions, baseline,candidate "
                "(e.g. --conditions none,preloaded)"
            )
        return chosen[0], chosen[1], chosen
    if len(chosen) > 1:
        raise ConfigError(
            "--conditions: between two runs give the one condition to confirm (each run's "
            "own texts under it), not two"
        )
    if chosen:
        return chosen[0], chosen[0], chosen
    shared = sorted(
        set(_manifest(base_dir).conditions) & set(_manifest(cand_dir).conditions)
    )
    if len(shared) != 1:
        raise ConfigError(
            f"--conditions: the runs share {len(shared)} conditions ({', '.join(shared)}); "
            "name the one to confirm, e.g. --conditions preloaded"
        )
    return shared[0], shared[0], tuple(shared)


def _screened_sides(
    base_dir: Path, cand_dir: Path, base_cond: str, cand_cond: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The screen's baseline rows and its candidate rows."""
    base = load_results(base_dir, what="baseline")
    cand = base if cand_dir == base_dir else load_results(cand_dir, what="candidate")
    return base[base["condition"] == base_cond], cand[cand["condition"] == cand_cond]


def _provider(given: str | None, manifests: tuple[Manifest, ...]) -> str:
    """The provider to run: the one given, else the runs' own when it is a registered name.

    A provider recorded in run data is used only when it names a built-in or registered
    provider: a ``module:attribute`` spec read from a run is never imported.
    """
    if given:
        return given
    recorded = {p.name for m in manifests for p in m.providers if p.name}
    known = set(plugin_names("provider"))
    if len(recorded) == 1 and (name := next(iter(recorded))) in known:
        return name
    said = ", ".join(sorted(recorded)) or "none"
    raise ConfigError(
        f"--provider: the runs record provider(s) {said}, which is not one registered "
        "provider name; pass --provider NAME (and --provider-opt KEY=VALUE for its settings)"
    )


def _fresh_seed(manifests: tuple[Manifest, ...], plan: ConfirmPlan, run_id: str) -> int:
    """A seed no screened run used, derived from theirs, the cases and the confirmation's id.

    The run id enters, so a second confirmation of the same screen draws new trials too
    (never the first one's outcomes from the cache), and one run id always draws the same.
    """
    used = {m.seed for m in manifests if m.seed is not None}
    cases = [c.case_id for c in plan.cases]
    seed = int(stable_hash(["confirm", sorted(used), cases, run_id]), 16)
    seed %= 2**31
    while seed in used:
        seed += 1
    return seed


def _with_stored_texts(
    suite: Suite, sides: tuple[tuple[str, Path, Manifest, str], ...]
) -> Suite:
    """The suite with one condition per side, exposing the texts that side's run kept.

    Raises:
        InputError: The suite's cases are not those the runs ran, a run did not keep its
            skill texts, or a stored text is missing or tampered with.
    """
    conditions: dict[str, Condition] = {}
    for name, run_dir, manifest, condition in sides:
        if manifest.dataset_version and manifest.dataset_version != suite.dataset_version:
            raise InputError(
                f"{run_dir}/manifest.json: field 'dataset_version' is "
                f"{manifest.dataset_version} but suite '{suite.name}' ({suite.root}) is "
                f"{suite.dataset_version}: its cases changed since the run; confirm with the "
                "suite the runs ran"
            )
        record = manifest.conditions.get(condition)
        if record is None or record.mode is None:
            raise InputError(
                f"{run_dir}/manifest.json: field 'conditions' has no condition '{condition}' "
                "with a mode; confirm reruns runs made by evalkit run"
            )
        if record.mode not in ("none", "self-load", "preloaded"):
            raise InputError(
                f"{run_dir}/manifest.json: field 'conditions.{condition}.mode' is "
                f"{record.mode!r}: not a mode confirm can run"
            )
        variant = f"confirm-{name}"
        suite = _add_side(suite, run_dir, record, condition, variant)
        conditions[name] = Condition(
            mode=record.mode,
            variant=variant,
            description=f"{condition} of run {manifest.run_id}, its stored skill texts",
        )
    return suite.with_conditions(conditions)


def _add_side(
    suite: Suite, run_dir: Path, record: ConditionRecord, condition: str, variant: str
) -> Suite:
    if record.mode == "none":
        return suite
    if record.skill_hashes is None:
        raise InputError(
            f"{run_dir}/manifest.json: field 'conditions.{condition}.skill_hashes' is missing; "
            "the run recorded no skill texts: rerun it"
        )
    missing = sorted(set(suite.skills) - set(record.skill_hashes))
    extra = sorted(set(record.skill_hashes) - set(suite.skills))
    if missing or extra:
        raise InputError(
            f"{run_dir}/manifest.json: field 'conditions.{condition}.skill_hashes' names "
            f"skills {sorted(record.skill_hashes)} but suite '{suite.name}' has "
            f"{sorted(suite.skills)}; confirm with the suite the runs ran"
        )
    store = run_dir / SKILLS_DIR
    for skill, address in sorted(record.skill_hashes.items()):
        text = load_skill_text(store, address)
        own = suite.skills[skill]
        bootstrap = None
        if record.mode == "self-load" and record.bootstrap_hashes:
            bootstrap = load_skill_text(store, record.bootstrap_hashes[skill])
        description = (record.descriptions or {}).get(skill, own.description)
        files = VariantFiles(description, own.resources, own.resources_hash, bootstrap)
        suite = suite.with_variant(skill, variant, text, files)
    return suite


def _record(
    run_dir: str | os.PathLike[str],
    result: ConfirmResult,
    base_dir: Path,
    cand_dir: Path,
    base_cond: str,
    cand_cond: str,
) -> None:
    """Add the ``confirm`` record to the confirmation run's manifest."""
    manifest = _manifest(Path(run_dir))
    record = {
        "baseline": {"run": str(base_dir), "condition": base_cond},
        "candidate": {"run": str(cand_dir), "condition": cand_cond},
        "alpha": result.plan.alpha,
        "power": result.plan.power,
        "correction": "holm",
        "cases": {c.case_id: c.trials for c in result.plan.cases},
        "dropped": [c.case_id for c in result.plan.dropped],
    }
    if result.plan.allocation is not None:
        record["allocation"] = result.plan.allocation
    write_manifest(run_dir, manifest.model_copy(update={"confirm": record}))
