r"""What a real agent is told and given, per skill condition (shared by every real provider).

- ``none``: nothing of the skill reaches the agent.
- ``self-load``: CLI agents get ``skills/<name>/SKILL.md`` installed where they discover skills
  (:func:`install_skills`); HTTP agents get a skills index in the system prompt
  (:func:`skills_index`) and a ``load_skill`` tool (:class:`Toolbox`).
- ``preloaded`` / ``stale`` (any injected mode): the skill text, as the runner resolved it,
  injected up front (:func:`injected_text`): appended to the CLI's system prompt, or part of
  the HTTP agent's system message. The skill is not discoverable: CLI agents find its other
  files in a folder of their own (:func:`install_skill_files`), HTTP agents read them with
  ``load_skill('NAME/FILE')``; the text names only the way the agent has.

Examples:
    >>> from evalkit.cases import SkillExposure
    >>> skill = SkillExposure("waiting", "Wait on conditions.", "self-load", "# Waiting\nPoll.")
    >>> print(skill_file_text(skill))
    ---
    name: waiting
    description: "Wait on conditions."
    ---
    # Waiting
    Poll.
    >>> skill_in("cat /x/.codex/skills/waiting/SKILL.md")
    'waiting'
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.cases import Case, SkillExposure
from evalkit.providers._protocol import AgentRequest
from evalkit.providers._transcript import Event
from evalkit.sandbox import run_command

#: A tool call reading this path loads the skill NAME (the scorers' rule, kept in sync).
SKILL_PATH = re.compile(r"skills/([A-Za-z0-9][A-Za-z0-9_.-]*)/SKILL\.md")

#: The longest tool output handed back to the model.
MAX_TOOL_OUTPUT = 8000

_FRONTMATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL)


def skill_in(text: str) -> str | None:
    """Name of the skill whose ``skills/NAME/SKILL.md`` appears in ``text``, if any."""
    match = SKILL_PATH.search(text)
    return match.group(1) if match else None


def user_prompt(case: Case) -> str:
    """The task as the agent receives it: the case prompt, then its context."""
    return case.prompt + (f"\n\n{case.context}" if case.context else "")


def injected_text(
    injected: Sequence[SkillExposure], files_at: Mapping[str, Path] | None = None
) -> str:
    """Text injected up front for ``preloaded``-mode skills (``preloaded``, ``stale``, ...).

    It names only tools the agent has: an HTTP agent reads a skill's files with its
    ``load_skill`` tool; a CLI agent (``files_at`` given) reads them with its own file tools
    from the directory where they were put, which is not one the CLI discovers skills in.

    Args:
        injected: The request's injected skills.
        files_at: Skill name -> the directory holding its files, for CLI agents (None: the
            files are read with ``load_skill``).

    Returns:
        One block per skill (empty when nothing is injected).
    """
    blocks = [
        f'<skill name="{s.name}">\n{strip_frontmatter(s.text).strip()}\n'
        f"{_files_note(s, None if files_at is None else files_at.get(s.name))}</skill>"
        for s in injected
    ]
    if not blocks:
        return ""
    return "The following skill instructions apply to this task:\n\n" + "\n\n".join(blocks)


def _files_note(skill: SkillExposure, directory: Path | None = None) -> str:
    """One line naming the skill's files and how to read them (empty for a text-only skill)."""
    files = skill.resource_files()
    if not files:
        return ""
    shown = ", ".join(files[:20]) + (f" and {len(files) - 20} more" if len(files) > 20 else "")
    if directory is not None:
        return f"Files of this skill: {shown}. They are in {directory}/: read them from there.\n"
    return f"Files of this skill: {shown}. Read one with load_skill('{skill.name}/<file>').\n"


