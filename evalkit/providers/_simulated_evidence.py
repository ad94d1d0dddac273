"""The simulated agent's proof bundles: what it writes depends on the skill text it used.

For each required artifact the agent is *guided* when a line of the skill text it used names
the artifact's file (``notes.md``, ``screenshot.png``); guided, it writes a valid artifact of
the kind almost always, unguided only sometimes and then often sloppily (an empty screenshot,
notes without the required sections). Sections of the notes and issue labels are written when
the skill text names them; the manifest (with real hashes of the files written) when the skill
text names the manifest's file. Every file is really written in the workspace, so the
deterministic validators decide, as they would for a real agent. The bundle the case's
reference solution writes (the agent runs that solution for the task) is removed first.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from evalkit.cases import ArtifactRequirement, Case
from evalkit.providers._transcript import Event

#: Probability of writing a valid artifact when the skill text names it / when it does not.
P_GUIDED = 0.95
P_UNGUIDED = 0.35
#: Probability that an unguided note still has a required section / an issue label.
P_UNGUIDED_SECTION = 0.25
P_UNGUIDED_LABEL = 0.15


def _mentions(lines: list[str], word: str) -> bool:
    needle = word.lower()
    return any(needle in line.lower() for line in lines)


def _example(schema: Any) -> Any:
    """A minimal instance of a simple JSON Schema (types, required properties, enums)."""
    if not isinstance(schema, dict):
        return None
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props: dict[str, Any] = schema.get("properties") or {}
        names: list[str] = list(schema.get("required") or props)
        return {name: _example(props.get(name, {})) for name in names}
    defaults: dict[str, Any] = {
        "integer": 1, "number": 0.5, "string": "observed", "boolean": True, "array": [],
    }
    return defaults.get(kind) if isinstance(kind, str) else None


def _png(width: int, height: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (32, 32, 48)).save(buffer, format="PNG")
    return buffer.getvalue()


def _notes(
    case: Case, req: ArtifactRequirement, lines: list[str], rng: np.random.Generator
) -> str:
    out = [f"# {case.id}", ""]
    for section in req.sections:
        if _mentions(lines, section) or rng.random() < P_UNGUIDED_SECTION:
            out += [f"## {section}", ""]
    body = [line for line in (case.reference or "").splitlines() if line.strip()]
    out += body
    used = [label for label in req.issue_labels if _mentions(lines, label)]
    if not used and req.issue_labels and rng.random() < P_UNGUIDED_LABEL:
        used = [str(rng.choice(list(req.issue_labels)))]
    if used:
        out += ["", "Label: " + ", ".join(used)]
    return "\n".join(out) + "\n"


def _content(
    case: Case, req: ArtifactRequirement, lines: list[str], sloppy: bool, rng: np.random.Generator
) -> bytes:
    kind = req.resolved_kind
    if sloppy and kind in ("image", "video", "cast", "json"):
        return b""  # the classic: a placeholder file with nothing in it
    if kind == "image":
        return _png(max(req.min_width, 320), max(req.min_height, 200))
    if kind == "json":
        return json.dumps(_example(req.json_schema or {"type": "object"})).encode()
    if kind == "cast":
        lines = [f"$ {cmd[:60]}\r\n" for cmd in case.solution] or ["$ true\r\n"]
        lines += [".\r\n"] * max(0, req.min_events - len(lines))
        events = [[round(0.2 * (i + 1), 2), "o", text] for i, text in enumerate(lines)]
        header = {"version": 2, "width": 80, "height": 24}
        return "\n".join(json.dumps(x) for x in [header, *events]).encode() + b"\n"
    if kind == "video":
        return b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + bytes(4096)
    if kind in ("text", "markdown"):
        return _notes(case, req, lines, rng).encode()
    return ("#!/bin/sh\n" + "\n".join(case.solution) + "\n").encode()


def _target(req: ArtifactRequirement) -> str:
    if not req.is_glob:
        return req.path
    # a glob: write one file that matches it (the star becomes a name)
    return req.path.replace("**/", "").replace("*", "evidence").replace("?", "x")


def _clear_reference_bundle(case: Case, workspace: Path) -> None:
    """Remove the bundle the reference solution wrote: the agent writes its own."""
    names = [case.bundle.manifest] if case.bundle is not None else []
    for req in case.artifact_requirements:
        names += [p.relative_to(workspace).as_posix() for p in workspace.glob(req.path)]
    for rel in names:
        path = workspace / rel
        if path.is_file() and not path.is_symlink():
            path.unlink()


def write_evidence(
    case: Case, workspace: Path, skill_lines: list[str], rng: np.random.Generator
) -> list[Event]:
    """Write the case's proof bundle as far as the skill text guides the agent.

    Args:
        case: An evidence-lane case.
        workspace: The item's workspace.
        skill_lines: Lines of the skill text the agent used (empty under ``none``).
        rng: The item's generator for evidence draws.

    Returns:
        The tool calls that wrote the files (for the transcript).
    """
    _clear_reference_bundle(case, workspace)
    events: list[Event] = []
    written: list[str] = []
    for req in case.artifact_requirements:
        guided = _mentions(skill_lines, PurePosixPath(req.path).name)
        if rng.random() >= (P_GUIDED if guided else P_UNGUIDED):
            continue
        sloppy = not guided and rng.random() < 0.5
        rel = _target(req)
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_content(case, req, skill_lines, sloppy, rng))
        written.append(rel)
        events.append(Event("tool_call", f"write {rel}", name="write_file"))
    if case.bundle is not None and written:
        guided = _mentions(skill_lines, PurePosixPath(case.bundle.manifest).name)
        if rng.random() < (P_GUIDED if guided else 0.1):
            listed = written if guided else written[: max(1, len(written) // 2)]
            algorithm = case.bundle.algorithm
            entries = [
                {"path": rel, algorithm: hashlib.new(algorithm, (workspace / rel).read_bytes())
                 .hexdigest()}
                for rel in listed
            ]
            manifest = workspace / case.bundle.manifest
            manifest.parent.mkdir(parents=True, exist_ok=True)
            manifest.write_text(json.dumps({"artifacts": entries}, indent=1), encoding="utf-8")
            events.append(Event("tool_call", f"write {case.bundle.manifest}", name="write_file"))
    return events
