"""Deterministic scoring: patterns with negation context, anti-patterns, workflow, verifiers."""

__all__ = [
    "EvidenceResult",
    "infer_skill",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.scorers._artifacts import (
        ArtifactCheck as ArtifactCheck,
        FileCheck as FileCheck,
        check_requirement as check_requirement,
        safe_file as safe_file,
    )
    from evalkit.scorers._bundle import (
        BundleCheck as BundleCheck,
        ManifestEntry as ManifestEntry,
        check_bundle as check_bundle,
    )
    from evalkit.scorers._check import (
        check_case as check_case,
        check_references as check_references,
    )
    from evalkit.scorers._evidence import (
        EVIDENCE_SCORER_VERSION as EVIDENCE_SCORER_VERSION,
        EvidenceResult,
        check_evidence as check_evidence,
    )
    from evalkit.scorers._reference_cache import (
        REFERENCE_CACHE_DIR as REFERENCE_CACHE_DIR,
        ReferenceCache as ReferenceCache,
        reference_check_key as reference_check_key,
    )
    from evalkit.scorers._score import (
        COMPONENT_WEIGHTS as COMPONENT_WEIGHTS,
        SCORER_VERSION as SCORER_VERSION,
        Component as Component,
        ScoreResult as ScoreResult,
        infer_skill,
        score_item as score_item,
    )
    from evalkit.scorers._verifiers import (
        CheckResult as CheckResult,
        run_check as run_check,
    )
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
