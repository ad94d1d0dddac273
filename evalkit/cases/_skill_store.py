"""Content-addressed skill texts: ``<root>/<hash>/SKILL.md``, the hash of :func:`stable_hash`.

A run keeps every skill text its conditions exposed (each variant's text, and under
``self-load`` the bootstrap the agent saw first) beside its manifest, addressed by the same
hash the manifest's ``conditions.<name>.skill_hashes`` record. A follow-up run
(``evalkit confirm``) then runs the baseline's text as well as the candidate's, whatever the
suite's files hold today.

Writes are atomic (a temporary file beside the target, fsynced, renamed), so an interrupted
run leaves whole texts or none. A read trusts nothing in the directory: the store itself, a
hash directory or a ``SKILL.md`` that is a symbolic link is refused, as is a name that is not
a hash, and a text whose hash is not its address.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterable
from pathlib import Path

from evalkit.cases._hashing import HASH_LENGTH, stable_hash
from evalkit.errors import InputError

#: The one file of a stored text, inside its hash directory.
SKILL_TEXT_FILE = "SKILL.md"
#: Largest stored text read back (a skill text is a few kilobytes).
MAX_SKILL_TEXT_BYTES = 4 * 1024**2

_HASH = re.compile(rf"[0-9a-f]{{{HASH_LENGTH}}}")


def skill_text_hash(text: str) -> str:
    """The address of a skill text: the hash the manifest records for it.

    Examples:
        >>> skill_text_hash("# A skill") == skill_text_hash("# A skill")
        True
        >>> len(skill_text_hash(""))
        16
    """
    return stable_hash(text)


def store_skill_texts(root: Path, texts: Iterable[str]) -> list[str]:
    """Write each text to ``root/<hash>/SKILL.md`` (atomically; present and intact ones stay).

    Args:
        root: The store directory (created; a symbolic link there is refused).
        texts: The texts to keep.

    Returns:
        The sorted hashes of the texts, every one of them now stored.

    Raises:
        InputError: ``root`` or a hash directory is a symbolic link or not a directory.
    """
    _refuse_link(root, "the skill store")
    root.mkdir(exist_ok=True)
    stored = []
    for text in dict.fromkeys(texts):
        address = skill_text_hash(text)
        folder = root / address
        _refuse_link(folder, "a stored skill text's directory")
        folder.mkdir(exist_ok=True)
        target = folder / SKILL_TEXT_FILE
        if not _intact(target, address):
            _write_atomic(target, text)
        stored.append(address)
    return sorted(stored)


def load_skill_text(root: Path, address: str) -> str:
    """The text stored at ``address``, checked against it.

    Args:
        root: The store directory.
        address: The text's hash (as the manifest records it).

    Returns:
        The text.

    Raises:
        InputError: ``address`` is not a hash; the store, its directory or its file is a
            symbolic link or missing; the file is too large or not UTF-8; or its text does not
            hash to ``address`` (the message names the file and the fix).
    """
    if not isinstance(address, str) or not _HASH.fullmatch(address):
        raise InputError(
            f"{root}: skill text address {address!r} is not a {HASH_LENGTH}-digit hex hash; "
            "the manifest's skill_hashes were edited: rerun the run to record them again"
        )
    _refuse_link(root, "the skill store")
    folder = root / address
    _refuse_link(folder, "a stored skill text's directory")
    path = folder / SKILL_TEXT_FILE
    _refuse_link(path, "a stored skill text")
    if not path.is_file():
        raise InputError(
            f"{path}: the skill text the manifest records is not stored; the run was written "
            "before runs kept their skill texts, or the file was removed: rerun the run"
        )
    if path.stat().st_size > MAX_SKILL_TEXT_BYTES:
        raise InputError(f"{path}: larger than {MAX_SKILL_TEXT_BYTES} bytes: not a skill text")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text; rerun the run to store it again") from None
    if skill_text_hash(text) != address:
        raise InputError(
            f"{path}: its text does not hash to {address} (it was changed after the run); "
            "rerun the run to store the texts it ran with"
        )
    return text


def _refuse_link(path: Path, what: str) -> None:
    if path.is_symlink():
        raise InputError(
            f"{path}: {what} is a symbolic link; a run keeps its skill texts in its own "
            "directory: remove the link and rerun the run"
        )
    if path.exists() and not path.is_dir() and path.name != SKILL_TEXT_FILE:
        raise InputError(f"{path}: {what} is not a directory; remove it and rerun the run")


def _intact(path: Path, address: str) -> bool:
    """Whether ``path`` already holds the text of ``address`` (a regular file, not a link)."""
    if path.is_symlink() or not path.is_file():
        return False
    try:
        return skill_text_hash(path.read_bytes().decode("utf-8")) == address
    except (OSError, UnicodeDecodeError):
        return False


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if path.is_symlink():
            path.unlink()
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
