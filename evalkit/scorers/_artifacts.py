"""Deterministic validators of evidence artifacts: one per kind, all bounded, no symlinks.

Every check reads at most the requirement's ``max_bytes`` of a file, never follows a symlink
(a link anywhere on the path makes the artifact invalid) and never leaves the workspace. A
problem is a reason on the result, never an exception.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evalkit._paths import unsafe_relative_reason
from evalkit._untrusted import InputBoundError, load_json
from evalkit.cases import ArtifactRequirement, find_affirmed

ArtifactStatus = Literal["validated", "missing", "invalid"]

#: Largest image accepted, in pixels (a decompression bomb is invalid, not decoded).
MAX_IMAGE_PIXELS = 40_000_000
#: Smallest video accepted unless the requirement asks for more (a header alone is not a video).
MIN_VIDEO_BYTES = 1024
#: Most files a glob requirement looks at.
MAX_GLOB_FILES = 200

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_CAST_CODES = frozenset({"o", "i", "m", "r"})


@dataclass(frozen=True)
class FileCheck:
    """One file's validation.

    Attributes:
        path: Path relative to the workspace.
        passed: Whether the file is a valid artifact of its kind.
        reason: Why not (or what it is, e.g. ``640x480 PNG``).
        size: Size in bytes (None when the file could not be examined).
        sections_found: Required sections present.
        labels_used: Issue labels the text uses.
    """

    path: str
    passed: bool
    reason: str
    size: int | None = None
    sections_found: tuple[str, ...] = ()
    labels_used: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArtifactCheck:
    """The outcome of one requirement.

    Attributes:
        requirement: The requirement.
        status: ``validated``, ``missing`` or ``invalid``.
        reason: Why, in one line.
        files: Every file examined, with its own outcome.
    """

    requirement: ArtifactRequirement
    status: ArtifactStatus
    reason: str
    files: tuple[FileCheck, ...] = field(default_factory=tuple)

    @property
    def sections_found(self) -> int:
        """Required sections present in the best file."""
        return max((len(f.sections_found) for f in self.files), default=0)

    @property
    def labels_used(self) -> tuple[str, ...]:
        """Issue labels used by any file."""
        return tuple(sorted({label for f in self.files for label in f.labels_used}))


def safe_file(workspace: Path, rel: str) -> tuple[Path | None, str]:
    """The file ``rel`` inside ``workspace`` when it is reachable without a symlink.

    Args:
        workspace: The workspace.
        rel: Path relative to it.

    Returns:
        ``(path, "")``, or ``(None, reason)`` when the path escapes the workspace or a
        component of it is a symlink; ``(path, "missing")`` when nothing is there.
    """
    reason = unsafe_relative_reason(rel)
    if reason is not None:
        return None, ("path escapes the workspace" if "escapes" in reason or "absolute" in reason
                      else f"path {reason}")
    parts = Path(rel).parts
    current = workspace
    for part in parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return current, "missing"
        except OSError as exc:
            return None, f"cannot examine: {exc.strerror or exc}"
        if stat.S_ISLNK(mode):
            return None, "is a symlink (symlinks are not followed)"
    return current, ""


def matching_files(workspace: Path, requirement: ArtifactRequirement) -> list[str]:
    """Paths (relative, sorted) a requirement names: the path itself, or the glob's matches.

    A glob never descends through a symlinked directory, and symlinks it matches are kept
    (so that they are reported as invalid, not silently ignored).
    """
    if not requirement.is_glob:
        return [requirement.path]
    found: list[str] = []
    for path in sorted(workspace.glob(requirement.path)):
        rel = path.relative_to(workspace).as_posix()
        if any(p == ".." for p in Path(rel).parts):
            continue
        found.append(rel)
        if len(found) >= MAX_GLOB_FILES:
            break
    return found


def _read_bounded(path: Path, limit: int) -> bytes:
    # O_NOFOLLOW: a file swapped for a link between the check and the read is refused too
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(limit + 1)


def _text(data: bytes) -> tuple[str | None, str]:
    if b"\x00" in data:
        return None, "binary data, not text"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte {exc.start})"
    if not text.strip():
        return None, "blank: only whitespace"
    return text, ""


def _sections(text: str, wanted: tuple[str, ...], markdown: bool) -> list[str]:
    if markdown:
        headings = [" ".join(h.lower().split()) for h in _HEADING.findall(text)]
    else:
        headings = [" ".join(line.lower().split()) for line in text.splitlines()]
    found = []
    for section in wanted:
        name = " ".join(section.lower().split())
        if any(h.startswith(name) for h in headings):
            found.append(section)
    return found


def _labels(text: str, labels: tuple[str, ...]) -> list[str]:
    return [
        label
        for label in labels
        if find_affirmed(r"(?<![\w-])" + re.escape(label) + r"(?![\w-])", text)
    ]


def _check_text(
    data: bytes, req: ArtifactRequirement, markdown: bool
) -> tuple[bool, str, tuple[str, ...], tuple[str, ...]]:
    text, problem = _text(data)
    if text is None:
        return False, problem, (), ()
    problems = []
    found = _sections(text, req.sections, markdown)
    missing = [s for s in req.sections if s not in found]
    if missing:
        what = "headings" if markdown else "sections"
        problems.append(f"missing {what}: " + ", ".join(missing))
    absent = [p for p in req.patterns if not find_affirmed(p, text)]
    if absent:
        problems.append("no affirmed match for: " + " | ".join(absent))
    used = _labels(text, req.issue_labels)
    if req.issue_labels and not used:
        problems.append("uses none of the issue labels (" + ", ".join(req.issue_labels) + ")")
    summary = f"{len(text.splitlines())} lines"
    if req.sections:
        summary += f", {len(found)}/{len(req.sections)} sections"
    if used:
        summary += ", labels: " + ", ".join(used)
    return not problems, "; ".join(problems) or summary, tuple(found), tuple(used)


def _check_json(data: bytes, req: ArtifactRequirement) -> tuple[bool, str]:
    text, problem = _text(data)
    if text is None:
        return False, problem
    try:
        document = load_json(text, "the artifact")
    except InputBoundError as exc:
        return False, str(exc)
    except json.JSONDecodeError as exc:
        return False, f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    if req.json_schema is not None:
        import jsonschema

        validator = jsonschema.validators.validator_for(req.json_schema)(req.json_schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(document))
        if error is not None:
            where = "/" + "/".join(str(p) for p in error.absolute_path)
            return False, f"fails its JSON Schema at {where}: {error.message[:200]}"
    absent = [p for p in req.patterns if not find_affirmed(p, text)]
    if absent:
        return False, "no affirmed match for: " + " | ".join(absent)
    matched = ", matches its schema" if req.json_schema else ""
    return True, f"JSON {type(document).__name__}{matched}"


def _check_image(data: bytes, req: ArtifactRequirement) -> tuple[bool, str]:
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as probe:
                width, height = probe.size
                fmt = probe.format or "image"
                if width * height > MAX_IMAGE_PIXELS:
                    return False, f"{width}x{height} is more than {MAX_IMAGE_PIXELS} pixels"
                probe.load()  # a truncated file fails here, not at open
    except (UnidentifiedImageError, Image.DecompressionBombError, Image.DecompressionBombWarning,
            OSError, SyntaxError, ValueError) as exc:
        return False, f"does not decode as an image: {type(exc).__name__}: {str(exc)[:160]}"
    if width < req.min_width or height < req.min_height:
        return False, (
            f"{width}x{height} {fmt} is smaller than the minimum {req.min_width}x{req.min_height}"
        )
    return True, f"{width}x{height} {fmt}"


def _check_cast(data: bytes, req: ArtifactRequirement) -> tuple[bool, str]:
    text, problem = _text(data)
    if text is None:
        return False, problem
    lines = text.splitlines()
    try:
        header = load_json(lines[0], "the recording")
    except (json.JSONDecodeError, InputBoundError):
        return False, "line 1 is not an asciinema header (JSON object)"
    if not isinstance(header, dict) or header.get("version") != 2:
        return False, "not an asciinema v2 recording: the header needs \"version\": 2"
    for key in ("width", "height"):
        if not isinstance(header.get(key), int) or isinstance(header.get(key), bool):
            return False, f"asciinema header: '{key}' must be an integer"
    events, last = 0, 0.0
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            event = load_json(line, "the recording")
        except (json.JSONDecodeError, InputBoundError):
            return False, f"line {number} is not a JSON event (truncated recording?)"
        if (
            not isinstance(event, list)
            or len(event) != 3
            or not isinstance(event[0], int | float)
            or isinstance(event[0], bool)
            or event[1] not in _CAST_CODES
            or not isinstance(event[2], str)
        ):
            return False, f"line {number}: an event is [time, \"o\"|\"i\"|\"m\"|\"r\", data]"
        if event[0] < last:
            return False, f"line {number}: event time {event[0]} goes back in time"
        last = float(event[0])
        events += 1
    if events < req.min_events:
        return False, f"{events} events, fewer than the minimum {req.min_events}"
    return True, f"asciinema v2, {header['width']}x{header['height']}, {events} events, {last:g}s"


def _video_container(data: bytes) -> str | None:
    if len(data) >= 12 and data[4:8] == b"ftyp":
        return "MP4/QuickTime"
    if data[:4] == b"\x1a\x45\xdf\xa3":
        return "WebM/Matroska"
    if data[:4] == b"RIFF" and data[8:12] == b"AVI ":
        return "AVI"
    if data[:4] == b"OggS":
        return "Ogg"
    return None


def _check_video(data: bytes, req: ArtifactRequirement) -> tuple[bool, str]:
    container = _video_container(data)
    if container is None:
        return False, "no video container signature (MP4/MOV, WebM/MKV, AVI, Ogg)"
    floor = max(req.min_bytes, MIN_VIDEO_BYTES)
    if len(data) < floor:
        return False, f"{container} of {len(data)} bytes, below the minimum {floor}"
    return True, f"{container}, {len(data)} bytes"


def check_file(workspace: Path, rel: str, req: ArtifactRequirement) -> FileCheck:
    """Validate one file against a requirement (size limits, then its kind's validator).

    Args:
        workspace: The workspace.
        rel: The file, relative to the workspace.
        req: The requirement it must meet.

    Returns:
        The outcome; ``reason`` is ``missing`` when there is no such file.
    """
    path, problem = safe_file(workspace, rel)
    if path is None:
        return FileCheck(rel, False, problem)
    if problem == "missing":
        return FileCheck(rel, False, "missing")
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        return FileCheck(rel, False, "not a regular file")
    size = info.st_size
    if size < req.min_bytes:
        return FileCheck(rel, False, "empty (0 bytes)" if size == 0 else
                         f"{size} bytes, below the minimum {req.min_bytes}", size)
    if size > req.max_bytes:
        return FileCheck(rel, False, f"oversized: {size} bytes, above the limit {req.max_bytes}",
                         size)
    try:
        data = _read_bounded(path, req.max_bytes)
    except OSError as exc:
        return FileCheck(rel, False, f"cannot read: {exc.strerror or exc}", size)
    if len(data) > req.max_bytes:
        return FileCheck(rel, False, f"oversized: grew past the limit {req.max_bytes}", size)
    kind = req.resolved_kind
    sections: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    if kind in ("text", "markdown"):
        ok, reason, sections, labels = _check_text(data, req, kind == "markdown")
    elif kind == "json":
        ok, reason = _check_json(data, req)
    elif kind == "image":
        ok, reason = _check_image(data, req)
    elif kind == "cast":
        ok, reason = _check_cast(data, req)
    elif kind == "video":
        ok, reason = _check_video(data, req)
    else:
        ok, reason = True, f"{size} bytes"
    return FileCheck(rel, ok, reason, size, sections, labels)


def check_requirement(workspace: Path | None, req: ArtifactRequirement) -> ArtifactCheck:
    """Validate one requirement: every file it names (a glob needs ``min_count`` valid ones).

    Args:
        workspace: The workspace after the agent ran (None: nothing can be found).
        req: The requirement.

    Returns:
        ``validated``, ``missing`` (no file) or ``invalid`` (files that fail), with reasons.
    """
    if workspace is None:
        return ArtifactCheck(req, "missing", "no workspace")
    names = matching_files(workspace, req)
    files = tuple(check_file(workspace, rel, req) for rel in names)
    present = [f for f in files if f.reason != "missing"]
    if not present:
        return ArtifactCheck(req, "missing", "no file matches" if req.is_glob else "missing",
                             files)
    valid = [f for f in present if f.passed]
    bad = [f for f in present if not f.passed]
    if len(valid) >= req.min_count and (req.is_glob or not bad):
        return ArtifactCheck(req, "validated", "; ".join(f"{f.path}: {f.reason}" for f in valid),
                             files)
    reasons = [f"{f.path}: {f.reason}" for f in bad]
    if req.is_glob and len(valid) < req.min_count:
        reasons.insert(0, f"{len(valid)} valid file(s), {req.min_count} needed")
    return ArtifactCheck(req, "invalid", "; ".join(reasons), files)


def check_to_json(check: ArtifactCheck) -> dict[str, Any]:
    """A JSON-able record of a requirement's outcome (stored beside collected artifacts)."""
    return {
        "path": check.requirement.path,
        "kind": check.requirement.resolved_kind,
        "status": check.status,
        "reason": check.reason,
        "files": [
            {"path": f.path, "passed": f.passed, "reason": f.reason, "size": f.size}
            for f in check.files
        ],
    }
