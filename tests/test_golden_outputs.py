"""What stays golden of the analyses' ``--json`` outputs on two committed demo runs.

Each output's key schema (every key path with its JSON types) is held, so a key that scripts
read cannot vanish or change type unnoticed, and the seeded simulations are held whole. The
figures are checked against independent computations instead
(``tests/test_reference_outputs.py``). ``scripts/make_golden_outputs.py`` writes both files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.golden_commands import (
    GOLDEN,
    GOLDEN_COMMANDS,
    SCHEMAS,
    WHOLE,
    command_output,
    golden_text,
    key_schema,
)


@pytest.fixture(scope="module")
def golden_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch copy of the two demo runs (an analysis may write caches into a run)."""
    runs = tmp_path_factory.mktemp("golden") / "runs"
    shutil.copytree(GOLDEN / "runs", runs)
    return runs


@pytest.mark.parametrize("name", sorted(GOLDEN_COMMANDS))
def test_the_keys_are_unchanged(name: str, golden_runs: Path) -> None:
    record = command_output(GOLDEN_COMMANDS[name], golden_runs)
    assert record["returncode"] == (1 if name == "gate" else 0)  # the gate blocks these runs
    held = json.loads(SCHEMAS.read_text(encoding="utf-8"))[name]
    now = key_schema(record["stdout"])
    assert now == held, (
        f"keys gone: {sorted(set(held) - set(now))}; keys new: {sorted(set(now) - set(held))} "
        "(extend, never remove, the documented shapes; then scripts/make_golden_outputs.py)"
    )


@pytest.mark.parametrize("name", WHOLE)
def test_the_simulations_are_unchanged(name: str, golden_runs: Path) -> None:
    expected = (GOLDEN / f"{name}.json").read_text(encoding="utf-8")
    assert golden_text(command_output(GOLDEN_COMMANDS[name], golden_runs)) == expected


def test_what_stays_golden_is_reviewable() -> None:
    held = [SCHEMAS, *(GOLDEN / f"{name}.json" for name in WHOLE)]
    assert sum(path.stat().st_size for path in held) < 50_000
    assert sorted(p.name for p in GOLDEN.glob("*.json")) == sorted(p.name for p in held)
