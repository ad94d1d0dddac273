"""One ``read_transcripts``: the result row says which transcript belongs to an item."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.results import read_run, read_transcript, read_transcripts
from evalkit.runner import RunConfig, run


def test_every_item_by_default_as_whole_records(tiny_suite: Path, runs_dir: Path) -> None:
    result = run(tiny_suite, RunConfig(runs_dir=runs_dir, run_id="t", progress=False, trials=1))
    rows = read_run(result.run_dir)
    records = read_transcripts(result.run_dir)
    with_transcript = set(rows.loc[rows["transcript_path"].notna(), "item_key"])
    assert with_transcript and set(records) == with_transcript
    for key, record in records.items():
        assert record["item_key"] == key
        assert {"provider", "response"} <= set(record)
        assert isinstance(record["response"]["events"], list)
    some = sorted(records)[:2]
    assert set(read_transcripts("t", some, runs_dir)) == set(some)
    assert read_transcript(result.run_dir, some[0]) == records[some[0]]


def test_the_shard_named_by_the_row_wins(tiny_suite: Path, runs_dir: Path) -> None:
    result = run(tiny_suite, RunConfig(runs_dir=runs_dir, run_id="t", progress=False, trials=1))
    rows = read_run(result.run_dir)
    key = str(rows["item_key"].iloc[0])
    real = read_transcripts(result.run_dir, [key])[key]
    stale = {"item_key": key, "provider": "old", "response": {"events": []}}
    # a transcript of the same item in a shard no row points to (an attempt redone on resume)
    (result.run_dir / "transcripts" / "part-99999.jsonl").write_text(json.dumps(stale) + "\n")
    assert read_transcripts(result.run_dir, [key])[key] == real
    outside = result.run_dir.parent / "elsewhere.jsonl"
    outside.write_text(json.dumps(stale) + "\n")
    moved = rows.assign(transcript_path="../elsewhere.jsonl")
    assert read_transcripts(result.run_dir, [key], rows=moved) == {}
