"""The runner: parity across concurrency and backends, all-settled errors, run directory."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit.results import RESULT_SCHEMA, read_scores
from evalkit.runner import RunConfig, run
from tests.conftest import TINY


def _outcomes(run_dir: Path) -> pd.DataFrame:
    df = evalkit.read_run(run_dir)
    return df[["item_key", "passed", "score", "status"]].reset_index(drop=True)


@pytest.mark.parametrize(
    ("concurrency", "backend"), [(8, "loky"), (1, "threading"), (8, "threading"), (2, "loky")]
)
def test_outcomes_identical_whatever_concurrency_and_backend(
    runs_dir: Path, concurrency: int, backend: str
) -> None:
    base = run(
        TINY,
        RunConfig(
            runs_dir=runs_dir,
            run_id="serial",
            concurrency=1,
            trials=3,
            progress=False,
            use_cache=False,
        ),
    )
    other = run(
        TINY,
        RunConfig(
            runs_dir=runs_dir,
            run_id="other",
            concurrency=concurrency,
            backend=backend,
            trials=3,
            progress=False,
            use_cache=False,
        ),
    )
    a, b = _outcomes(base.run_dir), _outcomes(other.run_dir)
    assert len(a) == 4 * 4 * 3
    assert a["item_key"].is_monotonic_increasing
    pd.testing.assert_frame_equal(a, b)


def test_run_directory_contents(runs_dir: Path) -> None:
    result = run(TINY, RunConfig(runs_dir=runs_dir, run_id="r1", trials=2, progress=False))
    run_dir = result.run_dir
    assert {p.name for p in run_dir.iterdir()} >= {
        "manifest.json",
        "results.parquet",
        "scores.parquet",
        "events.jsonl",
        "transcripts",
    }
    assert not (run_dir / "parts").exists(), "parts are compacted at the end"
    df = evalkit.read_run(run_dir)
    assert list(df.columns[: len(RESULT_SCHEMA)]) == RESULT_SCHEMA.names
    assert df["item_key"].is_unique
    assert set(df["condition"]) == {"none", "self-load", "preloaded", "stale"}
    assert df["score"].between(0, 1).all()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["counts"]["items"] == len(df) == 32
    assert manifest["dataset_version"] == df["dataset_version"].iloc[0]
    assert set(manifest["conditions"]) == {"none", "self-load", "preloaded", "stale"}
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert events[0]["event"] == "run_started" and events[-1]["event"] == "run_finished"
    assert sum(e["event"] == "item_finished" for e in events) == 32
    scores = read_scores(run_dir)
    assert set(scores["item_key"]) == set(df["item_key"])
    total = scores[scores["component"] == "total"].set_index("item_key")["value"]
    assert (
        total.sort_index().to_numpy() == df.set_index("item_key")["score"].sort_index().to_numpy()
    ).all()
    # every transcript is on disk where the row says
    row = df.iloc[0]
    lines = (run_dir / row["transcript_path"]).read_text().splitlines()
    assert any(json.loads(line)["item_key"] == row["item_key"] for line in lines)


def test_all_settled_crashes_and_infra_errors_become_rows(runs_dir: Path) -> None:
    result = run(
        TINY,
        RunConfig(
            runs_dir=runs_dir,
            trials=3,
            progress=False,
            concurrency=2,
            retries=1,
            retry_backoff_s=0.0,
            provider_options={"crash_rate": 0.3},
        ),
    )
    df = evalkit.read_run(result.run_dir)
    crashed = df[df["status"] == "error"]
    assert 0 < len(crashed) < len(df), "some items crash, siblings continue"
    assert set(crashed["error_class"]) == {"RuntimeError"}
    assert not crashed["passed"].any()
    assert result.errors == len(crashed) and result.items == 48

    errs = run(
        TINY,
        RunConfig(
            runs_dir=runs_dir,
            trials=1,
            progress=False,
            retries=2,
            retry_backoff_s=0.0,
            case_ids=("sum-numbers",),
            provider_options={"error_rate": 1.0},
        ),
    )
    df = evalkit.read_run(errs.run_dir)
    assert (df["status"] == "error").all() and set(df["error_class"]) == {"server_error"}
    log = (errs.run_dir / "items.log").read_text()
    assert log.count("retry in") == 2 * len(df), "each item retried twice, then recorded"
    assert all(line.startswith("[prompt:sum-numbers:") for line in log.splitlines())


def test_timeout_is_a_failure_with_its_own_status(tmp_path: Path, runs_dir: Path) -> None:
    import shutil

    suite = tmp_path / "s"
    shutil.copytree(TINY, suite)
    path = suite / "cases" / "prompt.yaml"
    path.write_text(
        path.read_text().replace(
            "    tags: [smoke, safety]", "    tags: [smoke, safety]\n    budgets: {timeout_s: 0.2}"
        )
    )
    result = run(
        suite,
        RunConfig(
            runs_dir=runs_dir,
            trials=1,
            progress=False,
            retries=0,
            case_ids=("sum-numbers", "wait-server"),
            provider_options={"latency_s": 0.5},
            concurrency=4,
            backend="threading",
        ),
    )
    df = evalkit.read_run(result.run_dir).set_index("case_id")
    assert (df.loc["sum-numbers", "status"] == "timeout").all()
    assert (~df.loc["sum-numbers", "passed"]).all()
    assert (df.loc["wait-server", "status"] == "ok").all()


def test_workspaces_are_removed(
    runs_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    run(TINY, RunConfig(runs_dir=runs_dir, trials=1, progress=False, concurrency=1))
    assert list(scratch.iterdir()) == []


def test_existing_run_id_is_refused(runs_dir: Path) -> None:
    run(TINY, RunConfig(runs_dir=runs_dir, run_id="same", trials=1, progress=False))
    with pytest.raises(evalkit.errors.ConfigError, match="already exists"):
        run(TINY, RunConfig(runs_dir=runs_dir, run_id="same", trials=1, progress=False))


def test_cache_reuses_unchanged_items(runs_dir: Path) -> None:
    first = run(TINY, RunConfig(runs_dir=runs_dir, trials=2, progress=False))
    second = run(TINY, RunConfig(runs_dir=runs_dir, trials=2, progress=False))
    assert first.cache_hits == 0 and second.cache_hits == second.items
    a, b = _outcomes(first.run_dir), _outcomes(second.run_dir)
    pd.testing.assert_frame_equal(a, b)
    assert evalkit.read_run(second.run_dir)["cache_hit"].all()
