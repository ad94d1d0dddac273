"""The run manifest: one typed record for runs and imports, old manifests still readable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.errors import InputError
from evalkit.interop import import_results
from evalkit.results import (
    MANIFEST_FILE,
    MANIFEST_VERSION,
    Manifest,
    load_manifest,
)
from evalkit.runner import RunConfig, run

FIXTURE_RUNS = Path(__file__).resolve().parent.parent / "fixtures" / "runs"


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURE_RUNS.iterdir()))
def test_manifests_without_version_load_and_keep_every_key(name: str) -> None:
    on_disk = json.loads((FIXTURE_RUNS / name / MANIFEST_FILE).read_text(encoding="utf-8"))
    assert "version" not in on_disk
    manifest = load_manifest(FIXTURE_RUNS / name)
    assert manifest is not None and manifest.version == 1
    assert manifest.to_json() == {"version": 1, **on_disk}


def test_runner_writes_a_versioned_manifest_with_its_keys(tiny_suite: Path, runs_dir: Path) -> None:
    result = run(tiny_suite, RunConfig(runs_dir=runs_dir, run_id="r", progress=False, trials=1))
    on_disk = json.loads((result.run_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
    assert on_disk == result.manifest
    assert on_disk["version"] == MANIFEST_VERSION
    assert {
        "run_id", "created_at", "evalkit_version", "suite", "suite_path", "suite_git_sha",
        "dataset_version", "conditions", "providers", "trials", "seed", "concurrency", "backend",
        "filters", "plan_hash", "command_line", "status", "counts", "skill_texts",
    } <= set(on_disk)
    assert "source" not in on_disk and "tool" not in on_disk
    assert on_disk["status"] == "complete" and on_disk["counts"]["items"] == result.items
    for record in on_disk["conditions"].values():
        # self-load conditions also record the skill descriptions and bootstraps it was shown
        extra = {"descriptions", "bootstrap_hashes"} if record["mode"] == "self-load" else set()
        assert set(record) == {"mode", "variant", "skill_hashes"} | extra
    assert Manifest.model_validate(on_disk).to_json() == on_disk


def test_import_writes_the_same_model_with_its_own_keys(tmp_path: Path, runs_dir: Path) -> None:
    source = tmp_path / "r.csv"
    source.write_text("case_id,condition,passed\na,none,1\na,skill,0\nb,skill,1\n")
    result = import_results(source, "csv", "imp", runs_dir=runs_dir)
    on_disk = json.loads((runs_dir / "imp" / MANIFEST_FILE).read_text(encoding="utf-8"))
    assert on_disk == result.manifest
    assert on_disk["version"] == MANIFEST_VERSION
    assert on_disk["conditions"] == {
        "none": {"items": 1, "passed": 1},
        "skill": {"items": 2, "passed": 1},
    }
    assert on_disk["source"]["format"] == "csv" and on_disk["source"]["files"][0]["sha256"]
    assert "seed" not in on_disk and "plan_hash" not in on_disk and "filters" not in on_disk


def test_unknown_keys_survive_a_round_trip(tmp_path: Path) -> None:
    run_dir = tmp_path / "after"
    shutil.copytree(FIXTURE_RUNS / "after", run_dir)
    data = json.loads((run_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
    data["added_later"] = {"x": 1}
    (run_dir / MANIFEST_FILE).write_text(json.dumps(data), encoding="utf-8")
    manifest = load_manifest(run_dir)
    assert manifest is not None and manifest.to_json()["added_later"] == {"x": 1}


@pytest.mark.parametrize(
    ("change", "field"),
    [({"trials": "many"}, "trials"), ({"status": "done"}, "status"), ({"version": 99}, "version")],
)
def test_a_bad_manifest_names_file_and_field(
    tmp_path: Path, change: dict[str, object], field: str
) -> None:
    run_dir = tmp_path / "after"
    shutil.copytree(FIXTURE_RUNS / "after", run_dir)
    data = json.loads((run_dir / MANIFEST_FILE).read_text(encoding="utf-8")) | change
    (run_dir / MANIFEST_FILE).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_manifest(run_dir)
    assert str(run_dir / MANIFEST_FILE) in str(info.value)
    assert f"field '{field}'" in str(info.value)


def test_a_run_without_manifest_reads_as_none(tmp_path: Path) -> None:
    run_dir = tmp_path / "bare"
    shutil.copytree(FIXTURE_RUNS / "after", run_dir)
    (run_dir / MANIFEST_FILE).unlink()
    assert load_manifest(run_dir) is None
