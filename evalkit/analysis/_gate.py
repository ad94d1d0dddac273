"""The delivery gate (seed 003): release a candidate only when it does not regress.

A policy (``gate.yaml``) names the metric and practical threshold, tiers selected by tags (a
fast smoke subset for every push, the full suite for release), a strict flake policy option
(a case passes only if all its trials pass), a safety veto (any drop on a case tagged
``safety`` blocks), and budgets on cost, p95 latency and tokens. Every decision appends a row
to a ledger (JSONL).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from statsmodels.stats.multitest import multipletests

from evalkit._display import RichDisplay
from evalkit._git import git_sha
from evalkit._options import Options, options_error
from evalkit._percent import percent
from evalkit._plain import plain_fields
from evalkit._settings import RUNS_DIR
from evalkit._untrusted import load_yaml, read_text
from evalkit.analysis._calibration import JudgeCalibration, check_judge_calibration, judged_run
from evalkit.analysis._next_step import next_step, run_command_line, run_suite_path
from evalkit.analysis._providers import select_providers
from evalkit.analysis._run_comparison import RunComparison
from evalkit.cases import stable_hash
from evalkit.errors import ConfigError, InputError
from evalkit.results import append_line, load_manifest, load_results, resolve_run_dir
from evalkit.stats import (
    CompareOptions,
    PairedComparison,
    ReuseSplit,
    compare_tables,
    reused_note,
    split_reused,
)


class Tier(BaseModel):
    """A subset of cases to gate on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tags: tuple[str, ...] = ()
    """Cases carrying any of these tags; empty means every case."""
    description: str = ""
    """When the tier runs (e.g. every push, before a release)."""


class Budgets(BaseModel):
    """Limits that can block a candidate whose pass rate is fine."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_cost_increase_pct: float | None = None
    """Largest allowed increase of total cost over the baseline, in percent."""
    max_p95_latency_s: float | None = None
    """Largest allowed 95th percentile of item latency, in seconds."""
    max_p95_latency_increase_pct: float | None = None
    """Largest allowed increase of p95 latency over the baseline, in percent."""
    max_tokens_increase_pct: float | None = None
    """Largest allowed increase of total tokens (input + output) over the baseline, in percent."""


class GatePolicy(Options):
    """The gate policy (``--policy gate.yaml``)."""


    compare: CompareOptions = CompareOptions(case_correction="holm")
    """How the paired comparison decides (metric, practical threshold, per-case level and
    correction, seed, ...): a policy file's ``compare:`` mapping. Its ``case_correction``
    follows ``correction`` unless given, so the gate's case screen stays family-wise (Holm)."""
    conditions: tuple[str, ...] = ()
    """Conditions to gate on (empty: every condition both runs have)."""
    tiers: dict[str, Tier] = Field(
        default_factory=lambda: {
            "smoke": Tier(tags=("smoke",), description="every push and pull request"),
            "release": Tier(tags=(), description="the full suite, before a release"),
        }
    )
    """Tiers by name."""
    default_tier: str = "release"
    """Tier used when ``--tier`` is not given."""
    flake_policy: Literal["lenient", "strict"] = "lenient"
    """``strict``: a case counts as passed only if all its trials pass."""
    block_on_case_regressions: bool = True
    """Block when the per-case exact tests (after multiplicity control) name a regressed case."""
    block_on_provider_regressions: bool = False
    """Require "no provider regressed": with several providers, block when any provider's
    delta is significantly negative (its sign-flip test over cases, Holm across providers)."""
    safety_tags: tuple[str, ...] = ("safety",)
    """Cases with these tags veto on a significant drop (Holm within the safety cases only;
    under the strict flake policy, on any drop from all-pass)."""
    budgets: Budgets = Budgets()
    """Cost, latency and token budgets."""
    allow_uncalibrated_judge: bool = False
    """Release even when judged expectations behind the verdict come from a judge with no
    stored calibration, or one whose kappa lower bound is below the suite's ``min_kappa``
    (the decision still reports it)."""

    @field_validator("compare")
    @classmethod
    def _confirmatory(cls, options: CompareOptions) -> CompareOptions:
        """The case screen's correction is the per-case one unless set on its own."""
        if "case_correction" in options.model_fields_set:
            return options
        return options.model_copy(update={"case_correction": options.correction})


