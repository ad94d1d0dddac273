"""Path safety: names that become one path component, and paths that must stay inside a root.

Every name that evalkit turns into a path (run ids, skill names) goes through
:func:`unsafe_component_reason`, and every user-given relative path that must stay inside a
directory (fixtures) through :func:`is_inside`, so ``../x``, absolute paths, ``a/b`` and
symlinks out of the root never reach the file system.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from evalkit.errors import ConfigError


def unsafe_component_reason(name: object) -> str | None:
    r"""Why ``name`` cannot be used as one path component, or None when it can.

    Rejected: non-strings, empty names, ``.`` and ``..``, names holding a path separator
    (``/`` or ``\\``), absolute paths, NUL and other control or format characters (which also
    covers bidi overrides such as U+202E), and names starting with ``-`` (read as options).

    Args:
        name: The candidate name.

    Returns:
        A short reason, or None for a safe name.

    Examples:
        >>> unsafe_component_reason("baseline-2026.1") is None
        True
        >>> unsafe_component_reason("../x")
        "contains a path separator ('/')"
    """
    if not isinstance(name, str) or not name.strip():
        return _not_text(name)
    if name in (".", ".."):
        return f"'{name}' names a directory itself, not a new entry"
    for sep in ("/", "\\"):
        if sep in name:
            return f"contains a path separator ('{sep}')"
    if os.path.isabs(name):
        return "is an absolute path"
    if (control := _control_character(name)) is not None:
        return control
    if name.startswith("-"):
        return "starts with '-' (it would be read as an option)"
    return None


def unsafe_relative_reason(rel: object) -> str | None:
    r"""Why ``rel`` cannot be a path relative to a root, or None when it can.

    The one check for paths read from files an agent or another tool wrote (a bundle's
    manifest, an artifact requirement): rejected are non-strings, empty paths, absolute paths,
    ``..`` components, backslashes, and NUL or any other control or format character (a NUL
    makes the operating system's calls raise instead of answering).

    Examples:
        >>> unsafe_relative_reason("proof/notes.md") is None
        True
        >>> unsafe_relative_reason("proof/a\x00b")
        'contains the control character U+0000'
        >>> unsafe_relative_reason("../etc/passwd")
        'escapes its root (..)'
    """
    if not isinstance(rel, str) or not rel.strip():
        return _not_text(rel)
    if (control := _control_character(rel)) is not None:
        return control
    if "\\" in rel:
        return "contains a backslash (use '/')"
    if os.path.isabs(rel):
        return "is an absolute path"
    if ".." in Path(rel).parts:
        return "escapes its root (..)"
    return None


def _not_text(value: object) -> str:
    """Why ``value``, a non-string or a blank string, is no name at all."""
    return f"must be a string, got {type(value).__name__}" if not isinstance(value, str) else (
        "is empty"
    )


def _control_character(text: str) -> str | None:
    """The reason naming the first control or format character of ``text``, or None."""
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            return f"contains the control character U+{ord(char):04X}"
    return None


def safe_component(name: object, what: str, fix: str) -> str:
    """Return ``name`` if it is safe as one path component, else raise.

    Args:
        name: The candidate name (a run id, a skill name).
        what: What the name is, as the user writes it (``--run-id``).
        fix: How to fix a bad name (shown after the reason).

    Returns:
        ``name`` unchanged.

    Raises:
        ConfigError: The name is unsafe; the message names ``what``, the reason and ``fix``.
    """
    reason = unsafe_component_reason(name)
    if reason is not None or not isinstance(name, str):
        raise ConfigError(f"{what} {name!r} {reason}; {fix}")
    return name


def safe_run_id(run_id: object) -> str:
    """Check a run id (it becomes ``runs_dir/<run id>``): a safe component not starting with ``.``.

    Raises:
        ConfigError: The id could leave the runs directory or is not a plain name.
    """
    fix = (
        "use a plain name such as 'baseline-1' (no '/', '..', absolute paths or control "
        "characters); it names a directory inside --runs-dir"
    )
    name = safe_component(run_id, "--run-id", fix)
    if name.startswith("."):
        # '.cache' is the outcome cache, and names starting with '.' are evalkit's own files
        # (temporary files, the cache); a run there would be mixed with them
        raise ConfigError(
            f"--run-id {name!r} starts with '.', which names evalkit's own entries of "
            f"--runs-dir (such as the outcome cache '.cache'); {fix}"
        )
    return name


def is_inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (relative to ``root`` unless absolute) resolves inside ``root``.

    Symlinks are resolved on both sides, so a link pointing out of ``root`` is outside.

    Args:
        path: The path to check.
        root: The directory it must stay in.

    Returns:
        True when the resolved path is ``root`` or below it; False for a path holding a
        control or format character (:func:`unsafe_relative_reason`).
    """
    if isinstance(path, str) and unsafe_relative_reason(path) not in (
        None, "is an absolute path", "escapes its root (..)"
    ):
        return False  # a NUL or other control character names no file (resolve would raise)
    base = Path(root).resolve()
    target = (base / path).resolve()
    return target == base or base in target.parents
