"""Paths read from a run's own files go through one validator: a hostile value names nothing.

A run directory can come from anyone (a colleague, an import, an attacker). Its
``results.parquet`` names each item's transcript shard; a ``transcript_path`` holding a NUL, a
control character or ``..`` must be skipped, never opened and never raise.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from evalkit._paths import is_inside, unsafe_relative_reason
from evalkit.results import read_transcripts
from tests.conftest import ROOT

RUN = ROOT / "tests" / "fixtures" / "runs" / "after"


def test_hostile_transcript_paths_are_skipped_without_an_error(tmp_path: Path) -> None:
    run = tmp_path / "after"
    shutil.copytree(RUN, run)
    results = run / "results.parquet"
    table = pd.read_parquet(results)
    honest = read_transcripts(run)
    assert honest, "the fixture run has transcripts"
    hostile = ["transcripts/a\x00b.jsonl", "../../../../etc/passwd", "transcripts/\u202ex.jsonl"]
    table.loc[table.index[: len(hostile)], "transcript_path"] = hostile
    table.to_parquet(results)
    found = read_transcripts(run)  # a NUL used to raise ValueError from Path.resolve
    poisoned = set(table["item_key"].iloc[: len(hostile)])
    assert not poisoned & set(found)
    assert set(found) == set(honest) - poisoned


def test_the_one_validator_refuses_control_characters_everywhere() -> None:
    for bad in ("a\x00b", "a\nb", "\u202eabc", "a\tb"):
        assert unsafe_relative_reason(bad) is not None
        assert is_inside(bad, "/tmp") is False  # no ValueError from resolve
    assert unsafe_relative_reason("proof/notes.md") is None and is_inside("x/y", "/tmp")
