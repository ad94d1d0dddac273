"""The content-addressed cache: exactly the affected items rerun after an edit."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import evalkit
from evalkit.matrix import parse_item_key
from evalkit.runner import RunConfig, run
from tests.conftest import TINY

PROVIDER = "tests.runner.counting_provider:create"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    dest = tmp_path / "suite"
    shutil.copytree(TINY, dest)
    return dest


def _run(suite: Path, runs_dir: Path, count_file: Path, **kw: object) -> set[str]:
    count_file.write_text("")
    options: dict[str, object] = {"trials": 2, "backend": "threading", "concurrency": 2, **kw}
    config = RunConfig(
        runs_dir=runs_dir,
        provider=PROVIDER,
        provider_options={"count_file": str(count_file)},
        progress=False,
        **options,  # type: ignore[arg-type]
    )
    result = run(suite, config)
    df = evalkit.read_run(result.run_dir)
    called = set(count_file.read_text().split())
    assert set(df.loc[~df["cache_hit"], "item_key"]) == called
    return called


def test_unchanged_rerun_calls_no_provider(suite: Path, runs_dir: Path, tmp_path: Path) -> None:
    count = tmp_path / "calls.txt"
    first = _run(suite, runs_dir, count)
    assert len(first) == 32
    assert _run(suite, runs_dir, count) == set()


def test_skill_edit_reruns_only_conditions_using_it(
    suite: Path, runs_dir: Path, tmp_path: Path
) -> None:
    count = tmp_path / "calls.txt"
    _run(suite, runs_dir, count)
    skill = suite / "skills" / "waiting" / "SKILL.md"
    skill.write_text(skill.read_text() + "Log how long the wait took.\n")
    rerun = _run(suite, runs_dir, count)
    # canonical text feeds self-load and preloaded; none and stale do not use it
    assert rerun and {parse_item_key(k).condition for k in rerun} == {"self-load", "preloaded"}
    assert len(rerun) == 4 * 2 * 2  # 4 cases x 2 conditions x 2 trials


def test_case_edit_reruns_only_that_case(suite: Path, runs_dir: Path, tmp_path: Path) -> None:
    count = tmp_path / "calls.txt"
    _run(suite, runs_dir, count)
    cases = suite / "cases" / "prompt.yaml"
    cases.write_text(cases.read_text().replace("What is the sum", "What's the sum"))
    rerun = _run(suite, runs_dir, count)
    assert {parse_item_key(k).case_id for k in rerun} == {"sum-numbers"} and len(rerun) == 8


def test_fixture_edit_reruns_only_that_case(suite: Path, runs_dir: Path, tmp_path: Path) -> None:
    count = tmp_path / "calls.txt"
    _run(suite, runs_dir, count)
    (suite / "fixtures" / "make-report" / "data.txt").write_text("a\nb\nc\nd\n")
    rerun = _run(suite, runs_dir, count)
    assert {parse_item_key(k).case_id for k in rerun} == {"make-report"} and len(rerun) == 8


def test_no_cache_bypasses(suite: Path, runs_dir: Path, tmp_path: Path) -> None:
    count = tmp_path / "calls.txt"
    _run(suite, runs_dir, count)
    assert len(_run(suite, runs_dir, count, use_cache=False)) == 32


def test_concurrency_and_backend_do_not_change_the_hash(
    suite: Path, runs_dir: Path, tmp_path: Path
) -> None:
    count = tmp_path / "calls.txt"
    _run(suite, runs_dir, count)
    assert _run(suite, runs_dir, count, concurrency=1) == set()


def test_concurrent_runs_share_the_cache_safely(
    suite: Path, runs_dir: Path, tmp_path: Path
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> evalkit.runner.RunResult:
        return run(
            suite,
            RunConfig(
                runs_dir=runs_dir, trials=3, progress=False, backend="threading", concurrency=2
            ),
        )

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, range(4)))
    frames = [evalkit.read_run(r.run_dir)[["item_key", "passed", "score"]] for r in results]
    for frame in frames[1:]:
        assert frame.reset_index(drop=True).equals(frames[0].reset_index(drop=True))
    entries = list((runs_dir / ".cache").rglob("*.json"))
    assert len(entries) == 48
    assert not list((runs_dir / ".cache").rglob("*.tmp")), "no torn entries left behind"
    import json

    for entry in entries:
        json.loads(entry.read_text())
