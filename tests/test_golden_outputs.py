"""The analyses' ``--json`` outputs on two committed demo runs, held byte for byte.

Behaviour is meant to stay put while the code is reorganised: these files
(``tests/fixtures/golden/*.json``, written by ``scripts/make_golden_outputs.py``) catch any
change of a number, key or message in compare, lift, flips, power and gate.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.golden_commands import GOLDEN, GOLDEN_COMMANDS, golden_output


@pytest.fixture(scope="module")
def golden_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch copy of the two demo runs (an analysis may write caches into a run)."""
    runs = tmp_path_factory.mktemp("golden") / "runs"
    shutil.copytree(GOLDEN / "runs", runs)
    return runs


@pytest.mark.parametrize("name", sorted(GOLDEN_COMMANDS))
def test_output_is_unchanged(name: str, golden_runs: Path) -> None:
    expected = (GOLDEN / f"{name}.json").read_text(encoding="utf-8")
    assert golden_output(GOLDEN_COMMANDS[name], golden_runs) == expected
