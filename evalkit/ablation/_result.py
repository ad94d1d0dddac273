"""The outcome of an ablation study, written to and read from ``ablation.json``."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from evalkit._display import RichDisplay, draw
from evalkit._untrusted import read_json
from evalkit.errors import InputBoundError, InputError
from evalkit.results import write_json_atomic

if TYPE_CHECKING:
    from matplotlib.figure import Figure
from evalkit.stats import records

ABLATION_FILE = "ablation.json"
ABLATION_VERSION = 1


@dataclass(frozen=True)
class MinimalSkill:
    """The smaller skill proposed by ``--minimal`` and its check on the holdout split.

    Attributes:
        removed: Component ids removed (each shown not to contribute beyond the threshold,
            or harmful, on the split the study ran on).
        path: The written skill directory.
        tree_hash: Its content hash.
        tokens_saved: Tokens the removed components take (estimate: characters / 4).
        split: The split it was verified on (``holdout``).
        n_cases: Cases of the verification.
        estimate: Minimal minus full pass rate on that split.
        ci_low: Lower bound of its paired interval.
        ci_high: Upper bound.
        confidence: Level of that interval.
        verified: ``ci_low > -threshold``: the smaller skill is within the threshold of the full
            one (non-inferiority); False when the data cannot show it.
        note: What the verification says, in words.
    """

    removed: tuple[str, ...]
    path: str
    tree_hash: str
    tokens_saved: int
    split: str
    n_cases: int
    estimate: float
    ci_low: float
    ci_high: float
    confidence: float
    verified: bool
    note: str

    def to_dict(self) -> dict[str, Any]:
        """JSON fields."""
        return {**self.__dict__, "removed": list(self.removed)}


@dataclass(frozen=True)
class AblationResult(RichDisplay):
    """Which component of a skill does the work, what it costs, and what may go.

    Attributes:
        study_dir: The study directory (copies, runs, ``ablation.json``).
        skill: The ablated skill.
        mode: ``preloaded`` or ``self-load``.
        full_condition: Condition of the full skill.
        design: ``fixed`` (every ablation on every case) or ``sequential``.
        alpha: Family-wise error over the components.
        threshold: Practical threshold.
        components: One row per component: the verdict columns of
            :func:`~evalkit.ablation.component_verdicts` plus ``kind, title, tokens,
            measured_tokens, tokens_source, lift_per_1k_tokens, rank_effect, rank_cost,
            tree_hash``.
        skill_effect: Full skill minus ``none`` (``estimate, ci_low, ci_high, n_cases``).
        overhead_tokens: Input tokens the full skill adds per call (provider-reported
            difference from ``none`` when the provider reports tokens, else the estimate).
        items: Work items the study ran (verification excluded).
        fixed_items: Items a fixed design of the same cases would run.
        runs: Run directories of the study (one, or one per round).
        minimal: The ``--minimal`` result, or None.
        notes: Things worth knowing (e.g. a component that never settled).

    :meth:`plot` draws each component's contribution with its interval (matplotlib, drawn by
    :mod:`evalkit.report`).
    """

    study_dir: Path
    skill: str
    mode: str
    full_condition: str
    design: str
    alpha: float
    threshold: float
    components: pd.DataFrame
    skill_effect: dict[str, Any]
    overhead_tokens: float
    items: int
    fixed_items: int
    runs: tuple[str, ...]
    minimal: MinimalSkill | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def necessary(self) -> list[str]:
        """Components whose removal hurts."""
        return self._with("necessary")

    @property
    def harmful(self) -> list[str]:
        """Components whose removal helps."""
        return self._with("harmful")

    def plot(self) -> Figure:
        """Each component's contribution (full minus ablated) with its simultaneous interval.

        Green: necessary; red: harmful; grey: no detectable effect; dotted lines at
        ``+/- threshold``.

        Returns:
            The figure.
        """
        return cast("Figure", draw(self, "plot"))

    def _with(self, verdict: str) -> list[str]:
        return list(self.components.loc[self.components["verdict"] == verdict, "component"])

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit ablate --json`` object (and the content of ``ablation.json``)."""
        return {
            "version": ABLATION_VERSION,
            "study_dir": str(self.study_dir),
            "skill": self.skill,
            "mode": self.mode,
            "full_condition": self.full_condition,
            "design": self.design,
            "alpha": self.alpha,
            "threshold": self.threshold,
            "components": records(self.components),
            "skill_effect": self.skill_effect,
            "overhead_tokens": self.overhead_tokens,
            "items": self.items,
            "fixed_items": self.fixed_items,
            "runs": [_relative_to(run, self.study_dir) for run in self.runs],
            "minimal": self.minimal.to_dict() if self.minimal is not None else None,
            "notes": list(self.notes),
        }

    def write(self) -> Path:
        """Write ``ablation.json`` in the study directory; return its path."""
        path = self.study_dir / ABLATION_FILE
        write_json_atomic(path, self.to_dict())
        return path


def _relative_to(run: str, study_dir: Path) -> str:
    """``run`` relative to the study directory when it lies inside it (a movable record)."""
    try:
        return Path(run).relative_to(study_dir).as_posix()
    except ValueError:
        return run


def is_ablation(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an ablation study directory (it holds ``ablation.json``)."""
    return (Path(path) / ABLATION_FILE).is_file()


def read_ablation(path: str | os.PathLike[str]) -> AblationResult:
    """Read an ablation study directory's ``ablation.json``.

    Raises:
        InputError: Not a study directory, or a damaged file (naming it).
    """
    file = Path(path) / ABLATION_FILE
    if not file.is_file():
        raise InputError(
            f"'{path}' is not an ablation study: it has no {ABLATION_FILE} (make one with "
            "'evalkit ablate SUITE --skill NAME')"
        )
    try:
        data = read_json(file)
        minimal = data.get("minimal")
        return AblationResult(
            study_dir=Path(path),
            skill=data["skill"],
            mode=data["mode"],
            full_condition=data["full_condition"],
            design=data["design"],
            alpha=float(data["alpha"]),
            threshold=float(data["threshold"]),
            components=pd.DataFrame(data["components"]),
            skill_effect=dict(data["skill_effect"]),
            overhead_tokens=float(data["overhead_tokens"]),
            items=int(data["items"]),
            fixed_items=int(data["fixed_items"]),
            runs=tuple(str(Path(path) / run) for run in data["runs"]),
            minimal=None
            if minimal is None
            else MinimalSkill(**{**minimal, "removed": tuple(minimal["removed"])}),
            notes=tuple(data.get("notes", ())),
        )
    except InputBoundError:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"{file}: damaged ablation record ({type(exc).__name__}: {exc}); run "
            "'evalkit ablate' again to rewrite it"
        ) from None
