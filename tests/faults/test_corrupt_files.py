"""Damaged run files are clear errors (exit 2, the file and the fix), never a traceback.

Each test damages a real file of a real run (truncation, a flipped bit in a data page or in a
column name of the footer, zero bytes), runs the real command, and where the message says
what to do, does it and checks the run then completes like an undamaged one.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import evalkit
from evalkit.results import write_parquet
from tests.conftest import TINY, CliResult, evalkit_cli, evalkit_process

RUN_ARGS = ["--trials", "2", "--seed", "3", "--no-progress", "--backend", "threading"]


def _run_cli(runs_dir: Path, run_id: str, *extra: str) -> CliResult:
    return evalkit_cli(
        "run", TINY, "--runs-dir", runs_dir, "--run-id", run_id, *RUN_ARGS, *extra
    )  # fmt: skip


def _outcomes(run_dir: Path) -> pd.DataFrame:
    df = evalkit.read_run(run_dir)
    return df[["item_key", "status", "passed", "score"]].reset_index(drop=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete run, copied by each test before damaging it."""
    runs_dir = tmp_path_factory.mktemp("reference-runs")
    assert _run_cli(runs_dir, "ref", "--no-cache").returncode == 0
    return runs_dir / "ref"


def _copy_run(reference: Path, runs_dir: Path, run_id: str) -> Path:
    run_dir = runs_dir / run_id
    shutil.copytree(reference, run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["run_id"] = run_id
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    return run_dir


def _split_into_parts(run_dir: Path) -> None:
    """Turn a complete run into the parts a run killed after two flushes leaves on disk."""
    results = pq.read_table(run_dir / "results.parquet")
    scores = pq.read_table(run_dir / "scores.parquet")
    (run_dir / "parts").mkdir()
    half = results.num_rows // 2
    for number, rows in ((1, results.slice(0, half)), (2, results.slice(half))):
        keys = set(rows.column("item_key").to_pylist())
        frame = scores.to_pandas()
        part_scores = scores.from_pandas(frame[frame["item_key"].isin(keys)], preserve_index=False)
        write_parquet(rows, run_dir / "parts" / f"results-{number:05d}.parquet")
        write_parquet(part_scores, run_dir / "parts" / f"scores-{number:05d}.parquet")
    (run_dir / "results.parquet").unlink()
    (run_dir / "scores.parquet").unlink()


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _zero_bytes(path: Path) -> None:
    path.write_bytes(b"")


def _flip_data_bit(path: Path) -> None:
    """Flip one bit inside the data page of the ``passed`` column (covered by its CRC)."""
    meta = pq.ParquetFile(path).metadata
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    chunk = meta.row_group(0).column(names.index("passed"))
    start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
    position = start + chunk.total_compressed_size - 1
    data = bytearray(path.read_bytes())
    data[position] ^= 0x01
    path.write_bytes(bytes(data))


def _flip_name_bit(path: Path) -> None:
    """Flip one bit of a column name in the footer: ``passed`` would read as ``qassed``."""
    data = bytearray(path.read_bytes())
    footer_length = int.from_bytes(data[-8:-4], "little")
    footer_start = len(data) - 8 - footer_length
    position = data.index(b"passed", footer_start)
    data[position] ^= 0x01
    path.write_bytes(bytes(data))


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate,
    "zero-bytes": _zero_bytes,
    "data-bit-flipped": _flip_data_bit,
    "column-name-bit-flipped": _flip_name_bit,
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("target", ["results.parquet", "parts/results-00002.parquet"])
def test_analysis_commands_name_the_damaged_file(
    target: str,
    damage: str,
    reference: Path,
    runs_dir: Path,
) -> None:
    run_dir = _copy_run(reference, runs_dir, "damaged")
    if target.startswith("parts/"):
        _split_into_parts(run_dir)
    DAMAGE[damage](run_dir / target)
    commands = [
        ["lift", str(run_dir)],
        ["compare", str(run_dir), "--conditions", "none,self-load"],
        ["flips", str(run_dir)],
    ]
    for argv in commands:
        done = evalkit_cli(*argv)
        assert done.returncode == 2, argv
        err = done.stderr
        assert f"{run_dir / target}:" in err, err
        assert "Traceback" not in err
        if target.startswith("parts/"):
            assert "delete" in err and "parts/scores-00002.parquet" in err
            assert "--resume --run-id damaged" in err
        else:
            assert "re-run" in err and "scores.parquet" in err


@pytest.mark.parametrize("damage", ["truncated", "data-bit-flipped"])
def test_damaged_part_on_resume_then_the_advice_completes_the_run(
    damage: str, reference: Path, runs_dir: Path
) -> None:
    run_dir = _copy_run(reference, runs_dir, "parted")
    _split_into_parts(run_dir)
    DAMAGE[damage](run_dir / "parts" / "results-00002.parquet")
    done = _run_cli(runs_dir, "parted", "--resume", "--no-cache")
    assert done.returncode == 2
    err = done.stderr
    assert f"{run_dir / 'parts' / 'results-00002.parquet'}:" in err and "Traceback" not in err
    assert "resume with: evalkit run" in err
    # the advice: delete the damaged part and its scores, resume
    (run_dir / "parts" / "results-00002.parquet").unlink()
    (run_dir / "parts" / "scores-00002.parquet").unlink()
    assert _run_cli(runs_dir, "parted", "--resume", "--no-cache").returncode == 0
    pd.testing.assert_frame_equal(_outcomes(run_dir), _outcomes(reference))
    scores = evalkit.results.read_scores(run_dir)
    assert set(scores["item_key"]) == set(_outcomes(run_dir)["item_key"])
    assert not scores.duplicated(["item_key", "component"]).any()


@pytest.mark.parametrize("name", ["results.parquet", "scores.parquet"])
def test_damaged_compacted_file_on_resume_then_rerun(
    name: str, reference: Path, runs_dir: Path
) -> None:
    run_dir = _copy_run(reference, runs_dir, "compacted")
    _flip_data_bit(run_dir / name) if name == "results.parquet" else _truncate(run_dir / name)
    done = _run_cli(runs_dir, "compacted", "--resume", "--no-cache")
    assert done.returncode == 2
    err = done.stderr
    assert f"{run_dir / name}:" in err and "re-run" in err and "Traceback" not in err
    (run_dir / "results.parquet").unlink()
    (run_dir / "scores.parquet").unlink()
    assert _run_cli(runs_dir, "compacted", "--resume", "--no-cache").returncode == 0
    pd.testing.assert_frame_equal(_outcomes(run_dir), _outcomes(reference))


@pytest.mark.parametrize("content", [b"", b'{"run_id": "x", "crea'])
def test_corrupt_or_empty_manifest_on_resume_is_refused(
    content: bytes, reference: Path, runs_dir: Path
) -> None:
    run_dir = _copy_run(reference, runs_dir, "nomanifest")
    _split_into_parts(run_dir)
    (run_dir / "manifest.json").write_bytes(content)
    done = _run_cli(runs_dir, "nomanifest", "--resume")
    assert done.returncode == 2
    err = done.stderr
    assert str(run_dir / "manifest.json") in err and "Traceback" not in err
    assert "another --run-id" in err


def test_empty_manifest_without_finished_items_resumes_as_a_fresh_start(
    reference: Path, runs_dir: Path
) -> None:
    run_dir = runs_dir / "fresh"
    run_dir.mkdir()
    (run_dir / "manifest.json").write_bytes(b"")
    assert _run_cli(runs_dir, "fresh", "--resume", "--no-cache").returncode == 0
    pd.testing.assert_frame_equal(_outcomes(run_dir), _outcomes(reference))


def test_missing_transcript_shard_on_resume_reruns_its_items(
    reference: Path, runs_dir: Path
) -> None:
    run_dir = _copy_run(reference, runs_dir, "shards")
    _split_into_parts(run_dir)
    rows = evalkit.read_run(run_dir)
    shard = str(rows["transcript_path"].dropna().iloc[0])
    lost = set(rows.loc[rows["transcript_path"] == shard, "item_key"])
    (run_dir / shard).unlink()
    done = _run_cli(runs_dir, "shards", "--resume", "--no-cache")
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert f"transcripts shard {run_dir / shard} is missing" in err
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    started = [e for e in events if e["event"] == "run_started"][-1]
    after = events[events.index(started) :]
    rerun = {e["key"] for e in after if e["event"] == "item_finished"}
    assert rerun == lost, "exactly the items of the missing shard are run again"
    pd.testing.assert_frame_equal(_outcomes(run_dir), _outcomes(reference))
    final = evalkit.read_run(run_dir)
    assert all((run_dir / p).is_file() for p in final["transcript_path"].dropna())
    transcripts = evalkit.results.read_transcripts(run_dir)
    assert set(transcripts) == set(final.loc[final["status"] == "ok", "item_key"])


def _subprocess(*argv: str) -> CliResult:
    """``evalkit ARGV`` as the console script runs it: its exit code and streams are tested."""
    return evalkit_process(*argv)


@pytest.mark.slow
def test_real_commands_and_report_notebook_exit_2_naming_the_file(
    reference: Path, runs_dir: Path, tmp_path: Path
) -> None:
    run_dir = _copy_run(reference, runs_dir, "flipped")
    _flip_data_bit(run_dir / "results.parquet")
    done = _subprocess("lift", str(run_dir), "--json")
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert f"{run_dir / 'results.parquet'}:" in done.stderr and "Traceback" not in done.stderr
    assert "snappy" not in done.stderr.lower() or "results.parquet" in done.stderr
    report = _subprocess("report", str(run_dir), "-o", str(tmp_path / "r.html"))
    assert report.returncode == 2, report.stderr
    assert "results.parquet" in report.stderr and "CorruptFileError" in report.stderr
    assert "Traceback" not in report.stderr
    assert not (tmp_path / "r.html").exists()


def test_trend_loader_names_a_damaged_run(reference: Path, runs_dir: Path) -> None:
    from evalkit.analysis import load_items
    from evalkit.errors import CorruptFileError

    _copy_run(reference, runs_dir, "fine")
    damaged = _copy_run(reference, runs_dir, "torn")
    _truncate(damaged / "results.parquet")
    with pytest.raises(CorruptFileError) as caught:
        load_items(runs_dir)
    assert caught.value.path == str(damaged / "results.parquet")
    assert f"move the run {damaged} out of {runs_dir}" in str(caught.value)
