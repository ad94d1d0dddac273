"""``evalkit init``: write a minimal suite that validates and runs as written."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath

from evalkit.cases._models import _ID_PATTERN as ID_PATTERN
from evalkit.cases._schema import CASES_SCHEMA_FILE, SUITE_SCHEMA_FILE, write_schemas
from evalkit.errors import ConfigError

#: Where ``init`` writes the JSON Schema files, relative to the suite.
SCHEMA_DIR = "schema"
_TEMPLATE_NAME = "my-suite"


@dataclass(frozen=True)
class NewSuite:
    """What :func:`init_suite` wrote.

    Attributes:
        name: The suite name written into ``suite.yaml``.
        root: The suite directory.
        files: Every file written, relative to ``root``, sorted.
    """

    name: str
    root: Path
    files: tuple[str, ...]


def scaffold_files() -> dict[str, str]:
    """The scaffold's files (relative POSIX path to text), as shipped in the package.

    Examples:
        >>> sorted(scaffold_files())[-1]
        'suite.yaml'
    """
    out: dict[str, str] = {}

    def walk(node: Traversable, rel: PurePosixPath) -> None:
        for child in node.iterdir():
            if child.is_dir():
                walk(child, rel / child.name)
            else:
                out[str(rel / child.name)] = child.read_text(encoding="utf-8")

    walk(files("evalkit.cases").joinpath("_scaffold"), PurePosixPath())
    return out


def suite_name_for(directory: str | os.PathLike[str]) -> str:
    """A valid suite name derived from a directory name (``my-suite`` when none fits).

    Examples:
        >>> suite_name_for("/tmp/Commit Messages")
        'commit-messages'
        >>> suite_name_for("/tmp/__")
        'my-suite'
    """
    base = Path(directory).resolve().name.lower()
    name = re.sub(r"[^a-z0-9_.-]+", "-", base).strip("-_.")
    return name if re.fullmatch(ID_PATTERN, name) else _TEMPLATE_NAME


def init_suite(
    directory: str | os.PathLike[str], *, name: str | None = None, force: bool = False
) -> NewSuite:
    """Write the scaffold suite into ``directory``.

    Every YAML file starts with a ``# yaml-language-server: $schema=...`` line pointing at the
    JSON Schema files written under ``schema/``, so editors complete and check fields.

    Args:
        directory: The new suite's directory; created if missing.
        name: Suite name (default: derived from the directory name).
        force: Write into a non-empty directory (files of the same name are overwritten).

    Returns:
        What was written.

    Raises:
        ConfigError: The directory is not empty (without ``force``), is a file, or the name
            is not a valid suite name.
    """
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise ConfigError(f"init: {root} is a file; give a directory for the new suite")
    if root.is_dir() and any(root.iterdir()) and not force:
        raise ConfigError(
            f"init: {root} is not empty; choose a new directory, or pass --force to write the "
            "scaffold into it (files with the same names are overwritten)"
        )
    name = name or suite_name_for(root)
    if not re.fullmatch(ID_PATTERN, name):
        raise ConfigError(
            f"init: --name '{name}' is not a valid suite name; use letters, digits and _ . - "
            "(starting with a letter or digit)"
        )
    written: list[str] = []
    for rel, text in scaffold_files().items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel == "suite.yaml":
            text = re.sub(r"(?m)^name: .*$", f"name: {name}", text, count=1)
        if rel.endswith((".yaml", ".yml")):
            text = schema_comment(rel) + "\n" + text
        path.write_text(text, encoding="utf-8")
        written.append(rel)
    for path in write_schemas(root / SCHEMA_DIR):
        written.append(str(path.relative_to(root).as_posix()))
    return NewSuite(name=name, root=root, files=tuple(sorted(written)))


def schema_comment(rel: str) -> str:
    """The ``yaml-language-server`` line for the YAML file at ``rel`` (relative to the suite).

    Examples:
        >>> schema_comment("suite.yaml")
        '# yaml-language-server: $schema=schema/suite.schema.json'
        >>> schema_comment("cases/trigger.yaml")
        '# yaml-language-server: $schema=../schema/cases.schema.json'
    """
    target = SUITE_SCHEMA_FILE if rel == "suite.yaml" else CASES_SCHEMA_FILE
    depth = len(PurePosixPath(rel).parts) - 1
    return f"# yaml-language-server: $schema={'../' * depth}{SCHEMA_DIR}/{target}"