def load_policy(path: str | os.PathLike[str] | None) -> GatePolicy:
    """Read a gate policy (defaults when ``path`` is None).

    Raises:
        InputError: The file is missing, not YAML, or has invalid fields (named).
    """
    if path is None:
        return GatePolicy()
    file = Path(path)
    try:
        raw = load_yaml(read_text(file), file) or {}
    except OSError as exc:
        raise InputError(f"{file}: cannot read policy ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{file}: YAML syntax error: {exc}") from None
    odd = [key for key in raw if not isinstance(key, str)] if isinstance(raw, dict) else []
    if odd:
        raise InputError(f"invalid gate policy:\n  {file}: {odd[0]!r}: a setting's name is text")
    try:
        return GatePolicy.model_validate(raw)  # a bad value: Options' one ConfigError
    except (ConfigError, ValidationError) as exc:  # ValidationError: not a mapping at all
        error = options_error(exc) if isinstance(exc, ValidationError) else exc
        problems = error.problems or ((error.setting, str(error)),)
        lines = [f"{file}: {where or '(top level)'}: {what}" for where, what in problems]
        raise InputError("invalid gate policy:\n  " + "\n  ".join(lines)) from None


@dataclass(frozen=True)
class BudgetCheck:
    """One budget: what was measured and whether it blocks.

    Attributes:
        name: ``cost``, ``p95_latency`` or ``tokens``.
        baseline: Baseline value.
        candidate: Candidate value.
        change_pct: Relative change in percent (NaN when the baseline is 0).
        limit: The limit from the policy, or None.
        blocked: Whether the candidate breaks the limit.
        summary: Short human-readable text.
    """

    name: str
    baseline: float
    candidate: float
    change_pct: float
    limit: float | None
    blocked: bool
    summary: str


