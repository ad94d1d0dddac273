"""Evidence-lane scoring: each required artifact, the bundle manifest and the lane's metrics.

Components (rows of ``scores.parquet``):

- ``artifact:PATH``: 1 when the requirement validates; ``detail`` starts with its status
  (``validated``, ``missing`` or ``invalid``) followed by the reason.
- ``artifacts``: how many requirements validate, of how many (weighed in the score).
- ``bundle``: whether the manifest lists every artifact with a matching hash (weighed).
- ``evidence_completeness``: share of requirements met, the manifest counting as one.
- ``report_completeness``: share of the required sections present in the notes.
- ``taxonomy_usage``: share of the notes that use one of the suite's issue labels.

The last three are recorded, not weighed. A missing or invalid artifact and a failing manifest
are gates: an evidence item passes only when its verifier passes *and* its bundle validates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.cases import EVIDENCE_METRICS, Case
from evalkit.scorers._artifacts import ArtifactCheck, check_requirement, check_to_json
from evalkit.scorers._bundle import BundleCheck, check_bundle

__all__ = ["EVIDENCE_METRICS", "EVIDENCE_SCORER_VERSION", "EvidenceResult", "check_evidence"]

#: Bumped whenever evidence scoring changes an outcome; it enters evidence items' hashes.
EVIDENCE_SCORER_VERSION = "1"


@dataclass(frozen=True)
class EvidenceResult:
    """Everything the evidence checks found in one workspace.

    Attributes:
        checks: One outcome per required artifact, in case order.
        bundle: The manifest's outcome (None when the case has no bundle profile).
        metrics: ``evidence_completeness``, and ``report_completeness`` / ``taxonomy_usage``
            when the case asks for sections / issue labels.
    """

    checks: tuple[ArtifactCheck, ...]
    bundle: BundleCheck | None
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def files(self) -> list[str]:
        """Every artifact file found (valid or not), relative to the workspace, sorted."""
        names = {f.path for c in self.checks for f in c.files if f.reason != "missing"}
        if self.bundle is not None:
            names.add(self.bundle.manifest)
        return sorted(names)

    def to_json(self) -> dict[str, Any]:
        """The record stored as ``evidence.json`` beside an item's collected artifacts."""
        return {
            "requirements": [check_to_json(c) for c in self.checks],
            "bundle": None if self.bundle is None else self.bundle.to_json(),
            "metrics": dict(self.metrics),
        }


def check_evidence(case: Case, workspace: Path | None) -> EvidenceResult:
    """Run every artifact validator of a case and check its manifest.

    Args:
        case: The case (its ``artifacts_required`` and ``bundle``).
        workspace: The workspace after the agent ran.

    Returns:
        The checks and the lane's metrics.
    """
    checks = tuple(check_requirement(workspace, r) for r in case.artifact_requirements)
    bundle = None
    if case.bundle is not None:
        existing = [f.path for c in checks for f in c.files if f.reason != "missing"]
        bundle = check_bundle(workspace, case.bundle, existing)
    met = sum(c.status == "validated" for c in checks) + (bundle is not None and bundle.passed)
    total = len(checks) + (bundle is not None)
    metrics = {"evidence_completeness": met / total if total else 0.0}
    wanted = sum(len(c.requirement.sections) for c in checks)
    if wanted:
        metrics["report_completeness"] = sum(c.sections_found for c in checks) / wanted
    labelled = [c for c in checks if c.requirement.issue_labels]
    if labelled:
        metrics["taxonomy_usage"] = sum(bool(c.labels_used) for c in labelled) / len(labelled)
    return EvidenceResult(checks, bundle, metrics)
