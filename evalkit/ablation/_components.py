"""The parts of a skill an ablation can remove, and the ablated copies themselves.

A skill's components are:

- ``description``: its trigger description (the frontmatter ``description`` of ``SKILL.md``
  and the description the agent's skill index shows under self-load);
- ``section/<slug>``: each top-level section of ``SKILL.md``, by Markdown heading (the
  shallowest heading level of the body; a lone leading ``#`` title is the document's name,
  so its ``##`` sections are the top level). Headings inside fenced code blocks are text;
- ``file/<path>``: each file of the skill's ``references/``, ``scripts/`` and ``assets/``.

An ablated copy is the skill directory with one component removed, as a user's deletion
would leave it: a removed file's mentions in ``SKILL.md`` stay, dangling.
"""

from __future__ import annotations

import math
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalkit.cases import Suite, directory_hash
from evalkit.errors import ConfigError

#: Folders of a skill directory whose files are components.
RESOURCE_FOLDERS = ("references", "scripts", "assets")
#: Characters per token of the documented size estimate (the usual rule of thumb for English
#: text under BPE tokenizers; the simulated provider reports input tokens the same way).
CHARS_PER_TOKEN = 4
SKILL_FILE = "SKILL.md"

ComponentKind = Literal["description", "section", "file"]

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SLUG = re.compile(r"[^a-z0-9]+")


def estimate_tokens(text: str) -> int:
    """Size of ``text`` in tokens by the documented estimate: characters / 4, rounded up.

    Examples:
        >>> estimate_tokens("12345678")
        2
        >>> estimate_tokens("")
        0
    """
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class SkillComponent:
    """One removable part of a skill.

    Attributes:
        id: ``description``, ``section/<slug>`` or ``file/<relative path>``.
        kind: ``description``, ``section`` or ``file``.
        title: The heading, the file path, or ``description``.
        text: The component's text (a section with its heading line).
        tokens: Its size by :func:`estimate_tokens`.
    """

    id: str
    kind: ComponentKind
    title: str
    text: str
    tokens: int

    @property
    def condition(self) -> str:
        """The name of the condition that runs the skill without this component."""
        return "ablate-" + (_SLUG.sub("-", self.id.lower()).strip("-") or "x")


@dataclass(frozen=True)
class _Section:
    title: str
    start: int  # first line (the heading)
    end: int  # one past the last line


def split_frontmatter(text: str) -> tuple[list[str], list[str]]:
    r"""``SKILL.md`` lines as (frontmatter lines with their ``---`` fences, body lines).

    Examples:
        >>> split_frontmatter("---\nname: x\n---\n# X\n")
        (['---', 'name: x', '---'], ['# X'])
    """
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                return lines[: i + 1], lines[i + 1 :]
    return [], lines


def _headings(body: list[str]) -> list[tuple[int, int, str]]:
    """(line, level, title) of each Markdown heading outside fenced code blocks."""
    out, fenced = [], False
    for i, line in enumerate(body):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            out.append((i, len(match.group(1)), match.group(2)))
    return out


def _top_sections(body: list[str]) -> list[_Section]:
    headings = _headings(body)
    if not headings:
        return []
    levels = [level for _, level, _ in headings]
    top = min(levels)
    if levels.count(top) == 1 and headings[0][1] == top and len(set(levels)) > 1:
        top = min(level for level in levels if level > top)  # a lone title names the document
    starts = [(i, title) for i, level, title in headings if level == top]
    ends = [i for i, level, _ in headings if level <= top]
    sections = []
    for start, title in starts:
        end = next((e for e in ends if e > start), len(body))
        sections.append(_Section(title, start, end))
    return sections


def _named_sections(body: list[str]) -> list[tuple[str, _Section]]:
    """Top-level sections with their component ids (``section/<slug>``, made unique)."""
    out, seen = [], set()
    for section in _top_sections(body):
        slug = _SLUG.sub("-", section.title.lower()).strip("-") or "section"
        unique, n = slug, 2
        while unique in seen:
            unique, n = f"{slug}-{n}", n + 1
        seen.add(unique)
        out.append((f"section/{unique}", section))
    return out


def _frontmatter_description(front: list[str]) -> tuple[int, int] | None:
    """Lines ``[start, end)`` of the ``description:`` key (with its continuation lines)."""
    for i, line in enumerate(front[1:-1], start=1):
        if re.match(r"^description\s*:", line):
            end = i + 1
            while end < len(front) - 1 and front[end][:1] in (" ", "\t"):
                end += 1
            return i, end
    return None