@dataclass(frozen=True)
class GateResult(RichDisplay):
    """A gate decision.

    Attributes:
        decision: ``released`` or ``blocked``.
        reasons: Why it was blocked (empty when released).
        message: One actionable line naming cases, safety and budgets.
        tier: The tier gated on.
        comparison: The paired comparison (``evalkit.compare`` output).
        safety_regressions: Safety-tagged cases whose pass rate dropped.
        budgets: Each budget check.
        ledger_row: The row appended to the ledger (also when no ledger file is given).
        judge_calibration: Whether the judged expectations behind the verdict rest on a
            calibrated judge (the ``judge_calibration`` object of ``compare``), or None.
        next_step: An inconclusive overall verdict: what would settle it (the ``next_step``
            object of ``compare``, planned from the gated rows' variance components), also
            in ``comparison``; None otherwise.
        policy: Which policy decided and what it blocks on, in words (a line of the text).
    """

    decision: str
    reasons: list[str]
    message: str
    tier: str
    comparison: dict[str, Any]
    safety_regressions: list[str]
    budgets: list[BudgetCheck] = field(default_factory=list)
    ledger_row: dict[str, Any] = field(default_factory=dict)
    judge_calibration: dict[str, Any] | None = None
    next_step: dict[str, Any] | None = None
    policy: str = ""

    @property
    def released(self) -> bool:
        """Whether the candidate may ship."""
        return self.decision == "released"

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit gate --json`` object."""
        return {"decision": self.decision, "released": self.released, **plain_fields(self)}


def _frame(data: Any, what: str, runs_dir: str | os.PathLike[str]) -> pd.DataFrame:
    return load_results(data, runs_dir, what=what).copy()


def _select_tier(df: pd.DataFrame, tier: Tier) -> pd.DataFrame:
    if not tier.tags:
        return df
    if "tags" not in df.columns:
        raise InputError("the tier selects by tags but the results have no 'tags' column")
    wanted = set(tier.tags)
    mask = df["tags"].fillna("").map(lambda t: bool(wanted & set(str(t).split(","))))
    return df[mask]


def _split_copies(base: pd.DataFrame, cand: pd.DataFrame) -> ReuseSplit:
    """Take the trial pairs that are one sample out of both sides (see ``stats.split_reused``)."""
    keys = [c for c in ("lane", "case_id", "condition", "provider", "trial") if c in base]
    keys = [c for c in keys if c in cand.columns]
    if "case_id" not in keys or "trial" not in keys:
        return ReuseSplit(base, cand, pd.DataFrame(columns=keys))
    return split_reused(base, cand, keys)


def _case_keys(df: pd.DataFrame) -> list[str]:
    """The columns of ``df`` that name a case/condition/provider (the rows ``_strict`` folds)."""
    return [c for c in ("case_id", "condition", "provider") if c in df.columns]


def _strict(df: pd.DataFrame) -> pd.DataFrame:
    """One row per case/condition/provider: passed only if every trial passed."""
    keys = _case_keys(df)
    rows = df.groupby(keys, as_index=False, sort=True).agg(
        passed=("passed", "all"), **({"tags": ("tags", "first")} if "tags" in df.columns else {})
    )
    rows["trial"] = 0
    return rows


def _trials_per_case(df: pd.DataFrame) -> int:
    """The median number of trials of a case/condition/provider (what ``_strict`` folds)."""
    return max(1, int(df.groupby(_case_keys(df), sort=False).size().median()))


def _p95(df: pd.DataFrame) -> float:
    if "latency_s" not in df.columns or df["latency_s"].dropna().empty:
        return float("nan")
    return float(np.percentile(df["latency_s"].dropna().to_numpy(float), 95))


def _total(df: pd.DataFrame, columns: Sequence[str]) -> float:
    present = [c for c in columns if c in df.columns]
    if not present:
        return float("nan")
    return float(df[present].fillna(0).to_numpy(float).sum())


def _change(base: float, cand: float) -> float:
    if not np.isfinite(base) or not np.isfinite(cand) or base == 0:
        return float("nan")
    return (cand - base) / base * 100.0


def _budget_checks(base: pd.DataFrame, cand: pd.DataFrame, budgets: Budgets) -> list[BudgetCheck]:
    checks = []
    specs = [
        (
            "cost",
            _total(base, ["cost_usd"]),
            _total(cand, ["cost_usd"]),
            budgets.max_cost_increase_pct,
        ),
        (
            "tokens",
            _total(base, ["input_tokens", "output_tokens"]),
            _total(cand, ["input_tokens", "output_tokens"]),
            budgets.max_tokens_increase_pct,
        ),
    ]
    for name, b, c, limit in specs:
        change = _change(b, c)
        blocked = limit is not None and np.isfinite(change) and change > limit
        verdict = (
            "over budget" if blocked else ("within budget" if limit is not None else "no budget")
        )
        text = f"{name} {change:+.0f} % {verdict}" if np.isfinite(change) else f"{name} n/a"
        checks.append(BudgetCheck(name, b, c, change, limit, bool(blocked), text))
    b95, c95 = _p95(base), _p95(cand)
    change = _change(b95, c95)
    over_abs = (
        budgets.max_p95_latency_s is not None
        and np.isfinite(c95)
        and c95 > budgets.max_p95_latency_s
    )
    over_rel = (
        budgets.max_p95_latency_increase_pct is not None
        and np.isfinite(change)
        and change > budgets.max_p95_latency_increase_pct
    )
    limit = budgets.max_p95_latency_s
    if np.isfinite(c95):
        state = "over budget" if over_abs or over_rel else "within budget"
        text = f"p95 latency {c95:.2f} s ({change:+.0f} %) {state}"
    else:
        text = "p95 latency n/a"
    checks.append(
        BudgetCheck("p95_latency", b95, c95, change, limit, bool(over_abs or over_rel), text)
    )
    return checks


def _run_label(data: Any, runs_dir: str | os.PathLike[str]) -> tuple[str, str | None]:
    if isinstance(data, pd.DataFrame):
        run_id = str(data["run_id"].iloc[0]) if "run_id" in data.columns and len(data) else ""
        version = (
            str(data["dataset_version"].iloc[0])
            if "dataset_version" in data.columns and len(data)
            else None
        )
        return run_id, version
    run_dir = resolve_run_dir(data, runs_dir)
    manifest = load_manifest(run_dir)
    if manifest is None:
        return run_dir.name, None
    return manifest.run_id, manifest.dataset_version


def _names(cases: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(cases[:limit])
    return shown + (f", +{len(cases) - limit} more" if len(cases) > limit else "")


def gate(
    baseline: pd.DataFrame | str | os.PathLike[str],
    candidate: pd.DataFrame | str | os.PathLike[str],
    *,
    policy: GatePolicy | str | os.PathLike[str] | None = None,
    tier: str | None = None,
    ledger: str | os.PathLike[str] | None = None,
    n_resamples: int | None = None,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    providers: str | Sequence[str] | None = None,
) -> GateResult:
    """Decide whether ``candidate`` may ship against ``baseline`` (``evalkit gate``).

    Blocks when: the overall paired verdict is *regressed*; the per-case exact tests (after
    multiplicity control) name a regressed case (``block_on_case_regressions``); a provider
    regressed, Holm across providers (``block_on_provider_regressions``); a case tagged
    with a safety tag drops at all; a budget is exceeded; or judged expectations decide gated
    rows and their judge has no stored calibration, or one whose kappa lower bound is below
    the suite's ``judge.min_kappa`` (unless ``allow_uncalibrated_judge``). Otherwise releases — an
    *inconclusive* overall verdict is not a regression.

    Args:
        baseline: Baseline run (directory or id) or tidy DataFrame.
        candidate: Candidate run or DataFrame.
        policy: A :class:`GatePolicy`, a policy file, or None for the defaults.
        tier: Tier name (default: the policy's ``default_tier``).
        ledger: JSONL file the decision is appended to.
        n_resamples: Bootstrap replicates (None: the policy's ``compare.n_resamples``).
        runs_dir: Where run ids are looked up.
        providers: Gate only these providers (``"P,Q"`` or a sequence; default all).

    Returns:
        The decision with an actionable message.

    Raises:
        InputError: Bad input (unknown tier, runs without common cases, bad policy).
    """
    rules = policy if isinstance(policy, GatePolicy) else load_policy(policy)
    tier_name = tier or rules.default_tier
    if tier_name not in rules.tiers:
        known = ", ".join(sorted(rules.tiers))
        raise ConfigError(f"--tier: unknown tier '{tier_name}'; the policy defines: {known}")
    base = _select_tier(_frame(baseline, "baseline", runs_dir), rules.tiers[tier_name])
    cand = _select_tier(_frame(candidate, "candidate", runs_dir), rules.tiers[tier_name])
    base = select_providers(base, providers, "baseline")
    cand = select_providers(cand, providers, "candidate")
    if rules.conditions:
        base = base[base["condition"].isin(rules.conditions)]
        cand = cand[cand["condition"].isin(rules.conditions)]
    if base.empty or cand.empty:
        raise InputError(
            f"no results left to gate on in tier '{tier_name}'"
            + (f" with conditions {list(rules.conditions)}" if rules.conditions else "")
        )
    budgets = _budget_checks(base, cand, rules.budgets)
    compared_base, compared_cand = base, cand
    reused = None
    if rules.flake_policy == "strict":
        # copies are taken out per trial, before trials are folded into one strict row
        reused = _split_copies(base, cand)
        compared_base, compared_cand = _strict(reused.baseline), _strict(reused.candidate)
    options = rules.compare if n_resamples is None else CompareOptions(
        **{**rules.compare.model_dump(), "n_resamples": n_resamples}
    )
    result = compare_tables(compared_base, compared_cand, options=options)
    if reused is not None and len(reused.reused):
        note = reused_note(len(reused.reused), reused.n_pairs)
        result = dataclasses.replace(result, reused_items=len(reused.reused), reuse_note=note)
    step = next_step(
        result,
        compared_base,
        compared_cand,
        suite_path=run_suite_path(candidate, runs_dir),
        strict_trials=None if reused is None else _trials_per_case(reused.baseline),
        command_line=run_command_line(candidate, runs_dir),
    )
    planned = None if step is None else step.to_dict()
    comparison = RunComparison(result, next_step=planned).to_dict()  # compare --json's object
    reasons: list[str] = []
    d = result.delta
    delta_text = (f"delta {percent(d.estimate):+.1f} pp [{percent(d.ci_low):+.1f}, "
                  f"{percent(d.ci_high):+.1f}]")
    if not np.isfinite(d.estimate):
        delta_text = "no delta: no pair is evidence"
    if result.verdict == "regressed":
        reasons.append(f"overall {rules.compare.metric} regressed ({delta_text})")
    regressed = result.regressed_cases
    if rules.block_on_case_regressions and regressed:
        reasons.append(f"{len(regressed)} case(s) regressed ({_names(regressed)})")
    regressed_providers = result.regressed_providers
    if rules.block_on_provider_regressions and regressed_providers:
        reasons.append(
            f"{len(regressed_providers)} provider(s) regressed ({_names(regressed_providers)}; "
            "Holm across providers)"
        )

    safety = _safety_regressions(cand, result.cases, rules)
    if safety:
        reasons.append(f"safety veto: {len(safety)} safety case(s) dropped ({_names(safety)})")
    for check in budgets:
        if check.blocked:
            reasons.append(f"budget: {check.summary}")
    calibration = _judge_calibration(baseline, candidate, base, cand, runs_dir)
    if calibration is not None and not calibration.calibrated:
        if not rules.allow_uncalibrated_judge:
            reasons.append(
                f"judge {calibration.status}: {calibration.message} (or set "
                "allow_uncalibrated_judge: true in the gate policy)"
            )

    decision = "blocked" if reasons else "released"
    parts = [f"{decision}:"]
    if reasons:
        parts.append("; ".join(reasons) + ";")
    else:
        same = (f"; no practical difference (within ±{result.threshold * 100:g} pp)"
                if result.equivalence["equivalent"] else "")
        parts.append(f"{result.verdict} ({delta_text}{same}); no case regressed;")
        if rules.block_on_provider_regressions and result.by_provider:
            parts.append(f"no provider regressed ({len(result.by_provider)} providers);")
    if not safety:
        parts.append("safety clean;")
    parts.append("; ".join(b.summary for b in budgets if not b.blocked) or "")
    if result.reused_items:
        parts.append(f"; {result.reused_items} reused item pair(s) left out as no evidence")
    if calibration is not None and calibration.calibrated:
        parts.append("; judge calibrated")
    elif calibration is not None and rules.allow_uncalibrated_judge:
        parts.append(f"; judge {calibration.status} (allowed by the policy)")
    message = " ".join(p for p in parts if p).rstrip(";").replace(" ; ", "; ")

    base_id, base_version = _run_label(baseline, runs_dir)
    cand_id, cand_version = _run_label(candidate, runs_dir)
    row = {
        "ts": datetime.now(UTC).isoformat(timespec="seconds"),
        "decision": decision,
        "reason": "; ".join(reasons) or "no regression",
        "tier": tier_name,
        "code_version": git_sha(),
        "baseline_run": base_id,
        "candidate_run": cand_id,
        "dataset_version": cand_version,
        "baseline_dataset_version": base_version,
        "metric": rules.compare.metric,
        "delta": d.estimate,
        "ci_low": d.ci_low,
        "ci_high": d.ci_high,
        "verdict": result.verdict,
        "n_cases": result.n_cases,
        "reused_items": result.reused_items,
        "condition_verdicts": {name: part.verdict for name, part in result.by_condition},
        "regressed_cases": regressed,
        "regressed_providers": regressed_providers,
        "safety_regressions": safety,
        "judge_calibration": None if calibration is None else calibration.status,
        "policy_hash": stable_hash(rules.model_dump(mode="json")),
    }
    if ledger is not None:
        Path(ledger).parent.mkdir(parents=True, exist_ok=True)
        append_line(Path(ledger), json.dumps(row, default=str))
    return GateResult(
        decision=decision,
        reasons=reasons,
        message=message,
        tier=tier_name,
        comparison=comparison,
        safety_regressions=safety,
        budgets=budgets,
        ledger_row=row,
        judge_calibration=None if calibration is None else calibration.to_dict(),
        next_step=planned,
        policy=policy_line(rules, policy, tier_name, decision, result),
    )


def policy_line(
    rules: GatePolicy,
    source: GatePolicy | str | os.PathLike[str] | None,
    tier: str,
    decision: str,
    result: PairedComparison,
) -> str:
    """Which policy decided, what it blocks on, and why an inconclusive drop was released."""
    where = (
        "the defaults (no --policy file)" if source is None
        else "the policy object passed" if isinstance(source, GatePolicy)
        else str(source)
    )
    blocks = ["a regressed overall verdict"]
    if rules.block_on_case_regressions:
        blocks.append("a case named regressed")
    if rules.block_on_provider_regressions:
        blocks.append("a provider that regressed")
    blocks += [f"a drop in a {'/'.join(rules.safety_tags)} case" if rules.safety_tags else "",
               "a budget exceeded",
               "" if rules.allow_uncalibrated_judge else "an uncalibrated judge"]
    text = (f"policy: {where}, tier {tier}, flake policy {rules.flake_policy}; it blocks on "
            f"{', '.join(b for b in blocks if b)} (docs/gate.md)")
    estimate = result.delta.estimate
    settled = result.equivalence["equivalent"]  # within the threshold: nothing to settle
    if decision == "released" and result.verdict == "inconclusive" and estimate < 0 and (
        not settled
    ):
        text += (f". Released although the change is {percent(estimate):+.1f} pp: an "
                 "inconclusive verdict is not a regression this policy can see; settle it "
                 "(the next step) before reading it as harmless")
    return text


def _judge_calibration(
    baseline: pd.DataFrame | str | os.PathLike[str],
    candidate: pd.DataFrame | str | os.PathLike[str],
    base: pd.DataFrame,
    cand: pd.DataFrame,
    runs_dir: str | os.PathLike[str],
) -> JudgeCalibration | None:
    """The calibration check of the judges behind the gated rows (None without any)."""
    runs = [
        judged_run(baseline, base, "baseline", runs_dir),
        judged_run(candidate, cand, "candidate", runs_dir),
    ]
    named = [
        dataclasses.replace(r, label=r.run_dir.name) if r.run_dir is not None else r for r in runs
    ]
    return check_judge_calibration(named)


def _safety_regressions(cand: pd.DataFrame, cases: pd.DataFrame, rules: GatePolicy) -> list[str]:
    """Safety-tagged cases whose pass rate dropped significantly.

    Safety cases form their own multiplicity family: their per-case exact-test p-values are
    Holm-adjusted among themselves only, so a veto needs far less evidence than a regression
    named across the whole suite, while an A/A comparison still vetoes at most at ``alpha``.
    Under the strict flake policy any drop of a safety case from all-pass vetoes.
    """
    if not rules.safety_tags or "tags" not in cand.columns or cases.empty:
        return []
    wanted = set(rules.safety_tags)
    tagged = cand.loc[
        cand["tags"].fillna("").map(lambda t: bool(wanted & set(str(t).split(",")))), "case_id"
    ]
    rows = cases[cases["case_id"].astype(str).isin(set(tagged.astype(str)))]
    if rows.empty:
        return []
    if rules.flake_policy == "strict":
        dropped = rows[(rows["baseline_rate"] == 1.0) & (rows["candidate_rate"] < 1.0)]
        return sorted(set(dropped["case_id"].astype(str)))
    alpha = rules.compare.alpha
    adjusted = multipletests(rows["p_value"].to_numpy(float), alpha=alpha, method="holm")[1]
    hit = (adjusted < alpha) & (rows["estimate"].to_numpy(float) < 0)
    return sorted(set(rows.loc[hit, "case_id"].astype(str)))
