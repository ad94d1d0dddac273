"""Edited, emptied, damaged or foreign cache entries are misses: the item is run again."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalkit
from evalkit.runner import RunConfig, run
from evalkit.runner._cache import OutcomeCache, entry_digest
from tests.conftest import TINY

PROVIDER = "tests.runner.counting_provider:create"

Entry = dict[str, Any]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    dest = tmp_path / "suite"
    shutil.copytree(TINY, dest)
    return dest


def _run(suite: Path, runs_dir: Path, count_file: Path) -> tuple[pd.DataFrame, set[str], Path]:
    count_file.write_text("")
    config = RunConfig(
        runs_dir=runs_dir,
        provider=PROVIDER,
        provider_options={"count_file": str(count_file)},
        progress=False,
        trials=2,
        backend="threading",
        concurrency=2,
    )
    result = run(suite, config)
    return evalkit.read_run(result.run_dir), set(count_file.read_text().split()), result.run_dir


def _outcomes(df: pd.DataFrame) -> pd.DataFrame:
    return df[["item_key", "status", "passed", "score"]].reset_index(drop=True)


def _redigest(entry: Entry) -> Entry:
    """The entry with a digest that matches its (edited) content: only types are checked."""
    entry["digest"] = entry_digest(
        entry["item_hash"], entry.get("row"), entry.get("scores"), entry.get("response")
    )
    return entry


def _set_passed(entry: Entry) -> Entry:
    entry["row"]["passed"] = True  # the edit that moved a pass rate silently
    return entry


def _empty_row(entry: Entry) -> Entry:
    entry["row"] = {}
    return entry


def _wrong_type_with_digest(entry: Entry) -> Entry:
    entry["row"]["passed"] = "yes"
    return _redigest(entry)


def _missing_field_with_digest(entry: Entry) -> Entry:
    del entry["row"]["score"]
    return _redigest(entry)


def _error_row_with_digest(entry: Entry) -> Entry:
    entry["row"]["status"] = "error"
    return _redigest(entry)


def _old_layout(entry: Entry) -> Entry:
    return {"row": entry["row"], "scores": entry["scores"], "response": entry["response"]}


#: name -> (edit of the parsed entry, or raw text; the reason the log must give)
TAMPERING: dict[str, tuple[Callable[[Entry], Entry] | str, str]] = {
    "passed-flipped": (_set_passed, "digest mismatch"),
    "empty-object": ("{}", "no digest"),
    "empty-row": (_empty_row, "digest mismatch"),
    "empty-file": ("", "not valid JSON"),
    "truncated-json": ("TRUNCATE", "not valid JSON"),
    "not-an-object": ("[1, 2]", "not a JSON object"),
    "wrong-type": (_wrong_type_with_digest, "field 'row.passed'"),
    "missing-field": (_missing_field_with_digest, "field 'row.score'"),
    "error-row": (_error_row_with_digest, "field 'row.status'"),
    "old-layout-without-digest": (_old_layout, "no digest"),
}


@pytest.mark.parametrize("name", sorted(TAMPERING))
def test_tampered_entries_are_rerun_logged_counted_and_rewritten(
    name: str, suite: Path, runs_dir: Path, tmp_path: Path
) -> None:
    count = tmp_path / "calls.txt"
    first, called, _ = _run(suite, runs_dir, count)
    assert len(called) == 32
    cache = OutcomeCache(runs_dir / ".cache")
    failed = first.loc[~first["passed"].astype(bool)]
    assert len(failed) >= 5, "the tiny suite has failing items to tamper with"
    victims = dict(zip(failed["item_key"][:5], failed["item_hash"][:5], strict=True))
    edit, reason = TAMPERING[name]
    for item_hash in victims.values():
        path = cache.path(item_hash)
        text = path.read_text()
        if edit == "TRUNCATE":
            new_text = text[: len(text) // 2]
        elif isinstance(edit, str):
            new_text = edit
        else:
            new_text = json.dumps(edit(json.loads(text)))
        path.write_text(new_text)

    second, rerun, run_dir = _run(suite, runs_dir, count)

    assert rerun == set(victims), "exactly the tampered items are run again"
    pd.testing.assert_frame_equal(_outcomes(second), _outcomes(first))
    assert second["passed"].mean() == first["passed"].mean()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["counts"]["cache_rejected"] == 5
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    rejected = [e for e in events if e["event"] == "cache_rejected"]
    assert sorted(e["path"] for e in rejected) == sorted(
        str(cache.path(h)) for h in victims.values()
    ), "each bad entry is logged once, with its path"
    assert all(reason in e["reason"] for e in rejected), rejected[0]["reason"]
    for item_hash in victims.values():
        lookup = cache.lookup(item_hash)
        assert lookup.entry is not None and lookup.rejected is None, "the entry was rewritten"

    third, again, run_dir = _run(suite, runs_dir, count)
    assert again == set()
    assert json.loads((run_dir / "manifest.json").read_text())["counts"]["cache_rejected"] == 0
    pd.testing.assert_frame_equal(_outcomes(third), _outcomes(first))


def test_an_entry_answering_another_item_hash_is_a_miss(
    suite: Path, runs_dir: Path, tmp_path: Path
) -> None:
    count = tmp_path / "calls.txt"
    first, _, _ = _run(suite, runs_dir, count)
    cache = OutcomeCache(runs_dir / ".cache")
    passing = first.loc[first["passed"].astype(bool), "item_hash"].iloc[0]
    failing_key, failing = first.loc[~first["passed"].astype(bool), ["item_key", "item_hash"]].iloc[
        0
    ]
    # a whole, valid entry of a passing item, copied over a failing item's entry
    shutil.copyfile(cache.path(passing), cache.path(failing))
    lookup = cache.lookup(failing)
    assert lookup.entry is None and lookup.rejected is not None
    assert "answers item hash" in lookup.rejected

    second, rerun, _ = _run(suite, runs_dir, count)
    assert rerun == {failing_key}
    pd.testing.assert_frame_equal(_outcomes(second), _outcomes(first))


def test_valid_entries_are_hits_with_every_field_typed(
    suite: Path, runs_dir: Path, tmp_path: Path
) -> None:
    count = tmp_path / "calls.txt"
    first, _, _ = _run(suite, runs_dir, count)
    cache = OutcomeCache(runs_dir / ".cache")
    for item_hash in first["item_hash"]:
        stored = json.loads(cache.path(item_hash).read_text())
        assert stored["version"] == 2 and stored["item_hash"] == item_hash
        assert stored["digest"].startswith("sha256:")
        entry = cache.get(item_hash)
        assert entry is not None and isinstance(entry["row"]["passed"], bool)
    second, rerun, _ = _run(suite, runs_dir, count)
    assert rerun == set() and bool(second["cache_hit"].all())
    pd.testing.assert_frame_equal(_outcomes(second), _outcomes(first))
