"""JSON Schema of ``suite.yaml`` and of case files, generated from the models."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from evalkit.cases._models import Case, CaseFile, SuiteFile

SUITE_SCHEMA_FILE = "suite.schema.json"
CASES_SCHEMA_FILE = "cases.schema.json"
_DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: The three shapes a case file may take: ``cases: [...]``, a bare list, or one case.
CaseFileShapes = CaseFile | Annotated[list[Case], Field(min_length=1)] | Case


def suite_schema() -> dict[str, Any]:
    """JSON Schema of ``suite.yaml``.

    Examples:
        >>> suite_schema()["required"]
        ['name']
    """
    schema = SuiteFile.model_json_schema()
    return {"$schema": _DIALECT, **schema, "title": "evalkit suite.yaml"}


def cases_schema() -> dict[str, Any]:
    """JSON Schema of a case file (``cases: [...]``, a list of cases, or a single case).

    Examples:
        >>> len(cases_schema()["anyOf"])
        3
    """
    schema = TypeAdapter(CaseFileShapes).json_schema()
    return {
        "$schema": _DIALECT,
        "title": "evalkit case file",
        "description": "A case file: a mapping with 'cases', a list of cases, or one case.",
        **schema,
    }


def write_schemas(directory: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``suite.schema.json`` and ``cases.schema.json`` into ``directory``.

    Args:
        directory: Where to write (created if missing).

    Returns:
        The suite schema path and the case-file schema path.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = (out / SUITE_SCHEMA_FILE, out / CASES_SCHEMA_FILE)
    for path, schema in zip(paths, (suite_schema(), cases_schema()), strict=True):
        path.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return paths