def install_skill_files(skills: Sequence[SkillExposure], root: Path) -> dict[str, Path]:
    """Put the files of injected skills under ``root/<name>/``, without their ``SKILL.md``.

    The skill's text is injected already; its other files must exist for the paths the text
    names, but nowhere the agent discovers skills (so ``preloaded`` does not also make the
    skill discoverable, and ``stale`` brings no canonical ``SKILL.md`` along).

    Returns:
        Skill name -> its directory, for skills that have files.
    """
    out: dict[str, Path] = {}
    for skill in skills:
        if skill.resources is None:
            continue
        target = root / skill.name
        for relative in skill.resource_files():
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(skill.resources / relative, target / relative)
        out[skill.name] = target
    return out


def skills_index(discoverable: Sequence[SkillExposure]) -> str:
    """The skills index of an HTTP agent's system prompt (``self-load`` mode).

    Args:
        discoverable: The request's discoverable skills.

    Returns:
        Names, descriptions and bootstrap notes, plus how to load a skill (empty when there are
        no discoverable skills).
    """
    if not discoverable:
        return ""
    lines = [
        "## Skills",
        "Skills are instructions for specific kinds of tasks. Their full text is not shown "
        "here: call the `load_skill` tool with a skill's name to read it when the task "
        "matches its description.",
    ]
    for skill in discoverable:
        lines.append(f"- {skill.name}: {_one_line(skill.description)}")
        if skill.resource_files():
            lines.append(f"  {_files_note(skill).strip()}")
        note = strip_frontmatter(skill.bootstrap).strip()
        if note:
            lines += [f"  {line}" for line in note.splitlines() if line.strip()]
    return "\n".join(lines)


def skill_file_text(skill: SkillExposure) -> str:
    """``SKILL.md`` as installed for a CLI agent: frontmatter with ``name`` and ``description``.

    A text with frontmatter keeps it (``name``/``description`` are added when missing); a text
    without gets one built from the suite's skill name and description.
    """
    text = skill.text
    match = _FRONTMATTER.match(text)
    head = f"name: {skill.name}\ndescription: {json.dumps(_one_line(skill.description))}"
    if match is None:
        return f"---\n{head}\n---\n{text}"
    keys = {line.split(":", 1)[0].strip() for line in match.group(1).splitlines() if ":" in line}
    missing = [
        line for line in head.splitlines() if line.split(":", 1)[0] not in keys
    ]
    if not missing:
        return text
    return f"---\n{match.group(1)}\n" + "\n".join(missing) + "\n---\n" + text[match.end():]


