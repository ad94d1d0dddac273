"""A loaded suite: resolved skills, conditions, cases and their content hashes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from evalkit._paths import is_inside
from evalkit.cases._hashing import stable_hash
from evalkit.cases._models import NO_SKILL, Case, Condition, SuiteFile
from evalkit.errors import ConfigError


@dataclass(frozen=True)
class SkillTexts:
    """A skill's texts by variant, read from disk.

    Attributes:
        name: Skill name.
        description: One-line trigger description (shown under self-load).
        texts: Text of each variant: always ``canonical`` and ``bootstrap``, plus suite variants.
        resources: The skill's directory of files (``scripts/``, ``references/``...), if any.
        resources_hash: Content hash of those files (their ``SKILL.md`` left out).
        variant_files: Variants shipped with their own directory of files and description
            (an ablated copy of the skill): variant name to :class:`VariantFiles`.
    """

    name: str
    description: str
    texts: dict[str, str]
    resources: Path | None = None
    resources_hash: str = ""
    variant_files: dict[str, VariantFiles] = field(default_factory=dict)


@dataclass(frozen=True)
class VariantFiles:
    """What a variant ships besides its text, when it differs from the skill's own.

    Attributes:
        description: The trigger description under this variant.
        resources: Its directory of files (``None``: text only).
        resources_hash: Content hash of those files (their ``SKILL.md`` left out).
        bootstrap: What self-load shows before the skill is loaded under this variant (None:
            the skill's own bootstrap), e.g. the stored bootstrap of an earlier run.
    """

    description: str
    resources: Path | None = None
    resources_hash: str = ""
    bootstrap: str | None = None


@dataclass(frozen=True)
class SkillExposure:
    """What one condition exposes of one skill to the agent for one case.

    Attributes:
        name: Skill name.
        description: Trigger description.
        mode: ``self-load`` (discoverable) or ``preloaded`` (injected).
        text: The skill text injected, or loaded when the agent decides to load it.
        bootstrap: What the agent discovers before loading (self-load only).
        resources: The skill's directory of files, shipped with it (``None``: text only).
        resources_hash: Content hash of those files.
    """

    name: str
    description: str
    mode: str
    text: str
    bootstrap: str = ""
    resources: Path | None = None
    resources_hash: str = ""

    def resource_files(self) -> list[str]:
        """Relative paths (POSIX) of the skill's files besides ``SKILL.md``, sorted."""
        if self.resources is None:
            return []
        return sorted(
            p.relative_to(self.resources).as_posix()
            for p in self.resources.rglob("*")
            if p.is_file() and p.relative_to(self.resources).as_posix() != "SKILL.md"
        )

    def read_resource(self, relative: str, limit: int = 100_000) -> str | None:
        """The text of one of the skill's files (None when it is not one, or not text).

        Args:
            relative: A path from :meth:`resource_files`.
            limit: Characters returned at most.
        """
        if self.resources is None or relative == "SKILL.md":
            return None
        if Path(relative).is_absolute() or not is_inside(relative, self.resources):
            return None  # ``../x``, absolute paths and links out of the skill directory
        path = self.resources / relative
        if not path.is_file():
            return None
        try:
            return path.read_text(encoding="utf-8")[:limit]
        except (OSError, UnicodeDecodeError):
            return None


@dataclass(frozen=True)
class Suite:
    """A validated suite, ready to plan runs from.

    Attributes:
        name: Suite name.
        root: Suite directory.
        spec: The parsed ``suite.yaml``.
        skills: Skill texts by name.
        conditions: Every defined condition (standard ones plus suite ones).
        cases: Cases sorted by id.
        case_files: Relative path of the file each case came from.
        case_hashes: Content hash of each case (its fields plus its fixture tree).
        dataset_version: Hash of every case's content.
        case_lines: 1-based line where each case starts in its file.
    """

    name: str
    root: Path
    spec: SuiteFile
    skills: dict[str, SkillTexts]
    conditions: dict[str, Condition]
    cases: tuple[Case, ...]
    case_files: dict[str, str] = field(default_factory=dict)
    case_hashes: dict[str, str] = field(default_factory=dict)
    dataset_version: str = ""
    case_lines: dict[str, int] = field(default_factory=dict)

    def location(self, case: Case) -> str:
        """Where ``case`` is written, as ``file:line`` (the suite path joined with its file).

        Examples:
            >>> from evalkit.cases import load_suite
            >>> suite = load_suite("tests/fixtures/suites/tiny")
            >>> suite.location(suite.case("wait-file"))
            'tests/fixtures/suites/tiny/cases/prompt.yaml:12'
        """
        path = str(self.root / self.case_files[case.id]) if case.id in self.case_files else ""
        line = self.case_lines.get(case.id)
        return f"{path}:{line}" if path and line else path

    def case(self, case_id: str) -> Case:
        """Return the case with this id.

        Raises:
            ConfigError: No such case.
        """
        case = self._by_id.get(case_id)
        if case is None:
            raise ConfigError(f"suite '{self.name}' has no case '{case_id}'")
        return case

    @cached_property
    def _by_id(self) -> dict[str, Case]:
        return {case.id: case for case in self.cases}

    def skills_in_scope(self, case: Case) -> tuple[str, ...]:
        """Skills a condition exposes for ``case``.

        The case's ``skills`` if given; else its expected skill; else (should-not-trigger cases)
        every skill of the suite, so over-triggering can be measured.
        """
        if case.skills is not None:
            return tuple(case.skills)
        if case.expected_skill != NO_SKILL:
            return (case.expected_skill,)
        return tuple(sorted(self.skills))

    def exposure(self, case: Case, condition: str) -> tuple[SkillExposure, ...]:
        """What ``condition`` exposes to the agent for ``case``, one entry per skill.

        Raises:
            ConfigError: The condition is unknown or a skill lacks the variant it uses.
        """
        spec = self.conditions.get(condition)
        if spec is None:
            known = ", ".join(sorted(self.conditions))
            raise ConfigError(
                f"unknown condition '{condition}'; suite '{self.name}' defines: {known}"
            )
        if spec.mode == "none":
            return ()
        out = []
        for name in self.skills_in_scope(case):
            skill = self.skills[name]
            if spec.variant not in skill.texts:
                raise ConfigError(
                    f"condition '{condition}' uses variant '{spec.variant}' but skill '{name}' "
                    f"has none; add it under skills.{name}.variants in suite.yaml"
                )
            files = skill.variant_files.get(spec.variant) or VariantFiles(
                skill.description, skill.resources, skill.resources_hash
            )
            out.append(
                SkillExposure(
                    name=name,
                    description=files.description,
                    mode=spec.mode,
                    text=skill.texts[spec.variant],
                    bootstrap=(
                        (skill.texts["bootstrap"] if files.bootstrap is None else files.bootstrap)
                        if spec.mode == "self-load"
                        else ""
                    ),
                    resources=files.resources,
                    resources_hash=files.resources_hash,
                )
            )
        return tuple(out)

    def skill_hash(self, case: Case, condition: str) -> str:
        """Hash of everything ``condition`` exposes for ``case`` (empty exposure included)."""
        exposure = self.exposure(case, condition)
        return stable_hash(
            [
                [e.name, e.mode, e.description, e.text, e.bootstrap]
                + ([e.resources_hash] if e.resources is not None else [])
                for e in exposure
            ]
        )

    def with_skill_text(self, skill: str, text: str, variant: str = "canonical") -> Suite:
        """Return a copy whose ``skill`` variant text is replaced (for ``--skill NAME=PATH``).

        Raises:
            ConfigError: The skill does not exist.
        """
        if skill not in self.skills:
            known = ", ".join(sorted(self.skills)) or "(none)"
            raise ConfigError(
                f"--skill: suite '{self.name}' has no skill '{skill}'; skills: {known}"
            )
        old = self.skills[skill]
        texts = dict(old.texts)
        if variant == "canonical" and texts.get("bootstrap") == texts.get("canonical"):
            texts["bootstrap"] = text
        texts[variant] = text
        skills = dict(self.skills)
        skills[skill] = replace(old, texts=texts)
        return replace(self, skills=skills)

    def with_variant(
        self, skill: str, variant: str, text: str, files: VariantFiles | None = None
    ) -> Suite:
        """Return a copy where ``skill`` has one more variant (e.g. an ablated copy).

        Args:
            skill: An existing skill.
            variant: The new variant's name.
            text: Its text.
            files: Its own description and directory of files (default: the skill's).

        Raises:
            ConfigError: The skill does not exist.
        """
        if skill not in self.skills:
            known = ", ".join(sorted(self.skills)) or "(none)"
            raise ConfigError(f"suite '{self.name}' has no skill '{skill}'; skills: {known}")
        old = self.skills[skill]
        variant_files = dict(old.variant_files)
        if files is not None:
            variant_files[variant] = files
        skills = dict(self.skills)
        skills[skill] = replace(
            old, texts={**old.texts, variant: text}, variant_files=variant_files
        )
        return replace(self, skills=skills)

    def with_conditions(self, conditions: dict[str, Condition]) -> Suite:
        """Return a copy with more (or redefined) conditions."""
        return replace(self, conditions={**self.conditions, **conditions})

    def with_skill_description(self, skill: str, description: str) -> Suite:
        """Return a copy whose ``skill`` has another trigger description (``--description``).

        Raises:
            ConfigError: The skill does not exist, or the description is empty.
        """
        if skill not in self.skills:
            known = ", ".join(sorted(self.skills)) or "(none)"
            raise ConfigError(
                f"--description: suite '{self.name}' has no skill '{skill}'; skills: {known}"
            )
        if not description.strip():
            raise ConfigError(f"--description {skill}: the description is empty")
        skills = dict(self.skills)
        skills[skill] = replace(skills[skill], description=" ".join(description.split()))
        return replace(self, skills=skills)

    def select(
        self,
        *,
        case_ids: tuple[str, ...] = (),
        lanes: tuple[str, ...] = (),
        tags: tuple[str, ...] = (),
        splits: tuple[str, ...] = (),
        conditions: Sequence[str] | None = None,
    ) -> tuple[Case, ...]:
        """Cases matching every given filter (an empty filter matches all).

        With ``conditions``, the cases a run of them plans (``evalkit run``'s check): each
        condition must be the suite's, and filters that match no case are an error.

        Raises:
            ConfigError: A requested case id does not exist; with ``conditions``, one the
                suite does not define, or filters that match no case.
        """
        unknown = [name for name in conditions or () if name not in self.conditions]
        if unknown:
            known = ", ".join(sorted(self.conditions))
            raise ConfigError(
                f"--conditions: unknown condition '{unknown[0]}'; suite defines: {known}"
            )
        missing = [c for c in case_ids if c not in self._by_id]
        if missing:
            raise ConfigError(f"--case: suite '{self.name}' has no case(s): {', '.join(missing)}")
        out = []
        for case in self.cases:
            if case_ids and case.id not in case_ids:
                continue
            if lanes and case.lane not in lanes:
                continue
            if tags and not set(tags) & set(case.tags):
                continue
            if splits and case.split not in splits:
                continue
            out.append(case)
        if conditions is not None and not out:
            raise ConfigError("no cases match the filters (--case, --lane, --tags, --split)")
        return tuple(out)