def skill_components(suite: Suite, skill: str) -> list[SkillComponent]:
    """Every component of a suite skill, in the order of the skill.

    Args:
        suite: The loaded suite.
        skill: Skill name.

    Returns:
        The description, each top-level section, then each resource file.

    Raises:
        ConfigError: The suite has no such skill.
    """
    if skill not in suite.skills:
        known = ", ".join(sorted(suite.skills)) or "(none)"
        raise ConfigError(f"--skill: suite '{suite.name}' has no skill '{skill}'; skills: {known}")
    texts = suite.skills[skill]
    text = texts.texts.get("canonical", "")
    front, body = split_frontmatter(text)
    span = _frontmatter_description(front) if front else None
    description = "\n".join(front[span[0] : span[1]]) if span else texts.description
    out = [SkillComponent("description", "description", "description", description, 0)]
    for component_id, section in _named_sections(body):
        section_text = "\n".join(body[section.start : section.end])
        out.append(SkillComponent(component_id, "section", section.title, section_text, 0))
    resources = texts.resources
    for relative in resource_files(resources):
        source = (resources / relative) if resources is not None else Path(relative)
        content = source.read_text(encoding="utf-8", errors="replace")
        out.append(SkillComponent(f"file/{relative}", "file", relative, content, 0))
    return [
        SkillComponent(c.id, c.kind, c.title, c.text, estimate_tokens(c.text)) for c in out
    ]


def resource_files(resources: Path | None) -> list[str]:
    """Relative paths of the files under a skill directory's resource folders, sorted."""
    if resources is None:
        return []
    out = []
    for folder in RESOURCE_FOLDERS:
        base = resources / folder
        if base.is_dir() and not base.is_symlink():
            out += [p.relative_to(resources).as_posix() for p in base.rglob("*") if p.is_file()]
    return sorted(out)


def pick_components(
    components: list[SkillComponent], wanted: tuple[str, ...]
) -> list[SkillComponent]:
    """The components named in ``wanted`` (all of them when it is empty).

    Raises:
        ConfigError: A name is not a component of the skill (the message lists them).
    """
    if not wanted:
        return components
    by_id = {c.id: c for c in components}
    unknown = [w for w in wanted if w not in by_id]
    if unknown:
        raise ConfigError(
            f"--component: unknown component(s) {', '.join(map(repr, unknown))}; the skill's "
            f"components are: {', '.join(by_id)} (see --list)"
        )
    return [by_id[w] for w in dict.fromkeys(wanted)]


def text_without(text: str, components: list[SkillComponent]) -> str:
    """``SKILL.md`` text with the given description/section components removed."""
    front, body = split_frontmatter(text)
    drop_ids = {c.id for c in components}
    if "description" in drop_ids and front:
        span = _frontmatter_description(front)
        if span:
            front = front[: span[0]] + front[span[1] :]
    removed: set[int] = set()
    for component_id, section in _named_sections(body):
        if component_id in drop_ids:
            removed.update(range(section.start, section.end))
    kept = [line for i, line in enumerate(body) if i not in removed]
    lines = front + kept
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


@dataclass(frozen=True)
class AblatedCopy:
    """A skill directory written with some components removed.

    Attributes:
        path: The directory (its ``SKILL.md`` and resource files).
        text: Its ``SKILL.md`` text.
        description: The trigger description left ("" once the description is removed).
        tree_hash: :func:`~evalkit.cases.directory_hash` of the whole directory.
        resources_hash: Its hash without ``SKILL.md`` (how the runner hashes resources).
        has_resources: Whether the original skill ships a directory of files.
    """

    path: Path
    text: str
    description: str
    tree_hash: str
    resources_hash: str
    has_resources: bool


def write_ablated_copy(
    suite: Suite, skill: str, removed: list[SkillComponent], dest: Path
) -> AblatedCopy:
    """Write the skill with ``removed`` taken out into ``dest`` (a fresh directory).

    Resource files are copied without following links; a removed file is simply absent.

    Args:
        suite: The loaded suite.
        skill: Skill name.
        removed: Components to remove (none: a copy of the full skill).
        dest: Directory to create; replaced if it exists.

    Returns:
        The copy and its hashes.
    """
    texts = suite.skills[skill]
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    drop_files = {c.title for c in removed if c.kind == "file"}
    if texts.resources is not None:
        for relative in sorted(
            p.relative_to(texts.resources).as_posix()
            for p in texts.resources.rglob("*")
            if p.is_file() and not p.is_symlink()
        ):
            if relative == SKILL_FILE or relative in drop_files:
                continue
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(texts.resources / relative, target)
    text = text_without(texts.texts.get("canonical", ""), removed)
    (dest / SKILL_FILE).write_text(text, encoding="utf-8")
    dropped_description = any(c.kind == "description" for c in removed)
    return AblatedCopy(
        path=dest,
        text=text,
        description="" if dropped_description else texts.description,
        tree_hash=directory_hash(dest),
        resources_hash=directory_hash(dest, exclude=(SKILL_FILE,)),
        has_resources=texts.resources is not None,
    )
