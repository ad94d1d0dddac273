"""A full disk stops a real ``evalkit run`` cleanly; once space is freed, ``--resume`` completes.

The disk is a real small filesystem: a tmpfs when this process may mount one, else a
loop-mounted ext4 image. A second test hits a file size limit (``RLIMIT_FSIZE``, so writes
fail with ``EFBIG``), which needs no privilege. Free space is taken by a filler file, so
"freeing space" is deleting it.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.results import load_manifest
from evalkit.runner import EXIT_NO_SPACE
from tests.conftest import ROOT, TINY, CliResult, evalkit_process

ARGS = ["--trials", "12", "--seed", "7", "--no-progress", "--no-cache", "--concurrency", "2"]
ARGS += ["--provider-opt", "latency_s=0.05"]
ITEMS = 4 * 4 * 12

#: Space left free on the small filesystem: a few flushes fit, the whole run (about 180 KB
#: with its compaction) does not.
FREE_BYTES = 96 * 1024


#: The file size limit also binds the commands of execution cases (a verifier that cannot
#: write its output fails), so the limit test runs the prompt lane, where none run.
PROMPT_LANE = ("--lane", "prompt")
PROMPT_ITEMS = 3 * 4 * 12


def _argv(runs_dir: Path, run_id: str, *extra: str) -> list[str]:
    return [
        "run", str(TINY), "--runs-dir", str(runs_dir), "--run-id", run_id, *ARGS, *extra,
    ]  # fmt: skip


def _run(args: list[str]) -> CliResult:
    """``evalkit ARGS`` in a child (a full disk stops that process, not this one)."""
    return evalkit_process(*args)


def _outcomes(run_dir: Path) -> pd.DataFrame:
    df = evalkit.read_run(run_dir)
    return df[["item_key", "status", "passed", "score"]].reset_index(drop=True)


def _try(*command: str) -> bool:
    return subprocess.run(command, capture_output=True).returncode == 0


def _mount_small_filesystem(mount: Path, image: Path) -> str | None:
    """Mount a small filesystem at ``mount``: ``"tmpfs"``, ``"loop"`` or None if neither."""
    if _try("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)):
        return "tmpfs"
    mkfs = shutil.which("mkfs.ext4")
    if mkfs and _try("truncate", "-s", "8M", str(image)) and _try(mkfs, "-q", "-F", str(image)):
        if _try("mount", "-o", "loop", str(image), str(mount)):
            return "loop"
    return None


@pytest.fixture
def small_filesystem(tmp_path: Path) -> Iterator[tuple[Path, Path, str]]:
    """A mounted small filesystem, with all but ``FREE_BYTES`` taken by a filler file."""
    mount = tmp_path / "small"
    mount.mkdir()
    kind = _mount_small_filesystem(mount, tmp_path / "disk.img")
    if kind is None:
        pytest.skip("cannot mount a small filesystem here (no tmpfs or loop mount permission)")
    try:
        stats = os.statvfs(mount)
        filler = mount / "filler"
        with open(filler, "wb") as handle:
            os.posix_fallocate(handle.fileno(), 0, stats.f_bavail * stats.f_frsize - FREE_BYTES)
        yield mount, filler, kind
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _check_stopped_cleanly(
    done: CliResult, run_dir: Path, kind: str, location: str, items: int
) -> int:
    """The common checks of a run stopped by a full disk; returns the rows kept."""
    assert done.returncode == EXIT_NO_SPACE, done.stderr
    assert "Traceback" not in done.stderr
    assert f"error: no space left on {location}" in done.stderr, done.stderr
    assert "free space and resume with: evalkit run" in done.stderr
    assert not list(run_dir.rglob("*.tmp")), "temporary files are removed"
    kept = len(evalkit.read_run(run_dir))  # every flushed part still reads
    assert 0 < kept < items, f"{kind}: the disk filled up after a flush ({kept} rows kept)"
    return kept


def _resume_command(stderr: str) -> list[str]:
    line = stderr.split("free space and resume with: ", 1)[1].splitlines()[0]
    words = shlex.split(line)
    assert words[:2] == ["evalkit", "run"] and "--resume" in words
    return words[1:]


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _check_resumed(run_dir: Path, kept: int, expected: pd.DataFrame) -> None:
    items = len(expected)
    pd.testing.assert_frame_equal(_outcomes(run_dir), expected)
    events = (run_dir / "events.jsonl").read_text()
    torn = [line for line in events.splitlines() if not _parses(line)]
    assert len(torn) <= 1, "at most the line the full disk cut short; later lines are whole"
    last_attempt = events.rsplit('"event":"run_started"', 1)[1]
    assert last_attempt.count('"event":"item_finished"') == items - kept, "kept items not rerun"
    manifest = load_manifest(run_dir).to_json()
    assert manifest["status"] == "complete" and manifest["counts"]["items"] == items


def _reference(runs_dir: Path, *extra: str) -> pd.DataFrame:
    """Outcomes of the same run, uninterrupted, on an ordinary disk."""
    done = _run(_argv(runs_dir, "reference", *extra))
    assert done.returncode == 0, done.stderr
    return _outcomes(runs_dir / "reference")


@pytest.mark.slow
def test_full_disk_stops_cleanly_and_resume_completes_identically(
    small_filesystem: tuple[Path, Path, str], tmp_path: Path
) -> None:
    expected = _reference(tmp_path / "reference")
    assert len(expected) == ITEMS
    mount, filler, kind = small_filesystem
    runs_dir = mount / "runs"
    done = _run(_argv(runs_dir, "full"))
    device = "tmpfs" if kind == "tmpfs" else "/dev/loop"
    run_dir = runs_dir / "full"
    kept = _check_stopped_cleanly(done, run_dir, kind, f"{device}", ITEMS)
    assert f"(mounted at {mount.resolve()}, holding {run_dir})" in done.stderr
    filler.unlink()  # free space
    resumed = _run(_resume_command(done.stderr))
    assert resumed.returncode == 0, resumed.stderr
    _check_resumed(run_dir, kept, expected)


#: The runner flushes every 1,000 rows or 2 s, so how much one flush writes depends on the
#: machine's speed. The limited run pins the cadence to every 8 rows (a launcher around the
#: CLI), so what it writes is the same on an idle and a loaded machine: each flush's results
#: part is about 13.3 KB (the Parquet footer of the schema dominates) and its transcripts shard
#: at most about 6 KB, while events.jsonl grows by about 134 bytes per item (19.3 KB for all
#: 144). A 16 KiB limit lets every flush through and stops the run when events.jsonl reaches
#: it, after about 120 items: some rows are kept and fewer than all.
FILE_SIZE_LIMIT = 16 * 1024
FLUSH_EVERY_8_ROWS = """
import sys
from evalkit.runner._store import PartWriter
unpinned = PartWriter.__init__
def flushing_every_8_rows(self, run_dir):
    unpinned(self, run_dir, flush_rows=8, flush_seconds=float("inf"))
