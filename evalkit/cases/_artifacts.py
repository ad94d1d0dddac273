"""Models of the evidence lane: the artifacts a case requires and the proof bundle's manifest.

A required artifact is a path or a glob in the workspace with a *kind* whose validator decides,
deterministically, whether the file is what a reviewer needs (``evalkit.scorers`` runs them;
:data:`KIND_RULES` says when a file of each kind passes). A plain string in
``artifacts_required`` is a requirement whose kind follows the extension.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evalkit._lanes import EVIDENCE_METRICS as EVIDENCE_METRICS  # re-exported by evalkit.cases

ArtifactKind = Literal["file", "text", "markdown", "json", "image", "cast", "video"]
ARTIFACT_KINDS: tuple[str, ...] = ("file", "text", "markdown", "json", "image", "cast", "video")

#: When a file of each kind passes (besides the size limits, and never through a symlink).
KIND_RULES: dict[str, str] = {
    "file": "it is a regular file within the size limits",
    "text": "it decodes as UTF-8, is not blank, and has the required sections, patterns and "
    "issue labels",
    "markdown": "like `text`; the sections are Markdown headings (`## Steps to reproduce`)",
    "json": "it parses as JSON and, with `json_schema`, validates against that JSON Schema",
    "image": "it decodes completely (PNG, JPEG, GIF, WebP...) and is at least "
    "`min_width` x `min_height` pixels",
    "cast": "it is an asciinema v2 recording: a JSON header with `version: 2`, `width` and "
    "`height`, then at least `min_events` `[time, code, data]` events in time order",
    "video": "it starts with an MP4/MOV, WebM/Matroska, AVI or Ogg container signature and "
    "is at least 1 KiB (or `min_bytes`)",
}

#: Largest artifact accepted unless a requirement says otherwise (bytes).
DEFAULT_MAX_BYTES = 10_000_000

_KIND_OF_SUFFIX: dict[str, str] = {
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".gif": "image",
    ".webp": "image",
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".log": "text",
    ".cast": "cast",
    ".mp4": "video",
    ".mov": "video",
    ".webm": "video",
    ".mkv": "video",
    ".avi": "video",
    ".ogv": "video",
}


def kind_for_path(path: str) -> str:
    """The artifact kind a bare path implies (by its extension; ``file`` otherwise).

    Examples:
        >>> kind_for_path("proof/screenshot.PNG"), kind_for_path("notes.md"), kind_for_path("x.sh")
        ('image', 'markdown', 'file')
    """
    return _KIND_OF_SUFFIX.get(PurePosixPath(path).suffix.lower(), "file")


def _check_relative(path: str) -> str:
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or "\\" in path:
        raise ValueError(
            f"artifact path '{path}' must be relative to the workspace, without '..' "
            "(e.g. 'proof/notes.md')"
        )
    return path


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ArtifactRequirement(_Frozen):
    """An artifact the agent must leave in the workspace, checked by its kind's validator."""

    path: str = Field(min_length=1)
    """Path relative to the workspace, or a glob (``proof/*.png``); symlinks never count."""
    kind: ArtifactKind | None = None
    """``file``, ``text``, ``markdown``, ``json``, ``image``, ``cast`` or ``video``; default:
    from the extension (``.png`` is an image, ``.md`` markdown, ``.cast`` a recording...)."""
    min_count: int = Field(default=1, ge=1)
    """With a glob: how many matching files must validate."""
    min_bytes: int = Field(default=1, ge=1)
    """Smallest size in bytes (an empty file never passes)."""
    max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=1)
    """Largest size in bytes; a bigger file is invalid and is not read."""
    min_width: int = Field(default=1, ge=1)
    """``image``: smallest width in pixels."""
    min_height: int = Field(default=1, ge=1)
    """``image``: smallest height in pixels."""
    min_events: int = Field(default=1, ge=0)
    """``cast``: fewest events after the header."""
    json_schema: dict[str, Any] | None = None
    """``json``: a JSON Schema (inline) the document must validate against."""
    sections: tuple[str, ...] = ()
    """``text``/``markdown``: headings the notes must have (case-insensitive; for ``text`` a
    line that starts with the section name). Their share is the item's report completeness."""
    patterns: tuple[str, ...] = ()
    """``text``/``markdown``/``json``: regexes the text must match outside negation contexts
    (``not reproducible`` does not match ``reproducible``)."""
    issue_labels: tuple[str, ...] = ()
    """``text``/``markdown``: the suite's issue taxonomy; the notes must use at least one label
    (affirmed, as a whole word). Whether they do is the item's taxonomy usage."""

    @field_validator("path")
    @classmethod
    def _path_is_relative(cls, path: str) -> str:
        return _check_relative(path)

    @field_validator("patterns")
    @classmethod
    def _patterns_compile(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regular expression '{pattern}': {exc}") from exc
        return patterns

    @field_validator("json_schema")
    @classmethod
    def _schema_is_valid(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is not None:
            import jsonschema

            try:
                jsonschema.validators.validator_for(schema).check_schema(schema)
            except jsonschema.SchemaError as exc:
                message = f"'json_schema' is not a valid JSON Schema: {exc.message}"
                raise ValueError(message) from exc
        return schema

    @property
    def resolved_kind(self) -> str:
        """The kind, or the one the extension implies."""
        return self.kind or kind_for_path(self.path)

    @property
    def is_glob(self) -> bool:
        """Whether ``path`` is a glob pattern."""
        return any(ch in self.path for ch in "*?[")

    @property
    def label(self) -> str:
        """``path (kind)``, as reports show the requirement."""
        return f"{self.path} ({self.resolved_kind})"


class BundleSpec(_Frozen):
    """A proof bundle: a manifest listing every artifact with its hash, checked against the files.

    The manifest is JSON: ``{"artifacts": [{"path": "proof/notes.md", "sha256": "..."}, ...]}``
    (paths relative to the workspace). It validates when every listed file exists as a regular
    file inside the workspace with that hash, and every required artifact is listed.
    """

    manifest: str = Field(min_length=1)
    """Path of the manifest relative to the workspace, e.g. ``proof/manifest.json``."""
    algorithm: Literal["sha256", "sha1", "md5"] = "sha256"
    """Hash algorithm; the manifest's entries carry it as their key (``sha256``)."""
    max_entries: int = Field(default=200, ge=1)
    """Most entries a manifest may list."""

    @field_validator("manifest")
    @classmethod
    def _manifest_is_relative(cls, path: str) -> str:
        return _check_relative(path)