def install_skills(skills: Sequence[SkillExposure], skills_dir: Path) -> list[Path]:
    """Write ``skills_dir/<name>/SKILL.md`` for each skill (with its resource files, if any).

    Returns:
        The files written.
    """
    paths = []
    for skill in skills:
        path = skills_dir / skill.name / "SKILL.md"
        if skill.resources is not None:  # the whole skill directory, this condition's SKILL.md
            shutil.copytree(skill.resources, path.parent, symlinks=True, dirs_exist_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(skill_file_text(skill), encoding="utf-8")
        paths.append(path)
    return paths


def strip_frontmatter(text: str) -> str:
    """``text`` without its leading YAML frontmatter block (as preloading injects a skill)."""
    match = _FRONTMATTER.match(text)
    return text[match.end():] if match else text


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- system prompt and tools of the HTTP agents --------------------------------------------------


def system_prompt(request: AgentRequest, base: str) -> str:
    """The system message of an HTTP agent for one request.

    Args:
        request: The work item.
        base: The provider's base system prompt.

    Returns:
        ``base``, the working instructions of execution lanes, the skills index (self-load) and
        the injected skill text (preloaded, stale), separated by blank lines.
    """
    parts = [base.strip()]
    if request.case.lane != "prompt":
        parts.append(
            "You work in a directory of your own. Use the `bash` tool to inspect and change "
            "files there and to run commands; the task is judged by the state you leave in "
            "that directory."
        )
    parts.append(skills_index(request.discoverable))
    parts.append(injected_text(request.injected))
    return "\n\n".join(p for p in parts if p)


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to an HTTP agent, independent of the wire format.

    Attributes:
        name: Tool name.
        description: What it does.
        parameters: JSON schema of its arguments.
    """

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolUse:
    """One tool call the model asked for.

    Attributes:
        id: The call id of the wire format.
        name: Tool name.
        arguments: Parsed arguments (``{}`` when they were not a JSON object).
    """

    id: str
    name: str
    arguments: dict[str, Any]


def _one_string_tool(name: str, description: str, argument: str, meaning: str) -> ToolSpec:
    """A tool taking one required string, ``argument``, which ``meaning`` describes."""
    return ToolSpec(
        name,
        description,
        {
            "type": "object",
            "properties": {argument: {"type": "string", "description": meaning}},
            "required": [argument],
        },
    )


LOAD_SKILL = _one_string_tool(
    "load_skill", "Load the full instructions of one of the listed skills, or one of its files.",
    "name", "The skill's name, or '<skill name>/<file>' for one of the skill's files.",
)

BASH = _one_string_tool(
    "bash", "Run a bash command in your working directory and return its exit code and output.",
    "command", "The command to run.",
)


@dataclass
class Toolbox:
    """The tools of one HTTP-agent invocation.

    ``load_skill`` under self-load; ``bash`` in execution lanes (run in the workspace with a
    hermetic environment).

    Attributes:
        request: The work item.
        deadline: ``time.monotonic()`` deadline of the invocation.
        loaded: Names of the skills loaded so far.
    """

    request: AgentRequest
    deadline: float
    loaded: list[str] = field(default_factory=list)

    @property
    def _discoverable(self) -> set[str]:
        return {s.name for s in self.request.discoverable}

    @property
    def specs(self) -> list[ToolSpec]:
        """Tools offered in this request."""
        has_files = any(s.resources is not None for s in self.request.injected)
        specs = [LOAD_SKILL] if self.request.discoverable or has_files else []
        if self.request.case.lane != "prompt":
            specs.append(BASH)
        return specs

    def run(self, use: ToolUse) -> tuple[Event, Event]:
        """Execute one tool call.

        Returns:
            The normalized ``tool_call`` event (content: the skill name or the command) and
            the ``tool_result`` event.
        """
        if use.name == "load_skill":
            name = str(use.arguments.get("name", "")).strip()
            skills = {s.name: s for s in (*self.request.discoverable, *self.request.injected)}
            base, _, relative = name.partition("/")
            skill = skills.get(base)
            if skill is None or (not relative and base not in self._discoverable):
                known = ", ".join(s.name for s in self.request.discoverable) or "none"
                result = f"error: no skill named {name!r}; available: {known}"
            elif relative:
                text = skill.read_resource(relative)
                files = ", ".join(skill.resource_files()) or "none"
                result = text if text is not None else (
                    f"error: skill {base!r} has no text file {relative!r}; its files: {files}"
                )
            else:
                self.loaded.append(name)
                result = skill.text
            call = Event("tool_call", name, "load_skill")
            return call, Event("tool_result", result, "load_skill")
        if use.name == "bash" and self.request.case.lane != "prompt":
            command = str(use.arguments.get("command", ""))
            budget = max(1.0, min(120.0, self.deadline - time.monotonic()))
            outcome = run_command(command, self.request.workspace, budget)
            status = "timed out" if outcome.timed_out else f"exit code {outcome.exit_code}"
            result = f"{status}\n{outcome.output[-MAX_TOOL_OUTPUT:]}"
            loaded = skill_in(command)
            if loaded:
                self.loaded.append(loaded)
            return Event("tool_call", command, "bash"), Event("tool_result", result, "bash")
        content = json.dumps(use.arguments, sort_keys=True)
        return (
            Event("tool_call", content, use.name),
            Event("tool_result", f"error: unknown tool {use.name!r}", use.name),
        )