PartWriter.__init__ = flushing_every_8_rows
from evalkit.cli import console_main
sys.argv[0] = "evalkit"
console_main()
"""


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))


def _environment_without_sandbox() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name != "EVALKIT_SANDBOX"}


def _run_flushing_every_8_rows(args: list[str]) -> CliResult:
    """``evalkit ARGS`` in a child under the file size limit, flushing every 8 rows."""
    done = subprocess.run(
        [sys.executable, "-c", FLUSH_EVERY_8_ROWS, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**_environment_without_sandbox(), "PYTHONPATH": str(ROOT)},
        timeout=600,
        check=False,
        preexec_fn=_limit_file_size,
    )
    return CliResult(done.returncode, done.stdout, done.stderr)


@pytest.mark.slow
def test_file_size_limit_stops_cleanly_and_resume_completes_identically(tmp_path: Path) -> None:
    expected = _reference(tmp_path / "reference", *PROMPT_LANE)
    assert len(expected) == PROMPT_ITEMS
    runs_dir = tmp_path / "runs"
    # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG instead of killing
    done = _run_flushing_every_8_rows(_argv(runs_dir, "limited", *PROMPT_LANE))
    run_dir = runs_dir / "limited"
    kept = _check_stopped_cleanly(done, run_dir, "RLIMIT_FSIZE", str(run_dir), PROMPT_ITEMS)
    assert "RLIMIT_FSIZE" in done.stderr

    resumed = _run(_resume_command(done.stderr))  # without the limit
    assert resumed.returncode == 0, resumed.stderr
    _check_resumed(run_dir, kept, expected)


def test_full_workspace_disk_stops_the_run_instead_of_recording_failures(
    small_filesystem: tuple[Path, Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evalkit.runner import RunConfig, RunOutOfSpace, run

    mount, filler, kind = small_filesystem
    options = {"lanes": ("execution",), "trials": 3, "seed": 7, "progress": False}
    options |= {"use_cache": False, "backend": "threading", "concurrency": 2}
    reference = run(TINY, RunConfig(runs_dir=tmp_path / "reference", **options))  # type: ignore[arg-type]
    expected = _outcomes(reference.run_dir)
    rest = mount / "rest"  # take the last free bytes too
    with open(rest, "wb") as handle:
        stats = os.statvfs(mount)
        os.posix_fallocate(handle.fileno(), 0, stats.f_bavail * stats.f_frsize)
    # item workspaces live under the temporary directory: put it on the full disk
    monkeypatch.setattr(tempfile, "tempdir", str(mount))
    config = RunConfig(runs_dir=tmp_path / "runs", run_id="ws", **options)  # type: ignore[arg-type]
    with pytest.raises(RunOutOfSpace) as caught:
        run(TINY, config)
    assert str(mount.resolve()) in caught.value.location, caught.value.location
    run_dir = tmp_path / "runs" / "ws"
    recorded = evalkit.read_run(run_dir)
    assert recorded.empty or (recorded["status"] == "ok").all(), "no error row for lack of space"

    rest.unlink()
    filler.unlink()
    resumed = run(TINY, RunConfig(runs_dir=tmp_path / "runs", run_id="ws", resume=True, **options))  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(_outcomes(resumed.run_dir), expected)
