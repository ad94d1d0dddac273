"""Deterministic scoring of one work item: patterns, anti-patterns, workflow, verifier."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalkit._workspace_paths import relative_to_workspace
from evalkit.cases import (
    NO_SKILL,
    AntiPatternRule,
    Case,
    compile_pattern,
    find_affirmed,
    first_match,
)
from evalkit.providers import AgentResponse
from evalkit.scorers._evidence import EVIDENCE_METRICS, EvidenceResult, check_evidence
from evalkit.scorers._verifiers import run_check

#: Bumped whenever scoring changes an outcome; it enters every item hash.
SCORER_VERSION = "2"

#: Weight of each component in the score (components absent from a case are skipped).
COMPONENT_WEIGHTS: dict[str, float] = {
    "expected_patterns": 4.0,
    "forbidden_patterns": 1.0,
    "anti_patterns": 1.0,
    "workflow": 1.0,
    "verifier": 4.0,
    "artifacts": 1.0,
    "bundle": 1.0,
    "skill_trigger": 0.0,
    **dict.fromkeys(EVIDENCE_METRICS, 0.0),
}
"""Expected patterns and the verifier dominate; ``skill_trigger`` is recorded, not weighed
(trigger accuracy is its own metric, and weighing it would penalise the ``none`` condition),
except in a routing case (:func:`is_routing_case`), where routing is the whole outcome.
The evidence metrics and the per-artifact ``artifact:PATH`` rows are recorded, not weighed."""


_SKILL_PATH = re.compile(r"skills/([A-Za-z0-9][A-Za-z0-9_.-]*)/SKILL\.md")


@dataclass(frozen=True)
class Component:
    """One scoring component of one item (a row of ``scores.parquet``).

    Attributes:
        component: Component name (``expected_patterns``, ``verifier``, ...).
        value: Points earned.
        max_value: Points possible.
        passed: Whether the component is satisfied.
        detail: What was missing or found.
    """

    component: str
    value: float
    max_value: float
    passed: bool
    detail: str = ""


@dataclass(frozen=True)
class ScoreResult:
    """The scored outcome of one item.

    Attributes:
        score: Weighted score in [0, 1].
        passed: Score at or above the threshold and no gate failed.
        inferred_skill: Skill the agent loaded according to its transcript, or ``none``.
        skill_loaded: Whether any skill was loaded.
        components: Every component, in a fixed order.
        gate_failures: Components that fail the item regardless of score.
        evidence: What the evidence checks found (evidence-lane cases), else None.
    """

    score: float
    passed: bool
    inferred_skill: str
    skill_loaded: bool
    components: tuple[Component, ...] = field(default_factory=tuple)
    gate_failures: tuple[str, ...] = ()
    evidence: EvidenceResult | None = None


def is_routing_case(case: Case) -> bool:
    """Whether routing alone decides ``case`` (a trigger or should-not-trigger query).

    A case with no scorer of its own (no patterns, anti-patterns, workflow checks, verifier or
    required artifacts) and nothing judged asks only whether the agent loaded the right skill,
    as skill-creator's trigger evaluation does: it passes exactly when the inferred skill is
    the expected one (``none`` for a should-not-trigger query), and its score is 1 or 0.

    Examples:
        >>> is_routing_case(Case(id="q", prompt="Write the release notes"))
        True
        >>> is_routing_case(Case(id="q", prompt="p", expected_patterns=("notes",)))
        False
    """
    return not (
        case.expected_patterns
        or case.forbidden_patterns
        or case.anti_patterns
        or case.workflow_checks
        or case.verifier
        or case.artifacts_required
        or case.is_judged
    )


def infer_skill(response: AgentResponse) -> str:
    """Which skill the agent loaded, judged from its tool calls.

    A ``load_skill`` tool call names the skill; a tool call reading ``skills/NAME/SKILL.md``
    (Claude Code, Codex) loads ``NAME``.

    Args:
        response: The agent's response.

    Returns:
        The first skill loaded, or ``none``.
    """
    for event in response.events:
        if event.kind != "tool_call":
            continue
        if event.name == "load_skill":
            name = event.content.strip().strip("\"'")
            return name or NO_SKILL
        match = _SKILL_PATH.search(event.content)
        if match:
            return match.group(1)
    return NO_SKILL


def _expected(patterns: Sequence[str], text: str) -> Component:
    missing = [p for p in patterns if compile_pattern(p).search(text) is None]
    found = len(patterns) - len(missing)
    detail = "missing: " + ", ".join(f"`{p}`" for p in missing) if missing else ""
    return Component("expected_patterns", found, len(patterns), not missing, detail)


def _quote(match: re.Match[str], text: str, context: int = 30) -> str:
    """The matched text with a little context on each side, on one line."""
    start, end = max(0, match.start() - context), min(len(text), match.end() + context)
    snippet = " ".join(text[start:end].split())
    return ("…" if start else "") + snippet + ("…" if end < len(text) else "")


def _forbidden(patterns: Sequence[str], text: str) -> Component:
    hits = [(p, m[0]) for p in patterns if (m := find_affirmed(p, text))]
    detail = (
        "recommended: " + "; ".join(f'`{p}` in "{_quote(m, text)}"' for p, m in hits)
        if hits
        else ""
    )
    return Component(
        "forbidden_patterns", len(patterns) - len(hits), len(patterns), not hits, detail
    )


def _anti(rules: Sequence[AntiPatternRule], text: str) -> tuple[Component, bool]:
    hits = [(r, m[0]) for r in rules if (m := find_affirmed(r.pattern, text))]
    errors = [r for r, _ in hits if r.severity == "error"]
    detail = "; ".join(f'{r.id} ({r.severity}) in "{_quote(m, text)}"' for r, m in hits)
    return Component("anti_patterns", len(rules) - len(hits), len(rules), not hits, detail), bool(
        errors
    )


def _workflow(case: Case, text: str) -> Component:
    positions = {c.id: first_match(c.pattern, text) for c in case.workflow_checks}
    failed = []
    for check in case.workflow_checks:
        pos = positions[check.id]
        if pos is None:
            failed.append(f"{check.id}: missing")
        elif check.after is not None:
            before = positions.get(check.after)
            if before is None or before > pos:
                failed.append(f"{check.id}: not after {check.after}")
    total = len(case.workflow_checks)
    return Component("workflow", total - len(failed), total, not failed, "; ".join(failed))


def _evidence_components(evidence: EvidenceResult) -> tuple[list[Component], list[str]]:
    """The evidence components and gates (see :mod:`evalkit.scorers._evidence`)."""
    out = [
        Component(
            f"artifact:{c.requirement.path}",
            float(c.status == "validated"),
            1.0,
            c.status == "validated",
            f"{c.status}: {c.reason}",
        )
        for c in evidence.checks
    ]
    failing = [c for c in evidence.checks if c.status != "validated"]
    out.append(
        Component(
            "artifacts",
            len(evidence.checks) - len(failing),
            len(evidence.checks),
            not failing,
            "; ".join(f"{c.requirement.path} {c.status}" for c in failing),
        )
    )
    gates = ["artifacts"] if failing else []
    if evidence.bundle is not None:
        b = evidence.bundle
        out.append(Component("bundle", float(b.passed), 1.0, b.passed, f"{b.manifest}: {b.reason}"))
        if not b.passed:
            gates.append("bundle")
    for name, value in evidence.metrics.items():
        out.append(Component(name, value, 1.0, value >= 1.0, f"{value:.0%}"))
    return out, gates


def score_item(
    case: Case,
    response: AgentResponse,
    workspace: Path | None,
    *,
    pass_threshold: float,
    suite_anti_patterns: Sequence[AntiPatternRule] = (),
) -> ScoreResult:
    """Score one work item deterministically.

    Args:
        case: The case.
        response: The agent's response (its transcript is what gets judged).
        workspace: The item's workspace after the agent ran (execution lanes).
        pass_threshold: Score needed to pass.
        suite_anti_patterns: Anti-pattern rules applied to every case of the suite.

    Returns:
        The score, the pass bit and every component. Gates that fail an item whatever its
        score: a failing verifier, a missing required artifact, an error-severity anti-pattern,
        and in a routing case (:func:`is_routing_case`) a wrong skill (``skill_trigger``).
    """
    text = response.scored_text()
    components: list[Component] = []
    gates: list[str] = []
    if case.expected_patterns:
        components.append(_expected(case.expected_patterns, text))
    if case.forbidden_patterns:
        components.append(_forbidden(case.forbidden_patterns, text))
    rules = tuple(suite_anti_patterns) + tuple(case.anti_patterns)
    if rules:
        anti, blocking = _anti(rules, text)
        components.append(anti)
        if blocking:
            gates.append("anti_patterns")
    if case.workflow_checks:
        components.append(_workflow(case, text))
    if case.verifier:
        if workspace is None:
            results = []
            verifier = Component("verifier", 0, len(case.verifier), False, "no workspace")
        else:
            results = [run_check(check, workspace) for check in case.verifier]
            failed = [f"{r.check}: {r.detail}" for r in results if not r.passed]
            verifier = Component(
                "verifier", len(results) - len(failed), len(results), not failed, "; ".join(failed)
            )
        components.append(verifier)
        if not verifier.passed:
            gates.append("verifier")
    evidence = None
    if case.artifacts_required:
        evidence = check_evidence(case, workspace)
        evidence_components, evidence_gates = _evidence_components(evidence)
        components += evidence_components
        gates += evidence_gates

    inferred = infer_skill(response)
    loaded = response.skill_loaded if response.skill_loaded is not None else inferred != NO_SKILL
    trigger_ok = inferred == case.expected_skill
    components.append(
        Component(
            "skill_trigger",
            float(trigger_ok),
            1.0,
            trigger_ok,
            f"expected {case.expected_skill}, inferred {inferred}",
        )
    )

    weights = dict(COMPONENT_WEIGHTS)
    if is_routing_case(case):
        weights["skill_trigger"] = 1.0
        if not trigger_ok:
            gates.append("skill_trigger")
    weighted = [
        (weights.get(c.component, 0.0), c.value / c.max_value)
        for c in components
        if c.max_value > 0 and weights.get(c.component, 0.0) > 0
    ]
    total_weight = sum(w for w, _ in weighted)
    score = sum(w * v for w, v in weighted) / total_weight if total_weight else 0.0
    threshold = case.pass_threshold if case.pass_threshold is not None else pass_threshold
    passed = score >= threshold and not gates
    # a detail names files as the workspace holds them, not where the run kept it
    components = [
        dataclasses.replace(c, detail=relative_to_workspace(c.detail, workspace))
        for c in components
    ]
    return ScoreResult(
        score=float(score),
        passed=bool(passed),
        inferred_skill=inferred,
        skill_loaded=bool(loaded),
        components=tuple(components),
        gate_failures=tuple(gates),
        evidence=evidence,
    )
